import type pg from 'pg';
import type { Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { Logger } from './logger.ts';
import type { Signals } from './signals.ts';

/** Everything the HTTP server and the worker need, built once by an entry point. */
export type Deps = {
  config: Config;
  pool: pg.Pool;
  db: Db;
  log: Logger;
  /** 32-byte key for AES-256-GCM encryption of app secrets. */
  secretsKey: Buffer;
  /** Post-commit notifications that keep this node's caches fresh. */
  signals: Signals;
};
