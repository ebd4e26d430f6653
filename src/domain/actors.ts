import type { Executor } from '../data/schema';
import {
  createWorker,
  deleteWorker,
  linkExternalId,
  workersByEmail,
  workersByExternalId,
  workersById,
  type WorkerRef,
} from '../data/workers';
import type { Schema } from '../contract/types';

export interface ActorScope {
  orgId: string;
  appId: string;
  connectionId: string;
}

/**
 * Resolves actors to workers inside one transaction, in order: workerId (this
 * organization only), else externalId (per app), else email (the organization's
 * directory, case-insensitive); otherwise a worker is created and linked to the
 * app's connection. What one actor resolves or creates is seen by the next, so a
 * batch that names a new person twice creates one worker.
 */
export class ActorResolver {
  private byId = new Map<string, WorkerRef>();
  private byExternalId = new Map<string, WorkerRef>();
  private byEmail = new Map<string, WorkerRef>();
  /** The actors prefetched, to look up again after a race was lost. */
  private actors: Schema<'Actor'>[] = [];

  constructor(
    private readonly db: Executor,
    private readonly scope: ActorScope,
  ) {}

  /** Loads every worker the actors name, in three queries, so resolving the batch needs no per-event lookups. */
  async prefetch(actors: Schema<'Actor'>[]): Promise<void> {
    this.actors = actors;
    const ids = actors.flatMap((a) => (a.workerId ? [a.workerId] : []));
    [this.byId] = await Promise.all([workersById(this.db, this.scope.orgId, [...new Set(ids)]), this.lookUpPeople()]);
  }

  /** Adds the workers of the prefetched actors without a workerId, by externalId and by email, to those known. */
  private async lookUpPeople(): Promise<void> {
    const people = this.actors.filter((a) => !a.workerId);
    const externalIds = people.flatMap((a) => (a.externalId ? [a.externalId] : []));
    const emails = people.flatMap((a) => (a.email ? [a.email] : []));
    const [byExternalId, byEmail] = await Promise.all([
      workersByExternalId(this.db, this.scope.appId, [...new Set(externalIds)]),
      workersByEmail(this.db, this.scope.orgId, emails),
    ]);
    for (const [externalId, worker] of byExternalId) this.byExternalId.set(externalId, worker);
    for (const [email, worker] of byEmail) this.byEmail.set(email, worker);
  }

  /** The worker a workerId names, if it is one of this organization's (call after prefetch). */
  knownWorkerId(workerId: string): boolean {
    return this.byId.has(workerId);
  }

  /**
   * The actors' workers, in order (see resolve). The missing ones are created and linked in one
   * order, by externalId then email, whatever the batch's: two batches that create the same people
   * then wait for each other on PostgreSQL instead of deadlocking. Ties keep the batch's order.
   */
  async resolveAll<T>(items: T[], actorOf: (item: T) => Schema<'Actor'>): Promise<Array<{ item: T; worker: WorkerRef }>> {
    const identity = (a: Schema<'Actor'>) => a.externalId ?? a.email?.toLowerCase() ?? '';
    const toCreate = items.map(actorOf).filter((a) => !a.workerId);
    // Code-unit order: a total order, the same in every instance.
    toCreate.sort((a, b) => (identity(a) < identity(b) ? -1 : identity(a) > identity(b) ? 1 : 0));
    for (const actor of toCreate) await this.resolve(actor);
    // Every actor is known now: these lookups reach no database.
    const resolved: Array<{ item: T; worker: WorkerRef }> = [];
    for (const item of items) resolved.push({ item, worker: await this.resolve(actorOf(item)) });
    return resolved;
  }

  /** The actor's worker, created if nothing matches. A workerId must have passed knownWorkerId. */
  async resolve(actor: Schema<'Actor'>): Promise<WorkerRef> {
    if (actor.workerId) {
      const known = this.byId.get(actor.workerId);
      if (!known) throw new Error(`workerId ${actor.workerId} was resolved without passing knownWorkerId`);
      return known;
    }
    const email = actor.email?.toLowerCase();

    const linked = actor.externalId ? this.byExternalId.get(actor.externalId) : undefined;
    if (linked) return linked;

    const listed = email ? this.byEmail.get(email) : undefined;
    if (listed) return this.link(actor, listed, false);

    // The contract's Actor has a workerId, an externalId or an email: here one of the last two.
    const displayName = actor.displayName ?? actor.email ?? actor.externalId;
    if (displayName === undefined) throw new Error('an actor without workerId, externalId or email passed the contract');
    const { worker, created } = await createWorker(this.db, { ...this.scope, displayName, email: actor.email });
    if (email) this.byEmail.set(email, worker);
    return this.link(actor, worker, created);
  }

  private async link(actor: Schema<'Actor'>, worker: WorkerRef, createdHere: boolean): Promise<WorkerRef> {
    if (!actor.externalId) return worker;
    const linked = await linkExternalId(this.db, this.scope.appId, actor.externalId, worker);
    // A concurrent request linked this externalId first: its worker wins and ours goes. That request committed
    // before our link returned (PostgreSQL made us wait for it) and most likely created the batch's other new
    // people too, so they are looked up again in one read: creating each anyway, only to find it linked and delete
    // ours, made every batch of a busy new organization redo the one before it (a 50-connection benchmark run).
    if (linked.id !== worker.id && createdHere) {
      await deleteWorker(this.db, worker.id);
      if (actor.email) this.byEmail.delete(actor.email.toLowerCase());
      await this.lookUpPeople();
    }
    this.byExternalId.set(actor.externalId, linked);
    return linked;
  }
}
