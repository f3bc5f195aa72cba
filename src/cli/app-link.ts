/** `.platform/app.json`: the app a folder is linked to after its first publish, and `--app`. */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CliError } from './output.ts';

/** `.platform/app.json` links a folder to its app after the first publish. */
export async function readLinkedApp(dir: string): Promise<string | undefined> {
  try {
    const { app_id } = JSON.parse(
      await readFile(path.join(dir, '.platform', 'app.json'), 'utf8'),
    ) as { app_id?: string };
    return typeof app_id === 'string' ? app_id : undefined;
  } catch {
    return undefined;
  }
}

export async function linkApp(dir: string, appId: string, apiUrl: string): Promise<void> {
  await mkdir(path.join(dir, '.platform'), { recursive: true });
  await writeFile(
    path.join(dir, '.platform', 'app.json'),
    JSON.stringify({ app_id: appId, api_url: apiUrl }, null, 2) + '\n',
  );
}

/** `--app`, else the app linked to the current folder. */
export async function resolveAppId(option: string | undefined, dir = '.'): Promise<string> {
  const id = option ?? (await readLinkedApp(dir));
  if (!id)
    throw new CliError(
      'Which app? This folder is not linked to one.',
      'no_app',
      undefined,
      'Pass --app <app_id>, or run the command in a folder you have published from.',
    );
  return id;
}
