import type { Config } from './config';
import type { OpenApiDocument } from './contract/document-source';
import { ContractValidators } from './contract/validators';
import type { Db } from './data/db';
import { Authenticator } from './domain/authenticator';

/** The long-lived collaborators a running app shares across requests. */
export interface Services {
  config: Config;
  db: Db;
  authenticator: Authenticator;
  /** Compiled from the configured document, so the active EventCategory set applies. */
  validators: ContractValidators;
}

export function createServices(config: Config, db: Db, contract: OpenApiDocument): Services {
  return {
    config,
    db,
    authenticator: new Authenticator(db, config.authCacheTtlSeconds),
    validators: new ContractValidators(contract),
  };
}
