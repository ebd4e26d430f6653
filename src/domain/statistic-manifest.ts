import type { Schema } from '../contract/types';
import type { ContractValidators, ItemValidator, SchemaIssue } from '../contract/validators';
import { allowedEventTypesOf, findApp } from '../data/admin';
import type { Db } from '../data/db';
import { manifestOf, replaceManifest } from '../data/statistics';
import { ApiError } from '../errors';
import { recordChange, type Actor } from './audit';
import { timeZoneOf } from '../data/organizations';
import { startRecompute } from './rollups';

/**
 * An app's statistic manifest. The schema rules are the contract's (StatisticList,
 * StatisticsPutRequest, compiled with the active EventCategory set); only the rules a
 * schema cannot express are written here: the id prefix, unique ids, the whitelist.
 */
export class StatisticManifests {
  private readonly checkList: ItemValidator;
  private readonly checkBody: ItemValidator;

  constructor(
    private readonly db: Db,
    private readonly validators: ContractValidators,
  ) {
    this.checkList = validators.item('StatisticList');
    this.checkBody = validators.item('StatisticsPutRequest');
  }

  read(appId: string): Promise<Schema<'StoredStatisticDefinition'>[]> {
    return manifestOf(this.db.kysely, appId);
  }

  /**
   * Replaces the whole manifest, or throws invalid_body and leaves the previous one untouched.
   * Every replacement, through the app's key or the console, goes through here.
   */
  async replace(
    app: { id: string; slug: string; orgId: string },
    body: unknown,
    actor: Actor,
  ): Promise<Schema<'StoredStatisticDefinition'>[]> {
    const definitions = this.definitionsOf(body);
    return this.db.transaction(async (trx) => {
      // Read inside the transaction: the whitelist in force is the one at the time of this PUT.
      const record = await findApp(trx, app.id);
      checkRules(definitions, `${app.slug}.`, record ? allowedEventTypesOf(record) : []);
      const stored = definitions.map((definition) => this.validators.withDefaults('StatisticDefinition', definition));
      // Past events count under the new manifest: recomputed from the stored events.
      await startRecompute(trx, app.orgId, (await timeZoneOf(trx, app.orgId)) ?? 'UTC');
      await replaceManifest(trx, app.id, stored);
      await recordChange(
        trx,
        actor,
        app.orgId,
        'app.manifest_replaced',
        { type: 'app', id: app.id },
        {
          statisticIds: stored.map((definition) => definition.id),
        },
      );
      return stored;
    });
  }

  /** The definitions of either body form, once they satisfy the contract's schemas. */
  private definitionsOf(body: unknown): Schema<'StatisticDefinition'>[] {
    const list: unknown = Array.isArray(body) ? body : isObject(body) ? body.statistics : undefined;
    // The list is judged before the body: the oneOf of the two body forms would bury
    // which definition broke which rule.
    const listIssue = Array.isArray(list) ? this.checkList(list) : undefined;
    if (listIssue) throw invalid(locate(listIssue, list as unknown[]));
    const bodyIssue = this.checkBody(body);
    if (bodyIssue) throw invalid(`the body ${bodyIssue.message}`);
    return list as Schema<'StatisticDefinition'>[];
  }
}

function checkRules(definitions: Schema<'StatisticDefinition'>[], prefix: string, allowedEventTypes: string[]): void {
  const firstIndexOf = new Map<string, number>();
  definitions.forEach((definition, index) => {
    const where = nameOf(index, definition);
    if (!definition.id.startsWith(prefix)) throw invalid(`${where}: id must start with "${prefix}" (the app's slug and a dot)`);
    const first = firstIndexOf.get(definition.id);
    if (first !== undefined) throw invalid(`${where}: id must be unique in the manifest; statistics[${first}] has it too`);
    firstIndexOf.set(definition.id, index);
    const offList = definition.sourceEventTypes.findIndex((type) => !allowedEventTypes.includes(type));
    if (offList >= 0) {
      const type = definition.sourceEventTypes[offList] as string;
      throw invalid(`${where}: sourceEventTypes[${offList}] "${type}" is not in the app's allowedEventTypes`);
    }
  });
}

/** Names the definition a schema issue of the list is in, e.g. `statistics[3] (id "a.x"): label must ...`. */
function locate(issue: SchemaIssue, list: unknown[]): string {
  const [index, ...field] = issue.path.split('/').slice(1);
  if (index === undefined) return `statistics ${issue.message}`;
  const at = field.map((key, i) => (/^\d+$/.test(key) ? `[${key}]` : i === 0 ? key : `.${key}`)).join('');
  return `${nameOf(Number(index), list[Number(index)])}: ${at ? `${at} ` : ''}${issue.message}`;
}

function nameOf(index: number, definition: unknown): string {
  const id = isObject(definition) && typeof definition.id === 'string' ? `id ${JSON.stringify(definition.id)}` : 'no id';
  return `statistics[${index}] (${id})`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): ApiError {
  return new ApiError('invalid_body', message);
}
