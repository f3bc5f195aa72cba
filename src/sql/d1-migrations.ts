/**
 * A D1 binding's migrations, applied at publish as `wrangler d1 migrations apply` applies them: the
 * project's `migrations_dir` (default `migrations/`) travels in the release as
 * `.platform/d1/<binding>/<file>.sql` (the CLI puts it there; never served), and before the release
 * can go live each file not yet recorded in the database's `d1_migrations` table runs, in name
 * order, in a transaction of its own with its record. A migration that fails stops there (those
 * before it stay applied, as wrangler leaves them) and the release does not go live, with the
 * reason.
 */
import type { Deps } from '../deps.ts';
import { type Bindings, D1_MIGRATIONS_PREFIX } from '../bindings/declared.ts';
import { databaseFor } from './d1.ts';

/** A migration may build an index over a large table: more time than an app's call gets. */
const MIGRATION_BUDGET_MS = 30_000;

const TABLE = `create table if not exists d1_migrations (
  id integer primary key autoincrement,
  name text unique,
  applied_at timestamp default current_timestamp not null
)`;

/** Applies what is pending; answers why the release cannot go live, or undefined. */
export async function applyD1Migrations(
  deps: Deps,
  appId: string,
  bindings: Bindings,
  files: { path: string; bytes: Uint8Array }[],
): Promise<string | undefined> {
  for (const [binding, name] of Object.entries(bindings.d1)) {
    const prefix = `${D1_MIGRATIONS_PREFIX}${binding}/`;
    const migrations = files
      .filter((f) => f.path.startsWith(prefix) && f.path.endsWith('.sql'))
      .map((f) => ({ name: f.path.slice(prefix.length), sql: new TextDecoder().decode(f.bytes) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (!migrations.length) continue;
    const database = await databaseFor(deps, appId, name);
    const applied = await database.run((db) => {
      db.exec(TABLE);
      return new Set(db.selectValues('select name from d1_migrations') as string[]);
    });
    for (const m of migrations) {
      if (applied.has(m.name)) continue;
      try {
        await database.run(
          (db) =>
            database.transaction(db, () => {
              db.exec(m.sql);
              db.exec({ sql: 'insert into d1_migrations (name) values (?)', bind: [m.name] });
            }),
          MIGRATION_BUDGET_MS,
        );
      } catch (e) {
        const why = String((e as Error).message).replace(
          /^SQLITE_[A-Z_]+: sqlite3 result code \d+: /,
          '',
        );
        return `the D1 migration ${m.name} of ${name} (${binding}) failed: ${why}`;
      }
    }
  }
  return undefined;
}
