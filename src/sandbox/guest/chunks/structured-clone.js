// structuredClone with the HTML algorithm (Date, Map, Set, RegExp, typed arrays, cycles) from
// @ungap/structured-clone's serializer (its default export would defer to a global structuredClone).
import { deserialize, serialize } from '@ungap/structured-clone';

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  platform.define('structuredClone', function structuredClone(value) {
    return deserialize(serialize(value, { lossy: false }));
  });
}
