/**
 * What app SQL may do: SQLite runs outside the QuickJS sandbox, so it gets only the statements and
 * parameters an app sends, and an authorizer refuses what would reach past the app's own
 * database: ATTACH and DETACH (the VFS opens no other file anyway), loading extensions, and the
 * PRAGMAs that change how the file is kept (journal, locking, page size...) or read other files.
 * Transactions are the call's own (one call is one transaction, as D1 has it), so BEGIN, COMMIT,
 * SAVEPOINT are refused too. Limits bound one statement's size and its parameters.
 */
import type { sqlite } from './page-vfs.ts';

type Sqlite3 = Awaited<ReturnType<typeof sqlite>>;

/** PRAGMAs an app may run: they read or change only what the SQL means, not where it is kept. */
const ALLOWED_PRAGMAS = new Set([
  'foreign_keys',
  'foreign_key_check',
  'foreign_key_list',
  'table_info',
  'table_xinfo',
  'table_list',
  'index_list',
  'index_info',
  'index_xinfo',
  'defer_foreign_keys',
  'case_sensitive_like',
  'recursive_triggers',
  'reverse_unordered_selects',
  'ignore_check_constraints',
  'legacy_alter_table',
  'quick_check',
  'integrity_check',
  'optimize',
  'user_version',
  'collation_list',
  'function_list',
  'pragma_list',
  'data_version',
]);

/** D1's limits: a statement of at most 100 KB, at most 100 bound parameters, a string, blob or row of at most 2 MB. */
export const LIMITS = { sqlLength: 100_000, variables: 100, length: 2_000_000 } as const;

/** Runs `work` with the platform's own statements allowed (a batch's BEGIN and COMMIT). */
export type Trusted = <T>(work: () => T) => T;

export function guard(s3: Sqlite3, db: { pointer?: unknown }): Trusted {
  let trusted = false;
  const { capi } = s3;
  const p = db.pointer as number;
  capi.sqlite3_limit(p, capi.SQLITE_LIMIT_ATTACHED, 0);
  capi.sqlite3_limit(p, capi.SQLITE_LIMIT_SQL_LENGTH, LIMITS.sqlLength);
  capi.sqlite3_limit(p, capi.SQLITE_LIMIT_VARIABLE_NUMBER, LIMITS.variables);
  // every database of the node shares one WebAssembly heap: no value may fill it
  capi.sqlite3_limit(p, capi.SQLITE_LIMIT_LENGTH, LIMITS.length);
  const rc = capi.sqlite3_set_authorizer(
    p,
    (_user: number, action: number, a: string | 0, b: string | 0) => {
      switch (action) {
        case capi.SQLITE_ATTACH:
        case capi.SQLITE_DETACH:
        case capi.SQLITE_TRANSACTION:
        case capi.SQLITE_SAVEPOINT:
          return trusted ? 0 : capi.SQLITE_DENY;
        case capi.SQLITE_PRAGMA: {
          const name = (a || '').toLowerCase();
          // the platform's own settings at open go through before the authorizer exists
          if (
            ALLOWED_PRAGMAS.has(name) &&
            (name !== 'foreign_keys' || !b || /^(on|off|0|1|true|false)$/i.test(b))
          )
            return 0;
          return capi.SQLITE_DENY;
        }
        case capi.SQLITE_FUNCTION:
          return /^load_extension$/i.test(b || '') ? capi.SQLITE_DENY : 0;
        default:
          return 0;
      }
    },
    0,
  );
  if (rc) throw new Error(`sqlite3_set_authorizer failed (${rc})`);
  return (work) => {
    trusted = true;
    try {
      return work();
    } finally {
      trusted = false;
    }
  };
}
