import type { CategorySetName } from '../contract/categories';
import { findAdministrator, findOrganization } from '../data/admin';
import type { Services } from '../services';
import { newId } from '../data/ids';
import * as administration from './administration';
import { AdminError } from './administration';
import { ingestctl } from './audit';
import { judgeBatch, storeBatch } from './event-ingest';
import { judgeSnapshot, storeSnapshot } from './snapshot-ingest';

/**
 * Demo data: a few apps, 50 workers and 30 days of their events and snapshots, stored through the
 * ingest API's own code path (the functions its handlers call: judgement, whitelist, quota, rollups),
 * so the console shows what a real organization would. Deterministic: the same seed, the same data.
 */

type Role = 'task' | 'talk' | 'code' | 'review' | 'ai';
// The configured EventCategory set decides which names the events carry.
const categories: Record<CategorySetName, Record<Role, string>> = {
  A: { task: 'project_management', talk: 'communication', code: 'code', review: 'code', ai: 'ai_tools' },
  B: { task: 'TASK_UPDATE', talk: 'COMMUNICATION', code: 'CODE_CHANGE', review: 'CODE_REVIEW', ai: 'AI_TASK' },
};

const firstNames = [
  'Dana',
  'Ravi',
  'Mei',
  'Lukas',
  'Amara',
  'Jonas',
  'Sofia',
  'Kenji',
  'Noor',
  'Mateo',
  'Ingrid',
  'Tariq',
  'Chloe',
  'Emeka',
  'Hana',
  'Pablo',
  'Zara',
  'Oskar',
  'Leila',
  'Tom',
  'Priya',
  'Felix',
  'Aisha',
  'Marco',
  'Yuki',
];
const lastNames = [
  'Whitfield',
  'Okafor',
  'Lindqvist',
  'Moreau',
  'Tanaka',
  'Haddad',
  'Novak',
  'Costa',
  'Fischer',
  'Sato',
  'Brennan',
  'Iyer',
];

/** mulberry32: a small seeded generator, so every demo has the same shape. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface DemoApp {
  slug: string;
  name: string;
  types: string[];
  /** Definitions as an app would PUT them: the manifest's own rules judge them. */
  manifest: (c: Record<Role, string>) => Record<string, unknown>[];
}

// Together the manifests use every aggregation (count, sumField with a dotted path, durationMinutes,
// rate, ratio of booleans and of numbers), every format, both owners and every SPACE dimension.
const apps: DemoApp[] = [
  {
    slug: 'helpdesk',
    name: 'Helpdesk',
    types: ['ticket.resolved', 'ticket.replied', 'ticket.escalated'],
    manifest: (c) => [
      {
        id: 'helpdesk.resolved',
        label: 'Tickets resolved',
        pillar: 'DELIVERY',
        format: 'number',
        aggregation: 'count',
        sourceEventTypes: ['ticket.resolved'],
        sourceEventCategories: [c.task],
        feedsDimensions: ['performance', 'activity'],
      },
      {
        id: 'helpdesk.csat',
        label: 'Satisfied customers',
        pillar: 'DELIVERY',
        format: 'percent',
        aggregation: 'ratio',
        valueField: 'satisfied',
        sourceEventTypes: ['ticket.resolved'],
        sourceEventCategories: [c.task],
        feedsDimensions: ['satisfaction'],
      },
      {
        id: 'helpdesk.reply_time',
        label: 'Time spent replying',
        pillar: 'COMMUNICATION',
        format: 'duration_minutes',
        aggregation: 'durationMinutes',
        sourceEventTypes: ['ticket.replied'],
        sourceEventCategories: [c.talk],
        feedsDimensions: ['communication', 'efficiency'],
      },
    ],
  },
  {
    slug: 'ci',
    name: 'CI pipeline',
    types: ['build.finished', 'review.submitted'],
    manifest: (c) => [
      {
        id: 'ci.builds',
        label: 'Builds per day',
        pillar: 'ACTIVITY',
        format: 'rate_per_day',
        aggregation: 'rate',
        sourceEventTypes: ['build.finished'],
        sourceEventCategories: [c.code],
        feedsDimensions: ['activity'],
      },
      {
        id: 'ci.lines',
        label: 'Lines changed',
        pillar: 'DELIVERY',
        format: 'number',
        aggregation: 'sumField',
        valueField: 'diff.lines',
        sourceEventTypes: ['build.finished'],
        sourceEventCategories: [c.code],
        feedsDimensions: ['performance'],
      },
      {
        id: 'ci.first_build',
        label: 'First build of the day',
        pillar: 'ACTIVITY',
        format: 'time_of_day',
        aggregation: 'ratio',
        valueField: 'minuteOfDay',
        sourceEventTypes: ['build.finished'],
        sourceEventCategories: [c.code],
        feedsDimensions: ['efficiency'],
      },
      {
        id: 'ci.reviews',
        label: 'Reviews submitted',
        pillar: 'REVIEW',
        format: 'number',
        aggregation: 'count',
        sourceEventTypes: ['review.submitted'],
        sourceEventCategories: [c.review],
        feedsDimensions: ['communication'],
      },
    ],
  },
  {
    slug: 'assistant',
    name: 'AI assistant',
    types: ['ai.task.completed'],
    manifest: (c) => [
      {
        id: 'assistant.tasks',
        label: 'AI tasks completed',
        pillar: 'KNOWLEDGE',
        format: 'number',
        aggregation: 'count',
        sourceEventTypes: ['ai.task.completed'],
        sourceEventCategories: [c.ai],
        feedsDimensions: ['efficiency'],
      },
      {
        id: 'assistant.minutes_saved',
        label: 'Minutes saved by the assistant',
        pillar: 'KNOWLEDGE',
        format: 'duration_minutes',
        aggregation: 'sumField',
        valueField: 'minutesSaved',
        sourceEventTypes: ['ai.task.completed'],
        sourceEventCategories: [c.ai],
        feedsDimensions: ['efficiency', 'satisfaction'],
      },
      {
        id: 'assistant.accepted',
        label: 'Suggestions accepted',
        pillar: 'KNOWLEDGE',
        format: 'number',
        aggregation: 'count',
        ownedBy: 'extractor',
        sourceEventTypes: ['ai.task.completed'],
        sourceEventCategories: [c.ai],
      },
    ],
  },
];

export interface DemoResult {
  organizationId: string;
  /** The owner made with a new organization (none when an existing one was filled). */
  ownerId?: string;
  apps: { id: string; slug: string }[];
  workers: number;
  events: number;
  snapshots: number;
}

/** Fills the organization (a new "Demo Org" with an owner when none is given) with 30 days of data. */
export async function fillWithDemoData(
  services: Pick<Services, 'db' | 'validate' | 'manifests' | 'authenticator' | 'config' | 'keptRules'>,
  options: { orgId?: string; ownerEmail?: string; workers?: number; days?: number; now?: Date; seed?: number } = {},
): Promise<DemoResult> {
  const { db } = services;
  const now = options.now ?? new Date();
  const rand = random(options.seed ?? 42);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)] as T;
  const c = categories[services.config.eventCategorySet];

  let orgId = options.orgId;
  let asEmail: string;
  let ownerId: string | undefined;
  if (orgId) {
    if (!(await findOrganization(db.kysely, orgId))) throw new AdminError(`no organization ${orgId}`);
    const administrator = await findAdministrator(db.kysely, orgId);
    if (!administrator) throw new AdminError(`organization ${orgId} has no owner or admin to create the demo apps`);
    asEmail = administrator.email;
  } else {
    orgId = (await administration.createOrganization(db, 'Demo Org', { apiEnabled: true, maxEventsPerMonth: null })).id;
    asEmail = options.ownerEmail ?? 'owner@demo.example';
    ownerId = (await administration.addMember(db, { orgId, email: asEmail, role: 'owner', name: 'Demo Owner' })).id;
  }

  const created = [];
  for (const app of apps) {
    const { id, slug } = await administration.createApp(db, { orgId, slug: app.slug, name: app.name, asEmail });
    await administration.changeAllowedEventTypes(db, id, app.types, true);
    await services.manifests.replace({ id, slug, orgId }, { statistics: app.manifest(c) }, ingestctl);
    const { key } = await administration.issueKey(db, id);
    created.push({ ...app, id, principal: await services.authenticator.authenticate(`Bearer ${key}`) });
  }

  const workerCount = options.workers ?? 50;
  const workers = Array.from({ length: workerCount }, (_, i) => {
    const first = firstNames[i % firstNames.length] as string;
    const last = lastNames[(i * 7) % lastNames.length] as string;
    return {
      externalId: `emp-${String(i + 1).padStart(3, '0')}`,
      displayName: `${first} ${last}`,
      email: `${first}.${last}${i}@demo.example`.toLowerCase(),
      pace: 0.5 + rand(),
    };
  });

  const days = options.days ?? 30;
  const dayStart = (back: number) => Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - back);
  const batches = new Map<string, unknown[]>();
  let events = 0;
  for (let back = days - 1; back >= 0; back--) {
    const start = dayStart(back);
    const weekend = [0, 6].includes(new Date(start).getUTCDay());
    for (const worker of workers) {
      const actor = { externalId: worker.externalId, email: worker.email, displayName: worker.displayName };
      const at = (minute: number) => new Date(Math.min(start + minute * 60_000, now.getTime() - 60_000)).toISOString();
      const count = Math.round((weekend ? 2 : 12) * worker.pace * (0.6 + rand() * 0.8));
      let firstBuild = true;
      for (let n = 0; n < count; n++) {
        const minute = 7 * 60 + Math.floor(rand() * 10 * 60);
        if (start + minute * 60_000 > now.getTime()) continue;
        const app = pick(created);
        const eventType = pick(app.types);
        const event: Record<string, unknown> = { eventType, actor, timestamp: at(minute) };
        if (eventType === 'ticket.resolved')
          Object.assign(event, {
            category: c.task,
            duration: 300 + Math.floor(rand() * 3600),
            metadata: {
              ticket: `OPS-${1000 + Math.floor(rand() * 9000)}`,
              satisfied: rand() < 0.82,
              priority: pick(['low', 'normal', 'high']),
            },
          });
        else if (eventType === 'ticket.replied')
          Object.assign(event, {
            category: c.talk,
            duration: 60 + Math.floor(rand() * 900),
            metadata: { ticket: `OPS-${1000 + Math.floor(rand() * 9000)}`, channel: pick(['email', 'chat', 'phone']) },
          });
        else if (eventType === 'ticket.escalated')
          Object.assign(event, { category: c.task, metadata: { ticket: `OPS-${1000 + Math.floor(rand() * 9000)}`, to: 'tier-2' } });
        else if (eventType === 'build.finished') {
          Object.assign(event, {
            category: c.code,
            duration: 120 + Math.floor(rand() * 900),
            metadata: {
              pipeline: pick(['api', 'web', 'worker']),
              status: rand() < 0.9 ? 'passed' : 'failed',
              diff: { lines: Math.floor(rand() * 400) },
              ...(firstBuild ? { minuteOfDay: minute } : {}),
            },
          });
          firstBuild = false;
        } else if (eventType === 'review.submitted')
          Object.assign(event, {
            category: c.review,
            duration: 300 + Math.floor(rand() * 1800),
            metadata: { pullRequest: Math.floor(rand() * 5000), verdict: pick(['approved', 'changes_requested', 'commented']) },
          });
        else {
          const accepted = rand() < 0.35;
          Object.assign(event, {
            category: c.ai,
            duration: 30 + Math.floor(rand() * 600),
            metadata: { task: pick(['summarize', 'draft_reply', 'explain_code', 'write_test']), minutesSaved: Math.floor(rand() * 25) },
            ...(accepted ? { statisticId: 'assistant.accepted' } : {}),
          });
        }
        const batch = batches.get(app.id) ?? [];
        batch.push(event);
        batches.set(app.id, batch);
      }
    }
  }

  for (const app of created) {
    const all = batches.get(app.id) ?? [];
    for (let i = 0; i < all.length; i += 500) {
      const ctx = { principal: app.principal, requestId: newId('req'), receivedAt: now };
      const judged = await judgeBatch(db, services.validate.event, all.slice(i, i + 500), ctx, services.keptRules, true);
      const outcome = await db.transaction((trx) => storeBatch(trx, judged));
      if (outcome.rejected.length) throw new AdminError(`demo event rejected: ${outcome.rejected[0]?.message}`);
      events += outcome.accepted.length;
    }
  }

  // One snapshot a day per worker and app with a strip (helpdesk and CI), at 17:30 UTC: the last is current.
  let snapshots = 0;
  for (const app of created.filter((a) => a.slug !== 'assistant')) {
    for (const worker of workers) {
      let level = 5 + rand() * 10;
      for (let back = days - 1; back >= 0; back--) {
        const timestamp = new Date(Math.min(dayStart(back) + (17 * 60 + 30) * 60_000, now.getTime() - 60_000)).toISOString();
        level = Math.max(0, level + (rand() - 0.5) * 4);
        const metrics =
          app.slug === 'helpdesk'
            ? {
                open_tickets: { value: Math.round(level), unit: 'count', label: 'Open tickets' },
                within_sla: { value: Math.round(80 + rand() * 20), unit: 'percentage', label: 'Within SLA' },
                first_reply: { value: Math.round(5 + rand() * 40), unit: 'minutes', label: 'First reply' },
                csat: { value: Math.round((3.5 + rand() * 1.5) * 10) / 10, unit: 'score', label: 'CSAT' },
                backlog_age_days: Math.round(rand() * 9),
              }
            : {
                builds: { value: Math.round(level), unit: 'count', label: 'Builds today' },
                success: { value: Math.round((0.8 + rand() * 0.2) * 100) / 100, unit: 'ratio', label: 'Success rate' },
                review_queue: { value: Math.round(rand() * 6), unit: 'count', label: 'Reviews waiting' },
                lead_time: { value: Math.round(30 + rand() * 240), unit: 'minutes', label: 'Lead time' },
              };
        const body = {
          snapshotType: app.slug === 'helpdesk' ? 'queue' : 'pipeline',
          actor: { externalId: worker.externalId },
          timestamp,
          metrics,
        };
        const rawBody = Buffer.from(JSON.stringify(body));
        const ctx = { principal: app.principal, requestId: newId('req'), receivedAt: now, rawBody };
        const judged = judgeSnapshot(services.validate.snapshot, body, ctx);
        await db.transaction((trx) => storeSnapshot(trx, judged));
        snapshots++;
      }
    }
  }

  return {
    organizationId: orgId,
    ...(ownerId ? { ownerId } : {}),
    apps: created.map(({ id, slug }) => ({ id, slug })),
    workers: workers.length,
    events,
    snapshots,
  };
}
