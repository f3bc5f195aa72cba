/** `platform init [dir] --template <name>`: a working starting point from src/cli/templates/<name>/. */
import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveTarget } from '../credentials.ts';
import { c, CliError } from '../output.ts';

const TEMPLATES_DIR = fileURLToPath(new URL('../templates/', import.meta.url));
export const TEMPLATES = {
  static: 'a static site',
  hono: 'a TypeScript Hono API with a data collection and a form',
  cron: 'a scheduled job that fetches a URL and stores what it got',
  webhook: 'a verified inbound webhook delivered to a job',
} as const;
export type TemplateName = keyof typeof TEMPLATES;
/** Dot-files in the repository would act on it (a .gitignore), so templates keep them without the dot. */
const DOT_FILES: Record<string, string> = {
  gitignore: '.gitignore',
  platformignore: '.platformignore',
  env: '.env',
};

async function templateFiles(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await templateFiles(dir, p)));
    else out.push(p);
  }
  return out.sort();
}

export async function init(
  dir = '.',
  opts: { template?: string; force?: boolean } = {},
): Promise<void> {
  const template = opts.template ?? 'static';
  if (!Object.hasOwn(TEMPLATES, template)) {
    throw new CliError(
      `There is no template "${template}".`,
      'invalid_request',
      undefined,
      `Templates: ${Object.entries(TEMPLATES)
        .map(([k, d]) => `${k} (${d})`)
        .join('; ')}.`,
    );
  }
  const root = path.resolve(dir);
  // a folder that already is an app would get a second template's files beside its own
  if (
    !opts.force &&
    (await access(path.join(root, 'manifest.platform.json')).then(
      () => true,
      () => false,
    ))
  ) {
    throw new CliError(
      `${dir === '.' ? 'This folder' : dir} is already an app (it has a manifest.platform.json).`,
      'invalid_request',
      undefined,
      `Start the new app in an empty folder (\`platform init <new-folder> --template ${template}\`), or add --force to add the template's missing files here (files that exist are kept).`,
    );
  }
  const name =
    path
      .basename(root)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'my-app';
  const values: Record<string, string> = {
    name,
    schema_url: `${(await resolveTarget()).apiUrl}/schemas/manifest.v0.json`,
    webhook_secret: `whsec_${randomBytes(32).toString('base64')}`,
  };
  const source = path.join(TEMPLATES_DIR, template);
  for (const rel of await templateFiles(source)) {
    const target = rel
      .split('/')
      .map((seg, i, all) => (i === all.length - 1 ? (DOT_FILES[seg] ?? seg) : seg))
      .join('/');
    const abs = path.join(root, target);
    if (
      await access(abs).then(
        () => true,
        () => false,
      )
    ) {
      process.stdout.write(`${c.yellow('kept')}    ${target} (already exists)\n`);
      continue;
    }
    const text = (await readFile(path.join(source, rel), 'utf8')).replace(
      /\{\{(\w+)\}\}/g,
      (whole, key: string) => values[key] ?? whole,
    );
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, text, target.endsWith('.mjs') ? { mode: 0o755 } : {});
    process.stdout.write(`${c.green('created')} ${target}\n`);
  }
  const cd = dir === '.' ? '' : `cd ${dir} && `;
  const install = template === 'hono' ? 'npm install && ' : '';
  process.stdout.write(
    `\nNext: ${c.bold(`${cd}${install}platform dev`)}   ${c.dim('(a local platform: every save goes live)')}\n`,
  );
  process.stdout.write(
    `  or: ${c.bold(`${cd}${install}platform publish`)}   ${c.dim('(to your platform, after `platform login`)')}\n`,
  );
}
