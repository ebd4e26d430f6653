import { Command, CommanderError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config';
import { migrate, openDatabase, type Db } from '../data/db';
import * as administration from '../domain/administration';
import { AdminError } from '../domain/administration';

export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
}

type Result = Record<string, unknown>;

function planLimit(value: string): number | null {
  if (value === 'unlimited') return null;
  if (!/^\d+$/.test(value)) throw new AdminError('--max-events-per-month must be a whole number or "unlimited"');
  return Number(value);
}

function apiSwitch(value: string): boolean {
  if (value !== 'enabled' && value !== 'disabled') throw new AdminError('--api must be enabled or disabled');
  return value === 'enabled';
}

function human(result: Result): string {
  return Object.entries(result)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('\n');
}

/** Runs one ingestctl command against the configured database; returns the exit status. */
export async function runIngestctl(argv: string[], io: CliIo): Promise<number> {
  let db: Db | undefined;
  const withDb = async (work: (db: Db) => Promise<Result>, text?: (r: Result) => string) => {
    const config = loadConfig(io.env);
    db = openDatabase(config.database);
    await migrate(db);
    const result = await work(db);
    io.out(program.opts().json ? JSON.stringify(result) + '\n' : (text ?? human)(result) + '\n');
  };

  const program = new Command('ingestctl')
    .description('Administer the ingest service: organizations, members, apps, keys, workers.')
    .option('--json', 'print exactly one JSON object on stdout')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError();

  const org = program.command('org').description('organizations and their plan');
  org
    .command('create')
    .requiredOption('--name <name>')
    .option('--max-events-per-month <n>', 'monthly event quota, or "unlimited"', 'unlimited')
    .addOption(new Option('--api <state>', 'developer API').choices(['enabled', 'disabled']).default('enabled'))
    .action((o) =>
      withDb((db) => administration.createOrganization(db, o.name, { apiEnabled: apiSwitch(o.api), maxEventsPerMonth: planLimit(o.maxEventsPerMonth) })),
    );
  org
    .command('set-plan')
    .requiredOption('--org <id>')
    .option('--max-events-per-month <n>', 'monthly event quota, or "unlimited"')
    .addOption(new Option('--api <state>', 'developer API').choices(['enabled', 'disabled']))
    .action((o) =>
      withDb((db) =>
        administration.setPlan(db, o.org, {
          apiEnabled: o.api === undefined ? undefined : apiSwitch(o.api),
          maxEventsPerMonth: o.maxEventsPerMonth === undefined ? undefined : planLimit(o.maxEventsPerMonth),
        }),
      ),
    );

  program
    .command('member')
    .description('members of an organization')
    .command('add')
    .requiredOption('--org <id>')
    .requiredOption('--email <email>')
    .addOption(new Option('--role <role>').choices(['owner', 'admin', 'member']).makeOptionMandatory())
    .option('--name <name>')
    .action((o) => withDb((db) => administration.addMember(db, { orgId: o.org, email: o.email, role: o.role, name: o.name })));

  const app = program.command('app').description("apps and their event-type whitelist");
  app
    .command('create')
    .requiredOption('--org <id>')
    .requiredOption('--slug <slug>')
    .requiredOption('--name <name>')
    .requiredOption('--as <email>', 'an owner or admin of the organization')
    .action((o) => withDb((db) => administration.createApp(db, { orgId: o.org, slug: o.slug, name: o.name, asEmail: o.as })));
  for (const [verb, allow] of [['allow', true], ['disallow', false]] as const) {
    app
      .command(verb)
      .requiredOption('--app <id>')
      .argument('<types...>', 'event types')
      .action((types: string[], o) => withDb((db) => administration.changeAllowedEventTypes(db, o.app, types, allow)));
  }

  const key = program.command('key').description('API keys');
  key
    .command('issue')
    .requiredOption('--app <id>')
    .option('--expires-at <iso>', 'ISO 8601 date-time with offset')
    .action((o) =>
      withDb(
        (db) => administration.issueKey(db, o.app, o.expiresAt),
        (r) => `${human(r)}\nThe key is shown only this once: store it now.`,
      ),
    );
  key
    .command('revoke')
    .requiredOption('--key <id>')
    .action((o) => withDb((db) => administration.revokeKey(db, o.key)));

  program
    .command('worker')
    .description("workers of an organization's directory")
    .command('add')
    .requiredOption('--org <id>')
    .requiredOption('--email <email>')
    .option('--name <name>')
    .action((o) => withDb((db) => administration.addWorker(db, { orgId: o.org, email: o.email, name: o.name })));

  program
    .command('quickstart')
    .description('create an organization, an owner, an app and a key, and print a curl line for ping')
    .action(() =>
      withDb(async (db) => {
        const result = await administration.quickstart(db);
        const port = loadConfig(io.env).port;
        const curl = `curl -s -H "Authorization: Bearer ${result.key}" http://localhost:${port}/api/v1/ingest/ping`;
        return { ...result, curl };
      }, (r) => `${human(r)}\n\nThe key is shown only this once. Try it (with the service running):\n  ${String(r.curl)}`),
    );

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof AdminError || err instanceof ConfigError) {
      io.err(`ingestctl: ${err.message}\n`);
      return 1;
    }
    io.err(`ingestctl: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await db?.close();
  }
}
