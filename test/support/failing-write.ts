import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { openDatabase, type Db } from '../../src/data/db';
import { sharedDatabase } from './database';

/** Fails every UPDATE of one table: a crash late in a request's transaction, after its other writes. */
class FailingUpdate implements KyselyPlugin {
  constructor(private readonly table: string) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as { kind: string; table?: { table: { identifier: { name: string } } } };
    if (node.kind === 'UpdateQueryNode' && node.table?.table.identifier.name === this.table)
      throw new Error(`injected failure updating ${this.table}`);
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** A second handle on the shared test database whose updates of `table` fail. Close it after use. */
export async function failingUpdates(table: string): Promise<Db> {
  const { config } = await sharedDatabase();
  return openDatabase(config, { plugins: [new FailingUpdate(table)] });
}
