/**
 * Source rewrites for QuickJS compiler bugs that valid code meets, applied to the bundle the CLI
 * builds. The engine in use refuses the whole module for them; each rewrite keeps the meaning.
 *
 * `for (x of <expr with yield>)` in a generator: QuickJS's bytecode for the loop's exits counts the
 * iterator as pushed while the head's `yield` runs, and the module fails to compile with
 * "InternalError: stack underflow (op=110, …)". The platform's own build carries a fix
 * (engine/patches/0005); the stock variant, which Deno and a node without `engine/dist/` run, does
 * not, so the rewrite stays. Minified superstruct, inside Next.js's server, has it. The head is evaluated once
 * before the loop, so it moves into a block-scoped temporary just before the statement (and its
 * labels): `{ let t = (<expr>); for (x of t) … }`.
 */
import { parse } from '@babel/parser';

type Node = { type: string; start: number; end: number; [k: string]: unknown };
type Edit = { stmtStart: number; stmtEnd: number; right: Node };

/** Cheap test before a parse: a `for (… of …` whose head may hold a `yield`. */
const MAYBE = /\bfor\s*(?:await\s*)?\([^;]*?\bof\b[^;]*?\byield\b/;

export function hoistYieldFromForOf(code: string): string {
  // a head holding another such loop (a generator defined in it) is done in a second pass
  for (let pass = 0, out = code; ; pass++) {
    const next = pass < 8 ? hoistOnce(out) : out;
    if (next === out) return out;
    out = next;
  }
}

function hoistOnce(code: string): string {
  if (!MAYBE.test(code)) return code;
  let ast: Node;
  try {
    ast = parse(code, {
      sourceType: 'module',
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
    }) as unknown as Node;
  } catch {
    return code; // what does not parse here is left for the engine to report
  }
  const edits: Edit[] = [];
  visit(ast, [], edits);
  if (!edits.length) return code;
  // an edit whose head holds another waits for the next pass, when the inner one is done
  const kept = edits.filter(
    (e) => !edits.some((o) => o !== e && o.stmtStart >= e.right.start && o.stmtEnd <= e.right.end),
  );
  kept.sort((a, b) => b.stmtStart - a.stmtStart);
  let out = code;
  kept.forEach((e, i) => {
    const name = `__forOfHead${code.length}_${kept.length - i}`;
    const head = out.slice(e.right.start, e.right.end);
    out =
      out.slice(0, e.stmtStart) +
      `{ let ${name} = (${head}); ` +
      out.slice(e.stmtStart, e.right.start) +
      name +
      out.slice(e.right.end, e.stmtEnd) +
      ' }' +
      out.slice(e.stmtEnd);
  });
  return out;
}

const isNode = (v: unknown): v is Node =>
  !!v && typeof v === 'object' && typeof (v as Node).type === 'string';
const FUNCTION = /Function|Method$|^ClassPrivateMethod$/;

function visit(node: Node, parents: Node[], edits: Edit[]): void {
  if (node.type === 'ForOfStatement' && holdsYield(node.right as Node)) {
    // the statement with its labels (`l: for (…)`), so `continue l` still names a loop
    let start = node.start;
    for (let i = parents.length - 1; i >= 0 && parents[i]!.type === 'LabeledStatement'; i--)
      start = parents[i]!.start;
    edits.push({ stmtStart: start, stmtEnd: node.end, right: node.right as Node });
  }
  parents.push(node);
  for (const key of Object.keys(node)) {
    if (key === 'loc' || key === 'extra' || key === 'comments' || key.endsWith('Comments'))
      continue;
    const v = node[key];
    if (Array.isArray(v)) for (const c of v) isNode(c) && visit(c, parents, edits);
    else if (isNode(v)) visit(v, parents, edits);
  }
  parents.pop();
}

/** A `yield` of this function in the expression (not one of a function nested in it). */
function holdsYield(node: Node): boolean {
  if (node.type === 'YieldExpression') return true;
  if (FUNCTION.test(node.type)) return false;
  for (const key of Object.keys(node)) {
    if (key === 'loc' || key === 'extra') continue;
    const v = node[key];
    if (Array.isArray(v)) {
      for (const c of v) if (isNode(c) && holdsYield(c)) return true;
    } else if (isNode(v) && holdsYield(v)) return true;
  }
  return false;
}
