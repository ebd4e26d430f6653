// Entries kept at most, about 150 bytes each: a few MB. Past it the cache starts over.
const MAX_ENTRIES = 50_000;

/**
 * PostgreSQL: the worker each app's externalIds are linked to, as the batch
 * statement (storeBatchesInOneStatement) found them. The statement takes an
 * externalId's worker from here rather than probing worker_external_ids for
 * the event: a probe cost PostgreSQL about 1.2 µs, and make bench's quick runs
 * spent 19-20 ms of its CPU per 1,000 events with the links against 21-24
 * without (three pairs in turn, docs/performance-history.md). An entry stays
 * true in every instance: a committed link is never changed or removed
 * (linkExternalIds only inserts, and the only worker ever deleted is one its
 * own transaction created and did not link, see ActorResolver), and apps are
 * never deleted.
 */
export class ExternalIdLinks {
  // By app, then externalId: a key joining the two was a new string to hash at every look-up (see WorkerCache).
  private readonly apps = new Map<string, Map<string, string>>();
  private size = 0;

  /** The worker the app's externalId is linked to, when known here. */
  workerOf(appId: string, externalId: string): string | undefined {
    return this.apps.get(appId)?.get(externalId);
  }

  /** The app's externalId is linked to `workerId`: a committed link, read by a statement. */
  learn(appId: string, externalId: string, workerId: string): void {
    let ofApp = this.apps.get(appId);
    if (ofApp?.has(externalId)) return;
    if (this.size >= MAX_ENTRIES) {
      this.apps.clear();
      this.size = 0;
      ofApp = undefined;
    }
    if (!ofApp) this.apps.set(appId, (ofApp = new Map()));
    ofApp.set(externalId, workerId);
    this.size += 1;
  }
}
