/**
 * `npm run test:deno`: the suite on Deno 2 (scripts/test.ts with TEST_RUNTIME=deno): every file's
 * harness builds the service on Deno, and the processes a test starts as an operator would
 * (`deno task start`, the admin command) run on Deno. Arguments filter files as `npm test`'s do.
 * Left out, each for its reason below: files about Node's own tooling, not about the service.
 * `deno task test` is the same run with the runner itself on Deno.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(new URL('..', import.meta.url).pathname);

export const LEFT_OUT: Record<string, string> = {
  'test/cli/cli.test.ts':
    'the platform CLI is a Node program; one case interrupts it with SIGINT, which Deno running it does not pass on as Node does',
  'test/cli/publish-secrets.test.ts':
    'the CLI at a terminal (a pty), started the way Node starts it: on Deno it would wait for a permission prompt',
  'test/cli/dev.test.ts': '`platform dev` (the CLI on Node) starts and rebuilds a local platform',
  'test/cli/dev-bindings.test.ts': '`platform dev` again',
  'test/cli/templates.test.ts':
    "a template's own Node script (send-test.mjs) run with node's flags",
  'test/foundation/bundle.test.ts':
    'the TypeScript launcher for Node 20 and 22 (Deno reads TypeScript itself)',
  'test/sandbox/worker-bundle.test.ts':
    "the sandbox thread's bundle and flags on Node (Deno runs the sources)",
  'test/cluster/cluster.solo.test.ts':
    '`npm run cluster` is a Node script starting Node processes; its Ctrl-C case fails when Deno runs it (open)',
  'test/runtime/cpu-time.solo.test.ts': "Node's per-thread CPU clock under a busy core",
};

const child = spawn(
  process.execPath,
  [
    path.join(ROOT, 'src/lib/run-typescript.mjs'),
    path.join(ROOT, 'scripts/test.ts'),
    ...process.argv.slice(2),
  ],
  {
    cwd: ROOT,
    stdio: 'inherit',
    env: {
      ...process.env,
      TEST_RUNTIME: 'deno',
      TEST_SKIP: [process.env.TEST_SKIP, ...Object.keys(LEFT_OUT)].filter(Boolean).join(','),
    },
  },
);
child.on('exit', (code) => process.exit(code ?? 1));
