import { dropTestSchemas, testDialect } from './database';
import { closeServices } from './fixtures';

export const mochaHooks = {
  beforeAll(this: Mocha.Context) {
    process.stdout.write(`  database under test: ${testDialect}\n`);
  },
  async afterEach() {
    await closeServices();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await dropTestSchemas();
  },
};
