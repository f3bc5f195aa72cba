/**
 * The direct guest-to-host dispatcher (src/sandbox/host-dispatch.ts) installs on the QuickJS
 * library this project uses, and a host function called through it behaves exactly as through
 * the library's own path: arguments and `this` arrive, a returned handle is the guest's value,
 * `{ error }` and a thrown Error are thrown in the guest, and an argument kept past its call is
 * refused rather than read after QuickJS freed it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  newQuickJSWASMModule,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSHandle,
} from 'quickjs-emscripten';
import { installDirectDispatch } from '../../src/sandbox/host-dispatch.ts';

const qjs = await newQuickJSWASMModule(RELEASE_SYNC);

/** A context with the same host functions, through the direct path or the library's; runs `code` and gives what it returns as JSON. */
function scenario(direct: boolean) {
  const ctx: QuickJSContext = qjs.newRuntime().newContext();
  if (direct)
    assert.ok(installDirectDispatch(ctx), 'the dispatcher finds the library internals it needs');
  let kept: QuickJSHandle | undefined;
  const fns: Record<
    string,
    (
      this: QuickJSHandle,
      ...a: QuickJSHandle[]
    ) => QuickJSHandle | { error: QuickJSHandle } | undefined
  > = {
    concat(...args) {
      return ctx.newString(
        `${ctx.typeof(this)}:${args.map((a) => ctx.dump(a) as unknown).join('|')}`,
      );
    },
    nothing() {
      return undefined;
    },
    refuse() {
      return { error: ctx.newError({ name: 'TypeError', message: 'refused' }) };
    },
    explode() {
      throw new Error('exploded');
    },
    keep(a) {
      kept = a;
      return ctx.undefined;
    },
    obj() {
      const o = ctx.newObject();
      ctx.setProp(o, 'n', ctx.newNumber(7));
      return o;
    },
    wrapped() {
      return { value: ctx.newString('wrapped') } as unknown as QuickJSHandle;
    },
  };
  for (const [name, fn] of Object.entries(fns)) {
    using f = ctx.newFunction(name, fn);
    ctx.setProp(ctx.global, name, f);
  }
  const run = (code: string): unknown => {
    const r = ctx.evalCode(`JSON.stringify((() => { ${code} })())`);
    if (r.error) {
      const e = ctx.dump(r.error) as unknown;
      r.error.dispose();
      return { evalError: e };
    }
    const out = JSON.parse(ctx.getString(r.value)) as unknown;
    r.value.dispose();
    return out;
  };
  return { ctx, run, kept: () => kept };
}

const CASES: Record<string, string> = {
  'arguments and this': `return [concat.call({}, 1, 'two', null, [3]), concat(), concat.call('s', 'x')];`,
  'no result is undefined': `return typeof nothing(1, 2);`,
  'an object result': `return obj();`,
  'a { value } result': `return wrapped();`,
  '{ error } is thrown': `try { refuse(); return 'no'; } catch (e) { return [e.name, e.message, e instanceof TypeError]; }`,
  'a thrown Error is thrown': `try { explode(); return 'no'; } catch (e) { return [e.name, e.message]; }`,
  'many calls in a loop': `let s = ''; for (let i = 0; i < 500; i++) s = concat(i); return s;`,
};

for (const [name, code] of Object.entries(CASES)) {
  test(`direct dispatch, ${name}: as the library's own path`, () => {
    const viaLibrary = scenario(false).run(code);
    const direct = scenario(true).run(code);
    assert.equal(direct, viaLibrary);
    assert.not.ok((direct as { evalError?: unknown })?.evalError, JSON.stringify(direct));
  });
}

test('an argument kept past its call is refused, not read after QuickJS freed it', () => {
  const s = scenario(true);
  s.run(`keep('a value'); return 1;`);
  const kept = s.kept();
  assert.ok(kept);
  assert.not.ok(kept.alive);
  assert.throws(() => kept.value, /not alive|Lifetime/i);
});

test.run();
