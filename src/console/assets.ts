/**
 * The console's client files: the stylesheet, the shared client library (`/assets/console.js`, an
 * ES module each page's script imports) and one script per page (`/assets/pages/<id>.js`), kept
 * as real files under `client/` (checked by `tsconfig.console.json` and the linter) and read once.
 * Everything goes through the public `/v0` API; the DOM is built with `textContent`, never
 * `innerHTML`, so nothing an API returns can become markup.
 */
import { readFileSync } from 'node:fs';
import { formatBytes } from '../lib/bytes.ts';
import { sameOriginPath } from '../lib/same-origin-path.ts';

const read = (file: string) => readFileSync(new URL(`./client/${file}`, import.meta.url), 'utf8');

const files = new Map<string, string>();
/** A file under `client/`, read the first time it is asked for. */
function once(file: string): string {
  let s = files.get(file);
  if (s === undefined) files.set(file, (s = read(file)));
  return s;
}

export const consoleCss = (): string => once('console.css');
export const consoleJs = (): string => once('console.js');
/** Makes the page's inert `<main>` usable once the page's script has run. */
export const readyJs = (): string => once('ready.js');
/** A page's script, or a module one imports (a page's id names its file under `client/pages/`). */
export const pageScript = (name: string): string => once(`pages/${name}.js`);
/** `/assets/bytes.js`: the server's own byte formatting, so the console and the CLI say sizes alike. */
export const BYTES_JS = `export ${formatBytes.toString()}\n`;
/** `/assets/same-origin-path.js`: the server's own test of a return path, so the console's pages decide alike. */
// assigned to its name: a bundler may rename the declaration it was written as
export const SAME_ORIGIN_PATH_JS = `export const sameOriginPath = ${sameOriginPath.toString()};\n`;
