import type { Db } from '../data/db';
import { ingestRules, type IngestRules } from '../data/usage';

/** An app's rules for judging a batch, and whether they were kept from an earlier batch rather than read for this one. */
export interface RulesForBatch {
  rules: IngestRules;
  kept: boolean;
}

const MAX_KEPT_APPS = 10_000;

/**
 * PostgreSQL: keeps each app's ingest rules between batches, so that a batch
 * of known workers costs one round trip, the statement that stores it. That
 * statement stores only if the rules it was judged by are still the stored
 * ones (storeBatchesInOneStatement): a change made anywhere applies to the next
 * batch, which is judged again. Only rules without a quota are kept: a quota's
 * count of used events changes with every batch. On SQLite, and with `fresh`,
 * the rules are read for the batch.
 */
export class KeptRules {
  private readonly byApp = new Map<string, IngestRules>();

  constructor(private readonly db: Db) {}

  async rulesFor(appId: string, month: string, fresh: boolean): Promise<RulesForBatch> {
    const kept = this.byApp.get(appId);
    if (kept && !fresh) return { rules: kept, kept: true };
    const rules = await ingestRules(this.db.kysely, appId, month);
    this.byApp.delete(appId);
    if (this.db.dialect === 'postgres' && rules.quota === null) {
      if (this.byApp.size >= MAX_KEPT_APPS) this.byApp.delete(this.byApp.keys().next().value as string);
      this.byApp.set(appId, rules);
    }
    return { rules, kept: false };
  }
}
