import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/** Fails every INSERT into one table: a crash in the middle of the request's transaction. */
export class FailingInsert implements KyselyPlugin {
  constructor(private readonly table: string) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node as { kind: string; into?: { table: { identifier: { name: string } } }; sqlFragments?: readonly string[] };
    const built = node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === this.table;
    const raw = node.kind === 'RawNode' && (node.sqlFragments?.[0] ?? '').trimStart().startsWith(`insert into ${this.table} `);
    if (built || raw) throw new Error(`injected failure inserting into ${this.table}`);
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
