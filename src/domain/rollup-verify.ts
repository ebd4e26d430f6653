import type { Db } from '../data/db';
import { organizationIds, timeZoneOf } from '../data/organizations';
import { allEvents, generationRows, manifestsOfOrg, outboxIds, readState, unpackCells } from '../data/rollups';
import { addStoredEvents, definitionsByApp } from './rollup-drain';
import { PartsAccumulator } from './rollup-rules';

export interface Verification {
  organizations: number;
  /** One line per cell that differs, or per organization that could not be verified. */
  differences: string[];
}

/**
 * Recomputes every rollup from the stored events and the current manifests
 * and time zone, and compares with the store. One consistent snapshot per
 * organization: the batches still waiting in the outbox are left out of the
 * recomputation, as they are still out of the store, so ingest may go on.
 * Days before `fromDay` are not compared: retention has swept their events or
 * their rollups (see firstWholeDay).
 */
export async function verifyRollups(db: Db, orgId?: string, fromDay?: string): Promise<Verification> {
  const compared = (day: string) => fromDay === undefined || day >= fromDay;
  const orgIds = orgId === undefined ? await organizationIds(db.kysely) : [orgId];
  const differences: string[] = [];
  for (const id of orgIds) {
    const snapshot = db.kysely.transaction();
    await (db.dialect === 'postgres' ? snapshot.setIsolationLevel('repeatable read') : snapshot).execute(async (trx) => {
      const state = await readState(trx, id);
      if (state?.target_generation !== null && state?.target_generation !== undefined) {
        differences.push(`${id}: recomputing (generation ${state.target_generation} not done yet): verify again once it is`);
        return;
      }
      const timeZone = (await timeZoneOf(trx, id)) ?? 'UTC';
      const waiting = await outboxIds(trx, id);
      const definitions = definitionsByApp(await manifestsOfOrg(trx, id));
      const expected = new PartsAccumulator();
      for await (const page of allEvents(trx, id)) {
        const stored = page.filter((event) => event.batch_id === null || !waiting.has(event.batch_id));
        addStoredEvents(expected, stored, definitions, timeZone);
      }
      if (state && state.time_zone !== timeZone) differences.push(`${id}: rollups in ${state.time_zone}, organization in ${timeZone}`);
      const stored = new Map(
        (state ? await generationRows(trx, id, state.generation) : []).map((r) => [
          `${r.statistic_id} ${r.day} ${r.worker_id} ${r.pillar}`,
          r,
        ]),
      );
      for (const cell of unpackCells(expected.take()).filter((c) => compared(c.day))) {
        const key = `${cell.statisticId} ${cell.day} ${cell.workerId} ${cell.pillar}`;
        const row = stored.get(key);
        stored.delete(key);
        const found = row ? `count ${row.count} sum ${row.sum} ratio ${row.numerator}/${row.denominator}` : 'nothing';
        if (
          !row ||
          row.count !== cell.count ||
          row.denominator !== cell.denominator ||
          !near(row.sum, cell.sum) ||
          !near(row.numerator, cell.numerator)
        ) {
          differences.push(
            `${id} ${key}: expected count ${cell.count} sum ${cell.sum} ratio ${cell.numerator}/${cell.denominator}, stored ${found}`,
          );
        }
      }
      for (const [key, row] of stored) {
        if (row.count !== 0 && compared(row.day)) differences.push(`${id} ${key}: expected nothing, stored count ${row.count}`);
      }
    });
  }
  return { organizations: orgIds.length, differences };
}

/** Sums of floating-point values depend on the order they were added in. */
function near(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}
