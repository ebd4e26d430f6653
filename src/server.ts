import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { migrate, openDatabase } from './data/db';
import { releaseAllClaims } from './data/idempotency';
import { DatabaseInUse, takeDatabaseLock, type DatabaseLock } from './data/sqlite-lock';
import { RetentionSweeper } from './domain/retention';
import { createHttpServer, reloadCertificate } from './http/http-server';
import { createMetricsServer } from './http/metrics';
import { createLogger } from './logger';
import { createServices } from './services';
import { applyV8Flags } from './v8-flags';

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
  applyV8Flags(config);
  const logger = createLogger(config.logLevel);
  let lock: DatabaseLock | undefined;
  if (config.database.kind === 'sqlite' && config.database.path !== ':memory:') {
    try {
      lock = takeDatabaseLock(config.database.path, 'the server');
    } catch (err) {
      if (!(err instanceof DatabaseInUse)) throw err;
      process.stderr.write(`Cannot start: ${err.message}. A SQLite database serves one instance.\n`);
      process.exit(3);
    }
  }
  const db = openDatabase(config.database);
  await migrate(db);
  if (db.dialect === 'sqlite') {
    // SQLite serves one instance: a claim still in progress belongs to a process that died, so its key is free now.
    const released = await releaseAllClaims(db.kysely);
    if (released) logger.warn({ released }, 'released Idempotency-Key claims of a previous run');
  }
  const services = createServices(config, db, { logger });
  const app = createApp(config, db, { logger, services });
  const scheme = config.tls ? 'https' : 'http';
  const server = createHttpServer(app, config, logger).listen(config.port, () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ port, database: config.database.kind, tls: Boolean(config.tls) }, `listening on ${scheme}://localhost:${port}`);
  });
  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : createMetricsServer().listen(config.metricsPort, () => {
          const { port } = metricsServer?.address() as AddressInfo;
          logger.info({ metricsPort: port }, `metrics on http://localhost:${port}/metrics`);
        });
  const retentionDays = { events: config.eventRetentionDays, rollups: config.rollupRetentionDays };
  const retention =
    retentionDays.events === undefined && retentionDays.rollups === undefined ? undefined : new RetentionSweeper(db, retentionDays, logger);
  retention?.start();
  services.rollups.start();

  const tls = config.tls;
  if (tls) {
    process.on('SIGHUP', () => {
      try {
        reloadCertificate(server as https.Server, tls);
        logger.info('TLS certificate reloaded');
      } catch (err) {
        logger.error({ err }, 'TLS certificate not reloaded: the current one stays');
      }
    });
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    metricsServer?.close();
    server.close(async () => {
      await retention?.close();
      await services.close();
      await db.close();
      lock?.release();
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
