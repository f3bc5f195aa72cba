/**
 * The console's client files: the stylesheet, the shared client library (`/assets/console.js`, an
 * ES module each page's script imports) and one script per page (`/assets/pages/<id>.js`), kept
 * as real files under `client/` (checked by `tsconfig.console.json` and the linter) and read once.
 * Everything goes through the public `/v0` API; the DOM is built with `textContent`, never
 * `innerHTML`, so nothing an API returns can become markup.
 */
import { readFileSync } from 'node:fs';
import { formatBytes } from '../lib/bytes.ts';

const read = (file: string) => readFileSync(new URL(`./client/${file}`, import.meta.url), 'utf8');

let css: string | undefined;
let js: string | undefined;
let ready: string | undefined;
const pages = new Map<string, string>();

export const consoleCss = (): string => (css ??= read('console.css'));
export const consoleJs = (): string => (js ??= read('console.js'));
/** Makes the page's inert `<main>` usable once the page's script has run. */
export const readyJs = (): string => (ready ??= read('ready.js'));
/** The script of the page with this id (a page's id names its file under `client/pages/`). */
export function pageScript(id: string): string {
  let s = pages.get(id);
  if (s === undefined) pages.set(id, (s = read(`pages/${id}.js`)));
  return s;
}
/** `/assets/bytes.js`: the server's own byte formatting, so the console and the CLI say sizes alike. */
export const BYTES_JS = `export ${formatBytes.toString()}\n`;
