// @ts-check
import { ago, api, boot, copyButton, el, failure, say, show, table, when } from '../console.js';
import { formatBytes } from '../bytes.js';

const STATUS = {
  queued: ['badge', 'queued'],
  running: ['badge', 'running'],
  succeeded: ['badge live', 'succeeded'],
  failed: ['badge bad', 'failed'],
};
const TRIGGER = { schedule: 'Schedule', console: 'Console', admin: 'Admin command' };
let timer = 0;

async function start(button) {
  button.disabled = true;
  const r = await api('POST', '/v0/operator/backups', {});
  button.disabled = false;
  if (!r.ok) return say(failure(r), true);
  say('Backup queued: the job worker takes it now.');
  await load();
}

async function load() {
  clearTimeout(timer);
  const r = await api('GET', '/v0/operator/backups');
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  const b = r.data;
  const runs = b.backups;
  const button = el('button', { type: 'button', onclick: () => start(button) }, 'Back up now');
  show(
    'content',
    el(
      'div',
      { class: 'row' },
      el(
        'p',
        {},
        'Backups go to ',
        el('code', {}, b.to),
        ', the newest ' + b.keep + ' kept. ',
        b.schedule
          ? ['Scheduled: ', el('code', {}, b.schedule), ' (UTC).']
          : 'No schedule: set PLATFORM_BACKUP_SCHEDULE (crontab fields) to take them by themselves.',
      ),
      button,
    ),
    runs.length
      ? table(runs, [
          ['When', (x) => [ago(x.queued_at), el('span', { class: 'sub' }, when(x.queued_at))]],
          [
            'Result',
            (x) => [
              el('span', { class: STATUS[x.status][0] }, STATUS[x.status][1]),
              x.error ? el('span', { class: 'sub error' }, x.error) : '',
            ],
          ],
          ['Size', (x) => (x.bytes === null ? '—' : formatBytes(x.bytes))],
          ['Rows', (x) => (x.rows === null ? '—' : x.rows.toLocaleString())],
          [
            'Started by',
            (x) => [TRIGGER[x.trigger], el('span', { class: 'sub' }, x.requested_by || '')],
          ],
          [
            'File',
            (x) =>
              x.location ? el('code', { title: x.location }, x.location.split('/').pop()) : '—',
          ],
        ])
      : el('p', { class: 'empty' }, 'No backup yet.'),
    el('h2', {}, 'Restore'),
    el(
      'p',
      {},
      'A backup restores into an empty data dir or database, with the service stopped there; then start the service on it.',
    ),
    el('pre', {}, el('code', {}, b.restore_command)),
    copyButton(b.restore_command, 'Copy command'),
  );
  // follow a backup under way to its result
  if (runs.some((x) => x.status === 'queued' || x.status === 'running'))
    timer = window.setTimeout(load, 1000);
}
if (await boot(true)) await load();
