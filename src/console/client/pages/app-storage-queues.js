// @ts-check
// The Storage tab's queue view: a queue's messages (state, attempts, the queue a dead letter
// failed in, a preview of text and JSON bodies), retried or purged by the roles that may write.
import { ago, api, el, failure, say, show, showMore, table } from '../console.js';
import { formatBytes } from '../bytes.js';

const q = encodeURIComponent;
const muted = (text) => el('span', { class: 'muted' }, text);

/**
 * @param {{ base: string, queue: string, canWrite: boolean, refresh: () => Promise<unknown> }} ctx
 * @param {any[]} [shown] messages of earlier pages
 * @param {string} [cursor]
 */
export async function queuePage(ctx, shown = [], cursor) {
  const { base, queue, canWrite } = ctx;
  const path = base + '/queues/' + q(queue);
  const r = await api('GET', path + '/messages?limit=50' + (cursor ? '&cursor=' + q(cursor) : ''));
  if (!r.ok) return show('browse', el('p', { class: 'error' }, failure(r)));
  const messages = shown.concat(r.data.messages);
  const dead = messages.some((m) => m.dead_lettered_from);
  const retry = async (ids) => {
    const done = await api('POST', path + '/retry', ids ? { message_ids: ids } : {});
    if (!done.ok) return say(failure(done), true);
    await ctx.refresh();
    say(
      done.data.retried +
        ' messages retried' +
        (done.data.returned
          ? ', ' + done.data.returned + ' sent back to the queue they failed in.'
          : '.'),
    );
  };
  const purge = async () => {
    if (!confirm('Delete every waiting message of ' + queue + '? This cannot be undone.')) return;
    const done = await api('POST', path + '/purge');
    if (!done.ok) return say(failure(done), true);
    await ctx.refresh();
    say(done.data.purged + ' messages of ' + queue + ' are deleted.');
  };
  const waiting = messages.some((m) => m.state !== 'in_flight');
  show(
    'browse',
    el('h2', {}, 'Queue ', el('code', {}, queue)),
    dead
      ? el(
          'p',
          { class: 'muted' },
          'Dead letters: messages that failed every retry in the queue named beside them. Fix the consumer, then send them back.',
        )
      : '',
    canWrite && waiting
      ? el(
          'p',
          { class: 'actions' },
          el(
            'button',
            { type: 'button', class: 'small', onclick: () => retry() },
            dead ? 'Send all back' : 'Retry all now',
          ),
          el('button', { type: 'button', class: 'small danger', onclick: purge }, 'Purge'),
        )
      : '',
    messages.length
      ? table(messages, [
          ['Message', (m) => el('code', { title: m.id }, m.id.slice(0, 8) + '…')],
          ['State', (m) => (m.state === 'in_flight' ? 'in flight' : m.state)],
          ['Attempts', (m) => String(m.attempts)],
          ['Sent', (m) => ago(m.sent_at)],
          [
            'Failed in',
            (m) => (m.dead_lettered_from ? el('code', {}, m.dead_lettered_from) : muted('—')),
          ],
          [
            'Body',
            (m) =>
              m.preview === null
                ? muted(m.content_type + ', ' + formatBytes(m.size))
                : el('code', { class: 'preview', title: m.preview }, m.preview.slice(0, 120)),
          ],
          [
            '',
            (m) =>
              canWrite && m.state !== 'in_flight'
                ? el(
                    'button',
                    { type: 'button', class: 'small', onclick: () => retry([m.id]) },
                    m.dead_lettered_from ? 'Send back' : 'Retry now',
                  )
                : '',
          ],
        ])
      : el('p', { class: 'empty' }, 'No messages are waiting in ' + queue + '.'),
    showMore(r.data.cursor, (c) => queuePage(ctx, messages, c)),
  );
}
