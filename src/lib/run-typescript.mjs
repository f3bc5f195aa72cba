// @ts-check
/**
 * `node src/lib/run-typescript.mjs <file.ts> [args]`: runs a TypeScript script (the admin command,
 * migrations, the test runner) the way `npm start` runs the service (launch.mjs). The script sees
 * `process.argv` as if Node had run it directly: its own path, then its arguments.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { launch } from './launch.mjs';

const [file] = process.argv.splice(2, 1);
if (!file) {
  console.error('usage: node src/lib/run-typescript.mjs <file.ts> [args]');
  process.exit(2);
}
process.argv[1] = path.resolve(file);
await launch(pathToFileURL(process.argv[1]));
