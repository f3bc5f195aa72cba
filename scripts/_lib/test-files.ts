import { readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * A checkout's test files, `test/**\/*.test.ts` relative to `root`, sorted: folders starting with
 * `_` (helpers) and `fixtures` (other people's code) hold none.
 */
export async function findTests(root: string, dir = 'test'): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory() && !entry.name.startsWith('_') && entry.name !== 'fixtures')
      out.push(...(await findTests(root, rel)));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) out.push(rel);
  }
  return out.sort();
}
