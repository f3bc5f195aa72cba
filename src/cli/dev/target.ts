/**
 * `--dev` on app commands (`platform jobs run --dev`): the development app `platform dev` made for
 * this folder, on the platform it runs against (its local service, or the `--api` one).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createApiFor, type Api } from '../api.ts';
import { resolveTarget } from '../credentials.ts';
import { CliError } from '../output.ts';
import { runningLocalService } from './local.ts';

export async function devTarget(dir = '.'): Promise<{ api: Api; appId: string }> {
  let links: Record<string, string> = {};
  try {
    links = JSON.parse(await readFile(path.join(dir, '.platform', 'dev.json'), 'utf8')) as Record<
      string,
      string
    >;
  } catch {
    // never run here
  }
  for (const [key, appId] of Object.entries(links)) {
    if (key.startsWith('local:')) {
      const running = await runningLocalService(key.slice('local:'.length));
      if (running)
        return { api: createApiFor({ apiUrl: running.apiUrl, apiKey: running.apiKey }), appId };
    }
  }
  const saved = await resolveTarget();
  const remote = Object.entries(links).find(
    ([key]) => !key.startsWith('local:') && key === saved.apiUrl,
  );
  if (remote) return { api: createApiFor(saved), appId: remote[1] };
  throw new CliError(
    'No `platform dev` is running for this folder.',
    'no_dev_app',
    undefined,
    'Start `platform dev` in this folder first (in another terminal).',
  );
}
