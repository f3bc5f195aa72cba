/**
 * A node holding one SQLite database, for the failover test: it opens the database named on its
 * command line, inserts rows one by one, and prints the id of each insert once it is acknowledged
 * (durable in Postgres), until it is killed.
 */
import { createDb, createPool } from '../../src/db/database.ts';
import { SqlDatabase } from '../../src/sql/database.ts';

const [id, nodeId] = process.argv.slice(-2) as [string, string];
const pool = createPool(process.env.TEST_DATABASE_URL!, 2);
const db = await SqlDatabase.open(createDb(pool), id, nodeId);
await db.run((d) => d.exec('create table if not exists acked (id integer primary key, v text)'));
console.log('ready');
for (let i = 1; ; i++) {
  await db.run((d) =>
    d.exec({ sql: 'insert into acked (id, v) values (?, ?)', bind: [i, 'x'.repeat(300)] }),
  );
  console.log(`acked ${i}`);
}
