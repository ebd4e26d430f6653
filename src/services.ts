import type { Config } from './config';
import type { OpenApiDocument } from './contract/document-source';
import { ContractValidators, type ItemValidator } from './contract/validators';
import type { Db } from './data/db';
import { Authenticator } from './domain/authenticator';

/** The long-lived collaborators a running app shares across requests. */
export interface Services {
  config: Config;
  db: Db;
  authenticator: Authenticator;
  /** Compiled once from the configured contract, so the active EventCategory set applies. */
  validators: ContractValidators;
  /** The per-item validators of the ingest endpoints, taken from `validators`. */
  validate: { event: ItemValidator; snapshot: ItemValidator };
}

export function createServices(config: Config, db: Db, doc: OpenApiDocument): Services {
  const validators = new ContractValidators(doc);
  return {
    config,
    db,
    authenticator: new Authenticator(db, config.authCacheTtlSeconds),
    validate: { event: validators.item('IngestEvent'), snapshot: validators.item('IngestSnapshot') },
    validators,
  };
}
