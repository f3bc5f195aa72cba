// @ts-check
import { ago, api, boot, el, failure, show, table, when } from '../console.js';
import { formatBytes } from '../bytes.js';
const beat = (x) =>
  x.live
    ? el('span', { class: 'badge live' }, 'live')
    : el('span', { class: 'badge bad' }, 'silent');
async function load() {
  const r = await api('GET', '/v0/operator/health');
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  const h = r.data;
  const j = h.jobs;
  show(
    'content',
    el('h2', {}, 'Nodes'),
    h.nodes.length
      ? table(h.nodes, [
          ['Node', (n) => [n.host + ' · pid ' + n.pid, el('span', { class: 'sub' }, n.node_id)]],
          ['Role', (n) => n.role],
          ['Heartbeat', (n) => [beat(n), el('span', { class: 'sub' }, when(n.beat_at))]],
          ['Started', (n) => ago(n.started_at)],
        ])
      : el('p', { class: 'empty' }, 'No node is beating.'),
    el('h2', {}, 'Job workers'),
    h.workers.length
      ? table(h.workers, [
          [
            'Worker',
            (w) => [w.host + ' · pid ' + w.pid, el('span', { class: 'sub' }, w.worker_id)],
          ],
          ['Heartbeat', (w) => [beat(w), el('span', { class: 'sub' }, when(w.beat_at))]],
          ['Started', (w) => ago(w.started_at)],
        ])
      : el('p', { class: 'empty' }, 'No job worker is beating.'),
    el(
      'div',
      { class: 'grid' },
      el(
        'div',
        {},
        el('h3', {}, 'Job queue'),
        el(
          'ul',
          { class: 'checks' },
          el(
            'li',
            {},
            j.ready +
              ' ready to run' +
              (j.oldest_ready_seconds !== null
                ? ' (oldest waiting ' + j.oldest_ready_seconds + ' s)'
                : ''),
          ),
          el('li', {}, j.running + ' running'),
          el('li', {}, j.scheduled + ' scheduled for later'),
          el('li', { class: j.failed ? 'bad' : '' }, j.failed + ' failed for good'),
        ),
      ),
      el(
        'div',
        {},
        el('h3', {}, 'Blob store'),
        el(
          'ul',
          { class: 'checks' },
          el(
            'li',
            {},
            'New bytes go to ' +
              (h.blobs.store === 's3' ? 'the bucket ' + h.blobs.bucket : 'Postgres'),
          ),
          h.blobs.by_location.map((b) =>
            el(
              'li',
              {},
              b.count.toLocaleString() + ' blobs in ' + b.stored_in + ', ' + formatBytes(b.bytes),
            ),
          ),
        ),
      ),
      el(
        'div',
        {},
        el('h3', {}, 'Postgres'),
        el(
          'ul',
          { class: 'checks' },
          el(
            'li',
            {},
            (h.postgres.embedded ? 'Embedded ' : 'External ') + 'Postgres ' + h.postgres.version,
          ),
          el('li', {}, formatBytes(h.postgres.database_bytes) + ' on disk'),
          el(
            'li',
            {},
            h.postgres.connections +
              " connections (this node's pool: " +
              h.postgres.pool.total +
              ', ' +
              h.postgres.pool.idle +
              ' idle, ' +
              h.postgres.pool.waiting +
              ' waiting)',
          ),
        ),
      ),
    ),
  );
}
if (await boot(true)) await load();
