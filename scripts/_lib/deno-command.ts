/**
 * How scripts and tests start Deno 2: the pinned version from the npm registry through npx (not a
 * devDependency: its other platforms' packages are not all resolvable here, which breaks `npm ci`),
 * or the binary DENO_BIN names.
 */
export const DENO_VERSION = '2.9.6';

export function denoCommand(): string[] {
  return process.env.DENO_BIN
    ? [process.env.DENO_BIN]
    : ['npx', '--yes', `--package=deno@${DENO_VERSION}`, '--', 'deno'];
}

/**
 * The environment for a Deno child: run from an `npx -p node@24` shell (CI's second pass), npm's own
 * settings name that package, not this one.
 */
export function denoEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([k]) => !/^npm_config_(package|call|yes)$/i.test(k)),
  );
}

/**
 * What `deno task start` passes (deno.json): V8's stack limit raised to what Node gives a worker
 * thread (4 MiB less V8's margin). Deno's workers run on 4 MiB thread stacks with V8's default
 * limit of 984 KiB, which a guest's deep recursion (QuickJS frames are WASM frames) reaches before
 * QuickJS's own limit does, poisoning the sandbox worker instead of failing the one call.
 */
export const DENO_V8_FLAGS = ['--v8-flags=--stack-size=3800'];
