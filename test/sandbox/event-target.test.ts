/**
 * EventTarget dispatch when listeners change the list they are called from, as Node answers: a
 * listener removing a later one, `once` listeners after such a removal (event-target-shim threw
 * there: src/sandbox/guest/library-fixes.ts), one adding another (not called in this dispatch), and
 * an AbortSignal whose abort listeners do the same.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const CASES = `
const out = [];
const t = new EventTarget();
const b = () => out.push('b');
const a = () => { out.push('a'); t.removeEventListener('x', b); };
t.addEventListener('x', a);
t.addEventListener('x', b, { once: true });
t.addEventListener('x', () => out.push('c'), { once: true });
t.addEventListener('x', () => out.push('d'));
t.dispatchEvent(new Event('x'));
t.dispatchEvent(new Event('x'));
const u = new EventTarget();
u.addEventListener('y', () => { out.push('first'); u.addEventListener('y', () => out.push('added')); }, { once: true });
u.dispatchEvent(new Event('y'));
u.dispatchEvent(new Event('y'));
const ac = new AbortController();
const later = () => out.push('later');
ac.signal.addEventListener('abort', () => { out.push('abort 1'); ac.signal.removeEventListener('abort', later); });
ac.signal.addEventListener('abort', later, { once: true });
ac.signal.addEventListener('abort', () => out.push('abort 3'), { once: true });
ac.abort();
out.push(ac.signal.aborted);
return out;`;

test('listeners that change the list during a dispatch answer as in Node', async () => {
  const expected = new Function(CASES)();
  const pool = new SandboxPool({
    workers: 1,
    limits: { cpuMs: 1000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
    hardKillMs: 5000,
  });
  try {
    const call = jsonCaller<unknown[]>(
      pool,
      () => `export default { fetch() { return Response.json((() => { ${CASES} })()); } };`,
    );
    assert.equal(await call('rel_event_target'), expected);
  } finally {
    await pool.close();
  }
});

test.run();
