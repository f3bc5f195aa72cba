/**
 * `src/db/schema.ts` and `src/db/tables/` (the Kysely types, written by hand) say what the migrated database has: the
 * same tables, the same columns, a column `| null` (or a nullable timestamp) exactly where the
 * database allows NULL, and `Generated<…>` only where the database has a default. Read with the
 * TypeScript compiler from the source, compared with `information_schema` of a migrated database.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import ts from 'typescript';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness } from '../_lib/harness.ts';

const h = await createHarness();

type Column = { nullable: boolean; generated: boolean };

/** Each table of the `Database` interface, with its columns as the types declare them. */
function declared(): Map<string, Map<string, Column>> {
  // `Database` in schema.ts; the tables and the column types they use in tables/*.ts
  const files = [
    'src/db/schema.ts',
    ...readdirSync('src/db/tables').map((f) => `src/db/tables/${f}`),
  ];
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  const aliases = new Map<string, ts.TypeNode>();
  for (const file of files)
    ts.createSourceFile(
      file,
      readFileSync(file, 'utf8'),
      ts.ScriptTarget.ES2022,
      true,
    ).forEachChild((n) => {
      if (ts.isInterfaceDeclaration(n)) interfaces.set(n.name.text, n);
      if (ts.isTypeAliasDeclaration(n)) aliases.set(n.name.text, n.type);
    });
  const text = (t: ts.TypeNode): string => {
    const own = t.getText();
    const alias = ts.isTypeReferenceNode(t) ? aliases.get(t.typeName.getText()) : undefined;
    return alias ? `${own} = ${text(alias)}` : own;
  };
  const tables = new Map<string, Map<string, Column>>();
  for (const m of interfaces.get('Database')!.members) {
    if (!ts.isPropertySignature(m) || !m.type) continue;
    const columns = new Map<string, Column>();
    const iface = interfaces.get(m.type.getText());
    assert.ok(iface, `Database.${m.name.getText()} names an interface of src/db/tables/`);
    for (const c of iface!.members) {
      if (!ts.isPropertySignature(c) || !c.type) continue;
      const t = text(c.type);
      columns.set(c.name.getText(), {
        nullable:
          /\bnull\b/.test(t.replace(/ColumnType<[^,]+,/, 'ColumnType<')) ||
          /^NullableTimestamp\b/.test(t),
        generated: /^Generated</.test(t),
      });
    }
    tables.set(m.name.getText(), columns);
  }
  return tables;
}

test('schema.ts declares exactly the tables and columns the migrations make, with their nullability and defaults', async () => {
  const { rows } = await sql<{
    table_name: string;
    column_name: string;
    is_nullable: 'YES' | 'NO';
    has_default: boolean;
  }>`select table_name, column_name, is_nullable, (column_default is not null or is_identity = 'YES') as has_default
     from information_schema.columns where table_schema = 'public'`.execute(h.deps.db);
  const actual = new Map<string, Map<string, { nullable: boolean; hasDefault: boolean }>>();
  for (const r of rows) {
    if (!actual.has(r.table_name)) actual.set(r.table_name, new Map());
    actual.get(r.table_name)!.set(r.column_name, {
      nullable: r.is_nullable === 'YES',
      hasDefault: r.has_default,
    });
  }
  const types = declared();
  assert.ok(types.size > 40, 'the types cover the schema');
  const problems: string[] = [];
  for (const [table, columns] of types) {
    const db = actual.get(table);
    if (!db) {
      problems.push(`${table}: declared, but no such table`);
      continue;
    }
    for (const [name, c] of columns) {
      const d = db.get(name);
      if (!d) problems.push(`${table}.${name}: declared, but no such column`);
      else {
        if (d.nullable !== c.nullable)
          problems.push(
            `${table}.${name}: the database ${d.nullable ? 'allows' : 'refuses'} NULL, the type ${c.nullable ? 'allows' : 'refuses'} it`,
          );
        if (c.generated && !d.hasDefault)
          problems.push(`${table}.${name}: Generated<> but the database has no default`);
      }
    }
    for (const name of db.keys())
      if (!columns.has(name)) problems.push(`${table}.${name}: in the database, not declared`);
  }
  const kept = new Set(['platform_migrations']); // the migration runner's own bookkeeping (db/migrate.ts)
  for (const table of actual.keys())
    if (!types.has(table) && !kept.has(table))
      problems.push(`${table}: a table schema.ts does not declare`);
  assert.equal(problems, []);
});

test.after(() => h.close());
test.run();
