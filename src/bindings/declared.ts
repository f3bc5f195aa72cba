/**
 * The bindings a release declares (Workers KV namespaces, for now), as the release carries them:
 * `.platform/bindings.json`, written by the CLI from the project's wrangler config. The contract's
 * publish body has no member for them (docs/decisions/bindings.md), so they travel as a release
 * file, are checked at publish (a malformed file refuses the publish), and are read by the origin
 * with the release's other files. A binding's data is the app's, by its name: a release that stops
 * declaring it keeps the data for the next one that does.
 */
import * as v from 'valibot';

export const BINDINGS_PATH = '.platform/bindings.json';

/** What app code reads it as (`env.CACHE`): a JavaScript identifier, as wrangler requires. */
const BindingName = v.pipe(
  v.string(),
  v.regex(
    /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/,
    'must be a JavaScript identifier of 1 to 64 characters',
  ),
);

const KvNamespace = v.strictObject({ binding: BindingName });

export const BindingsFile = v.strictObject({
  kv_namespaces: v.optional(v.pipe(v.array(KvNamespace), v.maxLength(64)), []),
});

export type Bindings = { kv: string[] };

/** What the guest needs to build `env`: each binding's name and kind. */
export type GuestBindings = Record<string, { type: 'kv'; name: string }>;

/** The file's bindings, or the problems that make it unreadable (by path within it). */
export function parseBindings(
  text: string,
): { ok: true; bindings: Bindings } | { ok: false; problems: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [`is not JSON: ${(err as Error).message}`] };
  }
  const r = v.safeParse(BindingsFile, json);
  if (!r.success)
    return {
      ok: false,
      problems: r.issues.map((i) => {
        const at = v.getDotPath(i);
        return at ? `${at}: ${i.message}` : i.message;
      }),
    };
  const kv = r.output.kv_namespaces.map((k) => k.binding);
  const twice = kv.find((b, i) => kv.indexOf(b) !== i);
  if (twice) return { ok: false, problems: [`binding ${twice} is declared twice`] };
  return { ok: true, bindings: { kv } };
}

export const NO_BINDINGS: Bindings = { kv: [] };

export function guestBindings(b: Bindings): GuestBindings {
  const out: GuestBindings = {};
  for (const name of b.kv) out[name] = { type: 'kv', name };
  return out;
}

/** What a release's files declare (a release that went live once was checked then). */
export function bindingsOfFiles(files: { path: string; bytes: Uint8Array }[]): Bindings {
  const f = files.find((x) => x.path === BINDINGS_PATH);
  if (!f) return NO_BINDINGS;
  const parsed = parseBindings(new TextDecoder().decode(f.bytes));
  return parsed.ok ? parsed.bindings : NO_BINDINGS;
}
