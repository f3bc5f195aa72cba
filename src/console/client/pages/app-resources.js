// @ts-check
import {
  api,
  appHeading,
  appIdOf,
  boot,
  copyButton,
  el,
  failure,
  may,
  show,
  table,
} from '../console.js';
import { formatBytes } from '../bytes.js';
const id = appIdOf();
/** Runs a job of the live release now (POST …/jobs/<name>/runs), with an optional JSON payload. */
function runNow(name) {
  const payload = el('input', {
    type: 'text',
    'aria-label': 'Payload for ' + name,
    placeholder: 'payload (JSON, optional)',
    size: 22,
  });
  const status = el('span', { role: 'status' });
  const button = el(
    'button',
    {
      type: 'button',
      class: 'small',
      onclick: async () => {
        let body = {};
        if (payload.value.trim()) {
          try {
            body = { payload: JSON.parse(payload.value) };
          } catch {
            status.className = 'error';
            status.textContent = 'The payload is not JSON.';
            return;
          }
        }
        button.disabled = true;
        const r = await api(
          'POST',
          '/v0/apps/' + id + '/jobs/' + encodeURIComponent(name) + '/runs',
          body,
        );
        button.disabled = false;
        status.className = r.ok ? '' : 'error';
        status.replaceChildren(
          r.ok
            ? el(
                'span',
                {},
                'Queued ',
                el('code', {}, r.data.job_id),
                '. ',
                el('a', { href: '/apps/' + id + '/events' }, 'See its events'),
              )
            : failure(r),
        );
      },
    },
    'Run now',
  );
  return el('div', { class: 'run-now' }, payload, ' ', button, ' ', status);
}
const fieldType = (f) =>
  typeof f === 'string'
    ? f
    : f.type +
      (f.values ? ' (' + f.values.join(', ') + ')' : '') +
      (f.collection ? ' → ' + f.collection : '');
const me = await boot(true);
if (me) {
  const [app, res] = await Promise.all([
    appHeading(id, 'resources'),
    api('GET', '/v0/apps/' + id + '/resources'),
  ]);
  if (!app.ok || !res.ok) show('content', el('p', { class: 'error' }, failure(app.ok ? res : app)));
  else {
    const of = (type) => res.data.resources.filter((r) => r.resource_type === type);
    const stored = res.data.usage['storage.bytes'];
    const parts = [
      el(
        'p',
        { id: 'app-storage' },
        'This app stores ',
        el('strong', {}, formatBytes(stored)),
        ' of data rows and files (counted against ',
        el('a', { href: '/account' }, "the account's storage"),
        ').',
      ),
    ];
    const data = of('data');
    if (data.length)
      parts.push(
        el('h2', {}, 'Collections'),
        table(data, [
          ['Name', (r) => el('code', {}, r.resource_name)],
          ['Rows', (r) => r.usage.rows.toLocaleString()],
          ['Size', (r) => formatBytes(r.usage.bytes)],
          [
            'Fields',
            (r) =>
              Object.entries(r.spec.fields || {}).map(([k, f]) =>
                el('div', {}, el('code', {}, k), ' ', fieldType(f)),
              ),
          ],
          [
            'Access',
            (r) =>
              'read: ' +
              (r.spec.access?.read || 'server_only') +
              ', write: ' +
              (r.spec.access?.write || 'server_only'),
          ],
          [
            'Indexes',
            (r) =>
              (r.spec.indexes || []).map((i) =>
                el(
                  'div',
                  {},
                  i.name + ' (' + i.fields.join(', ') + ')' + (i.unique ? ' unique' : ''),
                ),
              ),
          ],
        ]),
      );
    const files = of('files');
    if (files.length)
      parts.push(
        el('h2', {}, 'File stores'),
        table(files, [
          ['Name', (r) => el('code', {}, r.resource_name)],
          ['Files', (r) => r.usage.files.toLocaleString()],
          ['Size', (r) => formatBytes(r.usage.bytes)],
          ['Public', (r) => (r.spec.public ? 'yes' : 'no')],
          [
            'Largest file',
            (r) => (r.spec.max_file_size_bytes ? r.spec.max_file_size_bytes + ' bytes' : '—'),
          ],
          ['Types', (r) => (r.spec.allowed_content_types || ['any']).join(', ')],
        ]),
      );
    const jobs = of('jobs');
    if (jobs.length)
      parts.push(
        el('h2', {}, 'Jobs'),
        table(jobs, [
          ['Name', (r) => el('code', { class: 'nowrap' }, r.resource_name)],
          [
            'Runs',
            (r) =>
              r.spec.trigger === 'schedule'
                ? 'on schedule: ' + r.spec.schedule.replaceAll('_', ' ')
                : 'when enqueued',
          ],
          ['Attempts', (r) => String(r.spec.max_attempts || 3)],
          ...(may(me, app.data.account_id, 'jobs.run')
            ? [['Run', (r) => runNow(r.resource_name)]]
            : []),
        ]),
      );
    const hooks = of('webhooks');
    if (hooks.length)
      parts.push(
        el('h2', {}, 'Webhooks'),
        table(hooks, [
          ['Name', (r) => el('code', {}, r.resource_name)],
          [
            'URL for the provider',
            (r) => {
              const url = app.data.origin + '/_platform/webhooks/' + r.resource_name;
              return el('span', {}, el('code', {}, url), ' ', copyButton(url));
            },
          ],
          [
            'Provider',
            (r) => r.spec.provider + (r.spec.secret ? ' (secret ' + r.spec.secret + ')' : ''),
          ],
          ['Delivers to', (r) => (r.spec.deliver_to === 'job' ? 'job ' + r.spec.job : 'server')],
        ]),
      );
    for (const r of of('auth'))
      parts.push(
        el('h2', {}, 'App users'),
        el(
          'p',
          {},
          'Mode ' +
            r.spec.mode +
            (r.spec.roles?.length ? '; roles ' + r.spec.roles.join(', ') : '') +
            (r.spec.public_signup ? '; anyone can sign up' : '; by invitation') +
            (r.spec.email_verification ? '; e-mail verified' : ''),
        ),
      );
    for (const r of of('secrets'))
      parts.push(
        el('h2', {}, 'Required secrets'),
        el('p', {}, (r.spec.required || []).join(', ') || 'none'),
        el('a', { href: '/apps/' + id + '/secrets' }, 'Manage secrets'),
      );
    if (parts.length === 1)
      parts.push(
        el(
          'p',
          { class: 'empty' },
          app.data.live_release_id
            ? 'The live release declares no resources. Declare them in the manifest under "resources".'
            : 'The app is not published, so it declares no resources.',
        ),
      );
    show('content', ...parts);
  }
}
