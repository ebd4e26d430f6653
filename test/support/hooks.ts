import { dropTestSchemas, testDialect } from './database';

export const mochaHooks = {
  beforeAll(this: Mocha.Context) {
    process.stdout.write(`  database under test: ${testDialect}\n`);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await dropTestSchemas();
  },
};
