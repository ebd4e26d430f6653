import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { migrate, openDatabase } from './data/db';
import { releaseAllClaims } from './data/idempotency';
import { createHttpServer } from './http/http-server';
import { createLogger } from './logger';
import { createServices } from './services';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const db = openDatabase(config.database);
  await migrate(db);
  if (db.dialect === 'sqlite') {
    // SQLite serves one instance: a claim still in progress belongs to a process that died, so its key is free now.
    const released = await releaseAllClaims(db.kysely);
    if (released) logger.warn({ released }, 'released Idempotency-Key claims of a previous run');
  }
  const services = createServices(config, db, { logger });
  const app = createApp(config, db, { logger, services });
  const server = createHttpServer(app, config, logger).listen(config.port, () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ port, database: config.database.kind }, `listening on http://localhost:${port}`);
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    server.close(async () => {
      await services.close();
      await db.close();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
