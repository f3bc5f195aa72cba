/**
 * `npm run bench:analytics`: what analytics costs where it matters. A flush of 100k distinct keys
 * (1,000 apps × 100 paths, the capture's whole bound for a busy node) into the aggregate tables,
 * and `GET /v0/apps/<id>/analytics?range=90d` for an app with 90 days of busy aggregates (every
 * traffic combination, 100 paths and 50 referrers a day). Prints the timings; run on a quiet machine.
 */
import { sql } from 'kysely';
import { startBenchEnv } from './bench-env.ts';
import { median } from './_lib/stats.ts';
import { createAnalyticsCollector } from '../src/analytics/collector.ts';
import { analyticsReport } from '../src/analytics/report.ts';

const env = await startBenchEnv({ withServer: false });
const account = await env.deps.db.selectFrom('accounts').select('id').executeTakeFirstOrThrow();
const APPS = 1000;
const ids = Array.from({ length: APPS }, (_, i) => `benchapp${String(i).padStart(8, '0')}`);
await sql`insert into apps (id, account_id, name) select unnest(${ids}::text[]), ${account.id}, 'bench'`.execute(
  env.deps.db,
);

const flushes: number[] = [];
for (let round = 0; round < 3; round++) {
  const c = createAnalyticsCollector({ db: env.deps.db, log: env.deps.log, flushMs: 3_600_000 });
  for (const appId of ids)
    for (let p = 0; p < 100; p++)
      c.add({
        appId,
        status: 200,
        via: 'canonical',
        target: 'static',
        pathname: `/page-${round}-${p}`,
        host: 'x',
        referrer: `https://ref${p % 50}.example/`,
        userAgent: 'Mozilla/5.0 Firefox/130.0',
      });
  const keys = c.pending();
  const t = performance.now();
  await c.flush();
  flushes.push(performance.now() - t);
  console.log(
    `flush ${round + 1}: ${keys.toLocaleString('en-US')} keys in ${flushes.at(-1)!.toFixed(0)} ms`,
  );
  await c.close();
}

// 90 days of a busy app
const busy = ids[0]!;
await sql`insert into analytics_traffic (app_id, day, route_kind, target, status_bucket, bot, requests)
  select ${busy}, current_date - d, k, g, b, o, (random() * 10000)::int
  from generate_series(0, 89) d, unnest(array['canonical','slug','custom_domain']) k, unnest(array['static','server','not_found']) g,
       unnest(array['2xx','3xx','4xx','5xx']) b, unnest(array[true,false]) o
  on conflict do nothing`.execute(env.deps.db);
await sql`insert into analytics_paths (app_id, day, path, requests) select ${busy}, current_date - d, '/p/' || p, (random() * 1000)::int from generate_series(0, 89) d, generate_series(1, 100) p on conflict do nothing`.execute(
  env.deps.db,
);
await sql`insert into analytics_referrers (app_id, day, domain, requests) select ${busy}, current_date - d, 'r' || p || '.example', (random() * 1000)::int from generate_series(0, 89) d, generate_series(1, 50) p on conflict do nothing`.execute(
  env.deps.db,
);
await sql`analyze`.execute(env.deps.db);
const queries: number[] = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  await analyticsReport(env.deps, { id: busy }, 'internal', '90d');
  queries.push(performance.now() - t);
}
console.log(
  `\nflush of ~100k keys: median ${median(flushes).toFixed(0)} ms over ${flushes.length} flushes`,
);
console.log(
  `analytics for 90 days of a busy app (6,480 traffic rows, 9,000 path rows, 4,500 referrer rows): median ${median(queries).toFixed(1)} ms, max ${Math.max(...queries).toFixed(1)} ms over ${queries.length} reads`,
);
await env.close();
process.exit(0);
