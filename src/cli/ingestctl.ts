import { createInterface } from 'node:readline';
import { Command, CommanderError, Option } from 'commander';
import { loadConfig, type Config, type DatabaseConfig } from '../config';
import { backupSqlite, restoreSqlite } from '../data/backup';
import type { Plan } from '../data/admin';
import { migrate, openDatabase, type Db } from '../data/db';
import * as administration from '../domain/administration';
import { AdminError } from '../domain/administration';
import { fillWithDemoData } from '../domain/demo';
import { firstWholeDay } from '../domain/retention';
import { verifyRollups } from '../domain/rollup-verify';
import { inviteMember, setPassword } from '../domain/sessions';
import { createLogger } from '../logger';
import { createServices } from '../services';

export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
  /** Standard input, where secrets come from (never from arguments, which other users of the machine can see). */
  stdin?: NodeJS.ReadableStream;
}

type Result = Record<string, unknown>;

/** What a command is given: its options and arguments as parsed, and the configuration. */
interface Invocation {
  options: Record<string, string | undefined>;
  args: string[];
  config: Config;
  io: CliIo;
}

/** One ingestctl command: its words, how it is declared, and what it does. */
type CommandSpec = {
  /** The group and the verb, e.g. `org create`; a single word for a command without group. */
  name: string;
  description?: string;
  declare?: (command: Command) => Command;
  /** The text printed without --json; by default one `name: value` line per field. */
  text?: (result: Result) => string;
} & (
  | {
      /** What the command does with the configured database, opened and migrated for it. */ run: (
        db: Db,
        invocation: Invocation,
      ) => Promise<Result>;
      runOnFile?: never;
    }
  | {
      /** What a command that must not open the database (backup, restore) does instead. */ runOnFile: (
        invocation: Invocation,
      ) => Promise<Result>;
      run?: never;
    }
);

const groups: Record<string, string> = {
  org: 'organizations and their plan',
  member: 'members of an organization',
  app: 'apps and their event-type whitelist',
  key: 'API keys',
  worker: "workers of an organization's directory",
  rollups: 'the daily rollups of the statistic manifests',
};

const planOptions = (command: Command, defaults: boolean) =>
  command
    .addOption(new Option('--max-events-per-month <n>', 'monthly event quota, or "unlimited"').default(defaults ? 'unlimited' : undefined))
    .addOption(new Option('--api <state>', 'developer API').choices(['enabled', 'disabled']).default(defaults ? 'enabled' : undefined));

/** The changes to a plan that the options name. */
function planOf(options: Invocation['options']): Partial<Plan> {
  return {
    apiEnabled: options.api === undefined ? undefined : options.api === 'enabled',
    maxEventsPerMonth: options.maxEventsPerMonth === undefined ? undefined : planLimit(options.maxEventsPerMonth),
  };
}

const POSTGRES_TOOLS: Record<'backup' | 'restore', string> = {
  backup: 'pg_dump --format=custom --file=FILE "$DATABASE_URL" (or base backups with WAL archiving); see README, Operations',
  restore:
    'pg_restore --single-transaction --dbname="$DATABASE_URL" FILE into an empty database, with the service stopped; see README, Operations',
};

/** The SQLite file of the configuration; PostgreSQL has its own tools, which the message names. */
function sqliteFile(database: DatabaseConfig, verb: 'backup' | 'restore'): string {
  if (database.kind === 'sqlite') return database.path;
  throw new AdminError(`${verb} is for SQLite; for PostgreSQL use ${POSTGRES_TOOLS[verb]}`);
}

function planLimit(value: string): number | null {
  if (value === 'unlimited') return null;
  if (!/^\d+$/.test(value)) throw new AdminError('--max-events-per-month must be a whole number or "unlimited"');
  return Number(value);
}

function allowCommand(verb: 'allow' | 'disallow'): CommandSpec {
  return {
    name: `app ${verb}`,
    declare: (c) => c.requiredOption('--app <id>').argument('<types...>', 'event types'),
    run: (db, { options, args }) => administration.changeAllowedEventTypes(db, String(options.app), args, verb === 'allow'),
  };
}

const commands: CommandSpec[] = [
  {
    name: 'org create',
    declare: (c) => planOptions(c.requiredOption('--name <name>'), true),
    run: (db, { options: o }) =>
      administration.createOrganization(db, String(o.name), {
        apiEnabled: o.api === 'enabled',
        maxEventsPerMonth: planLimit(String(o.maxEventsPerMonth)),
      }),
  },
  {
    name: 'org set-plan',
    declare: (c) => planOptions(c.requiredOption('--org <id>'), false),
    run: (db, { options }) => administration.setPlan(db, String(options.org), planOf(options)),
  },
  {
    name: 'org set-timezone',
    description: "the IANA time zone the organization's days are counted in",
    declare: (c) => c.requiredOption('--org <id>').requiredOption('--time-zone <zone>', 'an IANA time zone name, e.g. Europe/Berlin'),
    run: async (db, { options }) => {
      const { id, timeZone } = await administration.updateOrganization(db, String(options.org), { timeZone: String(options.timeZone) });
      return { id, timeZone };
    },
  },
  {
    name: 'rollups verify',
    description: 'recompute every rollup from the stored events and compare with the store; exits non-zero on any difference',
    declare: (c) => c.option('--org <id>', 'only this organization'),
    run: async (db, { options, config }) => {
      const retained = firstWholeDay({ events: config.eventRetentionDays, rollups: config.rollupRetentionDays });
      const { organizations, differences } = await verifyRollups(db, options.org, retained);
      if (differences.length > 0) throw new AdminError(`${differences.length} difference(s):\n${differences.join('\n')}`);
      return { organizations, differences: 0 };
    },
  },
  {
    name: 'member add',
    declare: (c) =>
      c
        .requiredOption('--org <id>')
        .requiredOption('--email <email>')
        .addOption(new Option('--role <role>').choices(['owner', 'admin', 'member']).makeOptionMandatory())
        .option('--name <name>'),
    run: (db, { options: o }) =>
      administration.addMember(db, { orgId: String(o.org), email: String(o.email), role: String(o.role), name: o.name }),
  },
  {
    name: 'member set-password',
    description: "read the member's new password from the first line of standard input; ends the member's sessions",
    declare: (c) => c.requiredOption('--member <id>'),
    run: async (db, { options, io }) => {
      const password = await firstLine(io.stdin ?? process.stdin);
      if (password === undefined) throw new AdminError('no password on standard input (its first line is the password)');
      return setPassword(db, String(options.member), password);
    },
  },
  {
    name: 'member invite',
    description: 'a one-time link where the member sets a password (valid 72 hours; voids the previous one)',
    declare: (c) => c.requiredOption('--member <id>'),
    run: (db, { options, config }) => inviteMember(db, config, String(options.member)),
    text: (r) => `${String(r.url)}\nvalid until ${String(r.expiresAt)}; send it to the member only.`,
  },
  {
    name: 'app create',
    declare: (c) =>
      c
        .requiredOption('--org <id>')
        .requiredOption('--slug <slug>')
        .requiredOption('--name <name>')
        .requiredOption('--as <email>', 'an owner or admin of the organization'),
    run: async (db, { options: o }) => {
      const created = await administration.createApp(db, {
        orgId: String(o.org),
        slug: String(o.slug),
        name: String(o.name),
        asEmail: String(o.as),
      });
      return { id: created.id, slug: created.slug };
    },
  },
  allowCommand('allow'),
  allowCommand('disallow'),
  {
    name: 'key issue',
    declare: (c) => c.requiredOption('--app <id>').option('--expires-at <iso>', 'ISO 8601 date-time with offset'),
    run: (db, { options }) => administration.issueKey(db, String(options.app), options.expiresAt),
    text: (r) => `${human(r)}\nThe key is shown only this once: store it now.`,
  },
  {
    name: 'key revoke',
    declare: (c) => c.requiredOption('--key <id>'),
    run: (db, { options }) => administration.revokeKey(db, String(options.key)),
  },
  {
    name: 'worker add',
    declare: (c) => c.requiredOption('--org <id>').requiredOption('--email <email>').option('--name <name>'),
    run: (db, { options: o }) => administration.addWorker(db, { orgId: String(o.org), email: String(o.email), name: o.name }),
  },
  {
    name: 'backup',
    description: 'copy the SQLite database, online and consistent, while the service runs',
    declare: (c) => c.requiredOption('--to <file>', 'the backup file to create'),
    runOnFile: async ({ options, config }) => ({
      file: options.to,
      ...(await backupSqlite(sqliteFile(config.database, 'backup'), String(options.to))),
    }),
  },
  {
    name: 'restore',
    description: 'replace the SQLite database with a backup; refused while a server uses it',
    declare: (c) => c.requiredOption('--from <file>', 'a file made by ingestctl backup'),
    runOnFile: async ({ options, config }) => {
      const file = sqliteFile(config.database, 'restore');
      return { database: file, from: options.from, ...(await restoreSqlite(file, String(options.from))) };
    },
  },
  {
    name: 'quickstart',
    description: 'create an organization, an owner, an app and a key, and print a curl line for ping',
    run: async (db, { config }) => {
      const result = await administration.quickstart(db);
      const curl = `curl -s -H "Authorization: Bearer ${result.key}" http://localhost:${config.port}/api/v1/ingest/ping`;
      const invite = await inviteMember(db, config, result.ownerId);
      return { ...result, curl, consoleInvite: invite.url };
    },
    text: (r) =>
      `${human(r)}\n\nThe key is shown only this once. Try it (with the service running):\n  ${String(r.curl)}\n\n` +
      `Open the console: ${String(r.consoleInvite)}\n(a one-time link, valid 72 hours, where ${String(r.ownerEmail)} chooses a password)`,
  },
  {
    name: 'demo',
    description:
      'fill an organization (a new "Demo Org" by default) with 30 days of data: 3 apps with manifests, 50 workers, events, snapshots',
    declare: (c) => c.option('--org <id>', 'an existing organization (it needs an owner or admin)'),
    run: async (db, { options, config }) => {
      const services = createServices(config, db, { logger: createLogger('silent') });
      try {
        const result = await fillWithDemoData(services, { orgId: options.org });
        const invite = result.ownerId ? await inviteMember(db, config, result.ownerId) : undefined;
        return { ...result, ...(invite ? { consoleInvite: invite.url } : {}) };
      } finally {
        await services.close();
      }
    },
    text: (r) =>
      human({ ...r, apps: (r.apps as { slug: string }[]).map((a) => a.slug) }) +
      (r.consoleInvite ? `\n\nOpen the console as its owner: ${String(r.consoleInvite)}` : ''),
  },
];

function human(result: Result): string {
  return Object.entries(result)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('\n');
}

/** Runs one ingestctl command against the configured database; returns the exit status. */
export async function runIngestctl(argv: string[], io: CliIo): Promise<number> {
  let db: Db | undefined;
  const program = new Command('ingestctl')
    .description('Administer the ingest service: organizations, members, apps, keys, workers.')
    .option('--json', 'print exactly one JSON object on stdout')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError();

  for (const spec of commands) {
    const declared = (spec.declare ?? ((c: Command) => c))(commandFor(program, spec));
    declared.action(async () => {
      const config = loadConfig(io.env);
      const invocation = { options: declared.opts(), args: declared.args, config, io };
      let result: Result;
      if (spec.runOnFile) result = await spec.runOnFile(invocation);
      else {
        db = openDatabase(config.database);
        await migrate(db);
        result = await spec.run(db, invocation);
      }
      io.out(`${program.opts().json ? JSON.stringify(result) : (spec.text ?? human)(result)}\n`);
    });
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    io.err(`ingestctl: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await db?.close();
  }
}

/** The command's place under `program`: its group's subcommand (the group made on first use), or a top-level one. */
function commandFor(program: Command, spec: CommandSpec): Command {
  const [group, verb] = spec.name.split(' ') as [string, string | undefined];
  if (verb === undefined) return program.command(group).description(spec.description ?? '');
  const parent = program.commands.find((c) => c.name() === group) ?? program.command(group).description(groups[group] ?? '');
  return parent.command(verb);
}

/** The first line of a stream without its line ending; undefined when the stream ends before any line. */
async function firstLine(input: NodeJS.ReadableStream): Promise<string | undefined> {
  const lines = createInterface({ input, crlfDelay: Infinity, terminal: false });
  try {
    for await (const line of lines) return line;
    return undefined;
  } finally {
    lines.close();
  }
}
