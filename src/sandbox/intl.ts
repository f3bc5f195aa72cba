/**
 * `Intl` for app code, answered by Node's own ICU: the guest's Intl objects (chunk `intl`) keep
 * their constructor arguments and ask the host for each format, so results equal Node's exactly
 * and no locale data is loaded into the sandbox. Formatters are immutable, so one is made per
 * distinct (kind, locales, options) and shared, in a bounded LRU.
 */
import { LRUCache } from 'lru-cache';

const KINDS = {
  DateTimeFormat: Intl.DateTimeFormat,
  NumberFormat: Intl.NumberFormat,
  PluralRules: Intl.PluralRules,
  RelativeTimeFormat: Intl.RelativeTimeFormat,
  Collator: Intl.Collator,
  ListFormat: Intl.ListFormat,
  Segmenter: Intl.Segmenter,
  DisplayNames: Intl.DisplayNames,
} as const;
type Kind = keyof typeof KINDS;

/** What may be called on each kind (anything else is refused: no prototype walking from app input). */
const METHODS: Record<Kind, readonly string[]> = {
  DateTimeFormat: [
    'format',
    'formatToParts',
    'formatRange',
    'formatRangeToParts',
    'resolvedOptions',
  ],
  NumberFormat: ['format', 'formatToParts', 'formatRange', 'formatRangeToParts', 'resolvedOptions'],
  PluralRules: ['select', 'selectRange', 'resolvedOptions'],
  RelativeTimeFormat: ['format', 'formatToParts', 'resolvedOptions'],
  Collator: ['compare', 'resolvedOptions'],
  ListFormat: ['format', 'formatToParts', 'resolvedOptions'],
  Segmenter: ['segment', 'resolvedOptions'],
  DisplayNames: ['of', 'resolvedOptions'],
};

const formatters = new LRUCache<string, object>({ max: 2000 });

/** Values cross as JSON: a Date as `{$date: ms}`, a BigInt as `{$bigint: "digits"}`. */
function revive(v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as { $date?: number; $bigint?: string };
    if (typeof o.$date === 'number') return new Date(o.$date);
    if (typeof o.$bigint === 'string') return BigInt(o.$bigint);
  }
  return v;
}

/** The built-ins' locale methods, run by Node's own (their defaults differ from a bare DateTimeFormat's). */
function toLocale(method: string, args: unknown[], locales: unknown, options: unknown): unknown {
  const [a, b] = args;
  const l = locales as string | string[] | undefined;
  const o = options as object | undefined;
  switch (method) {
    case 'number':
      return typeof a === 'bigint'
        ? a.toLocaleString(l, o as BigIntToLocaleStringOptions)
        : (a as number).toLocaleString(l, o as Intl.NumberFormatOptions);
    case 'date':
      return (a as Date).toLocaleString(l, o as Intl.DateTimeFormatOptions);
    case 'dateOnly':
      return (a as Date).toLocaleDateString(l, o as Intl.DateTimeFormatOptions);
    case 'time':
      return (a as Date).toLocaleTimeString(l, o as Intl.DateTimeFormatOptions);
    case 'compare':
      return String(a).localeCompare(String(b), l, o as Intl.CollatorOptions);
    default:
      throw new TypeError(`${method} is not a locale method`);
  }
}

type IntlRequest = {
  kind: Kind;
  locales?: unknown;
  options?: unknown;
  method: string;
  args?: unknown[];
};

/** Answers one Intl request as JSON: `{ value }`, or `{ error: { name, message } }` for a RangeError or TypeError app code should see. */
export function answerIntl(requestJson: string): string {
  try {
    const req = JSON.parse(requestJson) as IntlRequest;
    if (req.kind === ('toLocale' as Kind))
      return JSON.stringify({
        value: toLocale(req.method, (req.args ?? []).map(revive), req.locales, req.options),
      });
    if (req.kind === ('supportedValuesOf' as Kind))
      return JSON.stringify({ value: Intl.supportedValuesOf(req.args?.[0] as never) });
    if (req.kind === ('getCanonicalLocales' as Kind))
      return JSON.stringify({ value: Intl.getCanonicalLocales(req.args?.[0] as never) });
    const Ctor = KINDS[req.kind];
    if (
      !Ctor ||
      (!METHODS[req.kind].includes(req.method) &&
        req.method !== 'supportedLocalesOf' &&
        req.method !== 'new')
    )
      throw new TypeError(`Intl.${req.kind}.${req.method} is not supported`);
    if (req.method === 'supportedLocalesOf')
      return JSON.stringify({
        value: (
          Ctor as unknown as { supportedLocalesOf(l: unknown, o: unknown): string[] }
        ).supportedLocalesOf(req.locales, req.options),
      });
    const key = JSON.stringify([req.kind, req.locales ?? null, req.options ?? null]);
    let f = formatters.get(key);
    if (!f) {
      f = new (Ctor as unknown as new (l: unknown, o: unknown) => object)(req.locales, req.options);
      formatters.set(key, f);
    }
    if (req.method === 'new')
      return JSON.stringify({ value: (f as { resolvedOptions(): unknown }).resolvedOptions() });
    const out = (f as Record<string, (...a: unknown[]) => unknown>)[req.method]!(
      ...(req.args ?? []).map(revive),
    );
    if (req.method === 'segment') {
      const segments = [
        ...(out as Iterable<{ segment: string; index: number; isWordLike?: boolean }>),
      ].map((s) => ({
        segment: s.segment,
        index: s.index,
        ...(s.isWordLike === undefined ? {} : { isWordLike: s.isWordLike }),
      }));
      return JSON.stringify({ value: segments });
    }
    return JSON.stringify({ value: out });
  } catch (err) {
    const e = err as Error;
    return JSON.stringify({
      error: { name: e instanceof RangeError ? 'RangeError' : 'TypeError', message: e.message },
    });
  }
}
