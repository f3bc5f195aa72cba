/** `platform resources`: what the live release declares, and what each collection and file store holds. */
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { formatBytes } from '../../lib/bytes.ts';
import { c, printJson, table } from '../output.ts';

type Spec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function resources(opts: { app?: string; json?: boolean }): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('GET /v0/apps/{app_id}/resources', { params: { app_id: appId } });
  if (opts.json) return printJson(r);
  const of = (type: string) => r.resources.filter((x) => x.resource_type === type);
  const out = [
    `${c.bold('Stored')}  ${formatBytes(r.usage['storage.bytes'])} of data rows and files ${c.dim("(counted against the account's storage: platform account)")}`,
  ];
  if (!r.resources.length) out.push(c.dim('The live release declares no resources.'));
  const section = (title: string, rows: Record<string, unknown>[], columns: string[]) =>
    rows.length && out.push('', c.bold(title), table(rows, columns));
  section(
    'Collections',
    of('data').map((x) => {
      const u = x.usage as { rows: number; bytes: number };
      const spec = x.spec as Spec;
      return {
        name: x.resource_name,
        rows: u.rows.toLocaleString('en-US'),
        size: formatBytes(u.bytes),
        read: spec.access.read,
        write: spec.access.write,
      };
    }),
    ['name', 'rows', 'size', 'read', 'write'],
  );
  section(
    'File stores',
    of('files').map((x) => {
      const u = x.usage as { files: number; bytes: number };
      return {
        name: x.resource_name,
        files: u.files.toLocaleString('en-US'),
        size: formatBytes(u.bytes),
        public: (x.spec as Spec).public ? 'yes' : 'no',
      };
    }),
    ['name', 'files', 'size', 'public'],
  );
  section(
    'Jobs',
    of('jobs').map((x) => ({
      name: x.resource_name,
      runs:
        (x.spec as Spec).trigger === 'schedule'
          ? `on schedule: ${String((x.spec as Spec).schedule).replaceAll('_', ' ')}`
          : 'when enqueued',
    })),
    ['name', 'runs'],
  );
  section(
    'Webhooks',
    of('webhooks').map((x) => ({
      name: x.resource_name,
      provider: (x.spec as Spec).provider,
      delivers_to: (x.spec as Spec).deliver_to === 'job' ? `job ${(x.spec as Spec).job}` : 'server',
    })),
    ['name', 'provider', 'delivers_to'],
  );
  for (const a of of('auth')) out.push('', `${c.bold('App users')}  mode ${(a.spec as Spec).mode}`);
  for (const s of of('secrets'))
    out.push(
      '',
      `${c.bold('Required secrets')}  ${((s.spec as Spec).required ?? []).join(', ') || 'none'}`,
    );
  process.stdout.write(out.join('\n') + '\n');
}
