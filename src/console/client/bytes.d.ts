// `/assets/bytes.js` is made from the server's own module (src/console/assets.ts); its type is that module's.
export { formatBytes } from '../../lib/bytes.ts';
