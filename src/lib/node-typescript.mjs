// @ts-check
/**
 * Whether this Node runs the TypeScript source itself: type stripping on by default and quiet (Node
 * 24 on; the source is erasable, see tsconfig.json). Elsewhere (Node 20, 22) tsx's loader reads it.
 * Plain JavaScript, because it decides how the TypeScript is read. Shared by the launcher of the
 * service and the CLI (launch.mjs) and the test runner.
 */
export const nodeStripsTypes =
  Boolean(/** @type {{ typescript?: string | false }} */ (process.features).typescript) &&
  Number(process.versions.node.split('.')[0]) >= 24;
