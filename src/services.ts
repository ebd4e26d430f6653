import type { Config } from './config';
import type { Db } from './data/db';
import { Authenticator } from './domain/authenticator';

/** The long-lived collaborators a running app shares across requests. */
export interface Services {
  config: Config;
  db: Db;
  authenticator: Authenticator;
}

export function createServices(config: Config, db: Db): Services {
  return { config, db, authenticator: new Authenticator(db, config.authCacheTtlSeconds) };
}
