/**
 * The import graph stays a graph: no module imports itself through others (`madge --circular`
 * over src/ and worker/, type-only imports included). A circle is how layers start pointing both
 * ways; the map of the code in the README says which way imports go.
 */
import madge from 'madge';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

test('no import circle in src/ or worker/', async () => {
  const graph = await madge(['src', 'worker'], { fileExtensions: ['ts'], tsConfig: 'tsconfig.json', detectiveOptions: { ts: { skipTypeImports: false } } });
  assert.ok(Object.keys(graph.obj()).length > 100, 'the graph covers the code');
  assert.equal(graph.circular(), [], 'import circles');
});

test.run();
