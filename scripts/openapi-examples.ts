/**
 * `npm run openapi:examples`: runs the test suite with example recording on, then writes
 * src/openapi/examples.json from the real responses the tests received: one body per
 * "operationId status" and one example per named record. Run it after adding or changing an
 * operation; test/contract/openapi.test.ts fails when an example is missing or no longer fits.
 *
 *   npm run openapi:examples                 every suite
 *   npm run openapi:examples -- foundation   only suites whose path contains a word (merged with what is there)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLES, EXAMPLES_FILE } from '../src/openapi/examples.ts';

const ROOT = path.resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const OUT = fileURLToPath(EXAMPLES_FILE);

type Recorded = {
  file: string;
  components: Record<string, unknown[]>;
  responses: Record<string, unknown>;
};

/** How much an example shows: filled leaves count, empty lists and nulls do not; long ones lose. */
function richness(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (Array.isArray(value)) return value.reduce<number>((n, v) => n + richness(v), 0);
  if (typeof value === 'object')
    return Object.values(value).reduce<number>((n, v) => n + richness(v), 0);
  return 1;
}

function pick(candidates: unknown[]): unknown {
  let best: unknown;
  let bestScore = -1;
  for (const c of candidates) {
    const size = JSON.stringify(c).length;
    const score = richness(c) - (size > 1500 ? 1000 : 0);
    if (score > bestScore) [best, bestScore] = [c, score];
  }
  return best;
}

function sorted<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

const dir = mkdtempSync(path.join(tmpdir(), 'platform-examples-'));
try {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/test.ts'), ...process.argv.slice(2)],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, PLATFORM_RECORD_EXAMPLES: dir },
    },
  );
  if (run.status !== 0)
    throw new Error('the test suite failed; examples are only taken from a green run');
  const runs: Recorded[] = readdirSync(dir)
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Recorded)
    .sort((a, b) => a.file.localeCompare(b.file));
  const components: Record<string, unknown[]> = {};
  // A full run starts afresh, so examples of removed operations go; a filtered run adds to what is there.
  const partial = process.argv.length > 2;
  const responses: Record<string, unknown> = partial ? { ...EXAMPLES.responses } : {};
  const fresh = new Set<string>();
  for (const r of runs) {
    for (const [name, list] of Object.entries(r.components))
      (components[name] ??= []).push(...list);
    for (const [key, body] of Object.entries(r.responses)) {
      if (!fresh.has(key)) responses[key] = body; // the first file (by path) that saw it wins
      fresh.add(key);
    }
  }
  const picked: Record<string, unknown> = partial ? { ...EXAMPLES.components } : {};
  for (const [name, list] of Object.entries(components)) picked[name] = pick(list);
  const text = `${JSON.stringify({ components: sorted(picked), responses: sorted(responses) }, null, 2)}\n`;
  writeFileSync(OUT, text);
  console.log(
    `wrote ${path.relative(ROOT, OUT)}: ${Object.keys(picked).length} records, ${Object.keys(responses).length} responses`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
