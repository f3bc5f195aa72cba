// `/assets/same-origin-path.js` is made from the server's own module (src/console/assets.ts); its type is that module's.
export { sameOriginPath } from '../../lib/same-origin-path.ts';
