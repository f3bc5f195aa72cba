/**
 * MessageChannel, MessagePort and MessageEvent as the HTML standard has them, compared with Node's
 * on the same code: messages cloned at the post and delivered later as tasks, in order; queued
 * until the port starts (setting onmessage starts it, addEventListener does not); a closed port
 * delivers nothing; the transfer list detaches what it moves; ports are not constructible.
 * React's scheduler posts to itself through one to yield a macrotask (react-dom/server.browser).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { onDeno } from '../../src/lib/on-deno.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const CASES = `
const out = {};
const t = async (name, f) => {
  try { out[name] = await f(); } catch (e) { out[name] = 'throws ' + e.name; }
};
const tick = () => new Promise((r) => setTimeout(r, 5));
await t('delivered later, in order, cloned', async () => {
  const { port1, port2 } = new MessageChannel();
  const seen = [];
  const sent = { n: 1 };
  const done = new Promise((res) => {
    port1.onmessage = (e) => { seen.push([e.type, e.data, e.data === sent, e instanceof MessageEvent, e.target === port1]); if (seen.length === 4) res(); };
  });
  port2.postMessage(sent); port2.postMessage('two'); port2.postMessage(null);
  seen.push('after posting');
  await done;
  port1.close();
  return seen;
});
await t('both directions', async () => {
  const c = new MessageChannel();
  const got = new Promise((res) => { c.port2.onmessage = (e) => { c.port2.postMessage(e.data * 2); }; c.port1.onmessage = (e) => res(e.data); });
  c.port1.postMessage(21);
  const v = await got; c.port1.close(); c.port2.close();
  return v;
});
await t('queued until start()', async () => {
  const { port1, port2 } = new MessageChannel();
  const seen = [];
  port1.addEventListener('message', (e) => seen.push(e.data));
  port2.postMessage('early');
  await tick();
  const before = seen.length;
  port1.start();
  await tick();
  port1.close();
  return [before, seen];
});
await t('a closed port delivers nothing', async () => {
  const { port1, port2 } = new MessageChannel();
  const seen = [];
  port1.onmessage = (e) => seen.push(e.data);
  port1.close();
  port2.postMessage('lost');
  await tick();
  return seen;
});
await t('onmessage reads back and clears', () => {
  const { port1 } = new MessageChannel();
  const f = () => {};
  port1.onmessage = f;
  const same = port1.onmessage === f;
  port1.onmessage = null;
  const cleared = port1.onmessage;
  port1.close();
  return [same, cleared];
});
await t('transfer detaches the buffer', async () => {
  const { port1, port2 } = new MessageChannel();
  const buf = new Uint8Array([7, 8]).buffer;
  const got = new Promise((res) => { port1.onmessage = (e) => res([...new Uint8Array(e.data)]); });
  port2.postMessage(buf, [buf]);
  const after = buf.byteLength;
  const v = await got; port1.close();
  return [after, v];
});
await t('an uncloneable message throws at the post', () => {
  const { port1, port2 } = new MessageChannel();
  try { port2.postMessage(() => 1); } finally { port1.close(); }
});
await t('ports cannot be made', () => new MessagePort());
await t('MessageEvent init', () => {
  const e = new MessageEvent('message', { data: { x: 1 }, origin: 'o', lastEventId: 'i' });
  return [e.type, e.data, e.origin, e.lastEventId, e.source, e.ports.length];
});
await t('MessageEvent defaults', () => { const e = new MessageEvent('x'); return [e.data, e.origin, e.lastEventId, e.source]; });
return out;`;

const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
  hardKillMs: 5000,
});

const MESSAGE = (data: unknown) => ['message', data, false, true, true];
/** The standard's answers; Node's agree but on what starts a port. */
const EXPECTED: Record<string, unknown> = {
  'delivered later, in order, cloned': [
    'after posting',
    MESSAGE({ n: 1 }),
    MESSAGE('two'),
    MESSAGE(null),
  ],
  'both directions': 42,
  'queued until start()': [0, ['early']],
  'a closed port delivers nothing': [],
  'onmessage reads back and clears': [true, null],
  'transfer detaches the buffer': [0, [7, 8]],
  'an uncloneable message throws at the post': 'throws DataCloneError',
  'ports cannot be made': 'throws TypeError',
  'MessageEvent init': ['message', { x: 1 }, 'o', 'i', null, 0],
  'MessageEvent defaults': [null, '', '', null],
};

test('channel messaging in the sandbox answers as the standard says', async () => {
  const call = jsonCaller<Record<string, unknown>>(
    pool,
    () =>
      `export default { async fetch() { return Response.json(await (async () => { ${CASES} })()); } };`,
  );
  assert.equal(await call('rel_message_channel'), EXPECTED);
});

test('Node answers the same, but that addEventListener starts its port', async () => {
  if (onDeno) return; // the reference is Node's
  const AsyncFunction = (async () => {}).constructor as new (
    body: string,
  ) => () => Promise<unknown>;
  const node = JSON.parse(JSON.stringify(await new AsyncFunction(CASES)()));
  assert.equal(node['queued until start()'], [1, ['early']]);
  node['queued until start()'] = EXPECTED['queued until start()'];
  assert.equal(node, EXPECTED);
});

test.after(() => pool.close());
test.run();
