/**
 * Files stay small enough to read whole: no source file in src/ or worker/ over 450 lines. Generated
 * data is not source (`src/openapi/examples.json`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const LIMIT = 450;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'templates' ? [] : sources(p);
    return /\.(ts|js|mjs)$/.test(name) ? [p] : [];
  });
}

test(`no source file in src/ or worker/ is over ${LIMIT} lines`, () => {
  const files = [...sources('src'), ...sources('worker')];
  assert.ok(files.length > 200, 'the walk finds the sources');
  const over = files
    .map((f) => ({ f, lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > LIMIT)
    .map(({ f, lines }) => `${f}: ${lines}`);
  assert.equal(over, [], 'split by concern (the README map names where each piece goes)');
});

test.run();
