/**
 * TextDecoder as the Encoding standard has it: UTF-8 streamed (`{ stream: true }` keeps a sequence
 * split between calls, and a BOM is stripped only at the start of a stream), every other encoding's
 * label and decoder (UTF-16, the single-byte and legacy multi-byte encodings, from @exodus/bytes),
 * and TextDecoderStream on top of it; `replacement`'s labels are refused, as the standard says. The answers are the standard's (Node 20's windows-1252 is wrong
 * at 0x80-0x9f, so Node is not the reference here).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const CASES = `
const out = {};
const t = async (name, f) => { try { out[name] = await f(); } catch (e) { out[name] = 'throws ' + e.name; } };
const u8 = (...b) => new Uint8Array(b);
await t('euro in three calls', () => { const d = new TextDecoder(); return [d.decode(u8(0xe2), { stream: true }), d.decode(u8(0x82), { stream: true }), d.decode(u8(0xac))].join('|'); });
await t('emoji split, then more', () => { const d = new TextDecoder(); return d.decode(u8(0xf0, 0x9f), { stream: true }) + d.decode(u8(0x98, 0x80, 0x21)); });
await t('BOM split at the start', () => { const d = new TextDecoder(); return d.decode(u8(0xef, 0xbb), { stream: true }) + d.decode(u8(0xbf, 0x41)); });
await t('BOM after the start is kept', () => { const d = new TextDecoder(); return escape(d.decode(u8(0x41), { stream: true }) + d.decode(u8(0xef, 0xbb, 0xbf))); });
await t('a new stream strips its BOM again', () => { const d = new TextDecoder(); d.decode(u8(0x41)); return d.decode(u8(0xef, 0xbb, 0xbf, 0x42)); });
await t('ignoreBOM keeps it', () => escape(new TextDecoder('utf-8', { ignoreBOM: true }).decode(u8(0xef, 0xbb, 0xbf))));
await t('a stream ending inside a sequence', () => { const d = new TextDecoder(); return escape(d.decode(u8(0xe2, 0x82), { stream: true }) + d.decode()); });
await t('fatal: the same', () => { const d = new TextDecoder('utf-8', { fatal: true }); d.decode(u8(0xe2, 0x82), { stream: true }); return d.decode(); });
await t('labels', () => ['  UTF8\\n', 'unicode-1-1-utf-8', 'latin1', 'ascii', 'utf-16', 'UTF-16BE', 'sjis', 'gb2312', 'x-mac-cyrillic'].map((l) => new TextDecoder(l).encoding));
await t('an unknown label', () => new TextDecoder('utf-9').encoding);
await t('windows-1252', () => new TextDecoder('windows-1252').decode(u8(0x80, 0x93, 0x41, 0x94, 0xe9)));
await t('iso-8859-2', () => new TextDecoder('iso-8859-2').decode(u8(0xa1, 0xb9)));
await t('utf-16le with its BOM', () => new TextDecoder('utf-16le').decode(u8(0xff, 0xfe, 0x41, 0, 0x3d, 0xd8, 0x00, 0xde)));
await t('utf-16be streamed', () => { const d = new TextDecoder('utf-16be'); return d.decode(u8(0, 0x41, 0), { stream: true }) + d.decode(u8(0x42)); });
await t('shift_jis', () => new TextDecoder('shift_jis').decode(u8(0x82, 0xa0, 0x93, 0xfa)));
await t('gbk', () => new TextDecoder('gbk').decode(u8(0xc4, 0xe3, 0xba, 0xc3)));
await t('euc-kr', () => new TextDecoder('euc-kr').decode(u8(0xc7, 0xd1)));
await t('big5', () => new TextDecoder('big5').decode(u8(0xa4, 0xa4)));
await t('the replacement encoding is no decoder', () => new TextDecoder('iso-2022-kr').encoding);
await t('TextDecoderStream, split and with a BOM', async () => {
  const s = new Blob([u8(0xef, 0xbb), u8(0xbf, 0xe2, 0x82), u8(0xac, 0x21)]).stream().pipeThrough(new TextDecoderStream());
  let text = ''; for await (const c of s) text += c; return text;
});
await t('TextDecoderStream utf-16le', async () => {
  const d = new TextDecoderStream('utf-16le'); const w = d.writable.getWriter(); w.write(u8(0x41, 0, 0x42)); w.write(u8(0)); w.close();
  let text = ''; for await (const c of d.readable) text += c; return [d.encoding, text];
});
return out;`;

const EXPECTED = {
  'euro in three calls': '||€',
  'emoji split, then more': '😀!',
  'BOM split at the start': 'A',
  'BOM after the start is kept': 'A%uFEFF',
  'a new stream strips its BOM again': 'B',
  'ignoreBOM keeps it': '%uFEFF',
  'a stream ending inside a sequence': '%uFFFD',
  'fatal: the same': 'throws TypeError',
  labels: [
    'utf-8',
    'utf-8',
    'windows-1252',
    'windows-1252',
    'utf-16le',
    'utf-16be',
    'shift_jis',
    'gbk',
    'x-mac-cyrillic',
  ],
  'an unknown label': 'throws RangeError',
  'windows-1252': '€“A”é',
  'iso-8859-2': 'Ąš',
  'utf-16le with its BOM': 'A😀',
  'utf-16be streamed': 'AB',
  shift_jis: 'あ日',
  gbk: '你好',
  'euc-kr': '한',
  big5: '中',
  'the replacement encoding is no decoder': 'throws RangeError',
  'TextDecoderStream, split and with a BOM': '€!',
  'TextDecoderStream utf-16le': ['utf-16le', 'AB'],
};

test('TextDecoder and TextDecoderStream answer as the Encoding standard says', async () => {
  const pool = new SandboxPool({
    workers: 1,
    limits: { cpuMs: 2000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 10_000 },
    hardKillMs: 10_000,
  });
  try {
    const call = jsonCaller<Record<string, unknown>>(
      pool,
      () =>
        `export default { async fetch() { return Response.json(await (async () => { ${CASES} })()); } };`,
    );
    assert.equal(await call('rel_text_decoder'), EXPECTED);
  } finally {
    await pool.close();
  }
});

test.run();
