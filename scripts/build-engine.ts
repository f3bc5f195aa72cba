/**
 * `npm run build:engine`: the platform's QuickJS engine, built from Debian's `quickjs` source package
 * with Debian's `emscripten`, into `engine/dist/` (committed, so `npm install` needs no compiler).
 *
 * 1. The source: `apt-get source` of quickjs at the pinned version, through a private apt
 *    configuration (its own lists and cache under `.data/engine-build/`) whose mirror is the one the
 *    machine's own apt sources name; the upstream tarball's sha256 is checked against the pin.
 * 2. The patches in `engine/patches/` (in name order), applied with `patch -p1`.
 * 3. emcc with the flags below over the C interface in `engine/` (one translation unit with the
 *    engine) and QuickJS's other sources, from inside the source folder so file names in the output
 *    are relative and the same on every machine.
 * 4. `engine/dist/quickjs.mjs` and `quickjs.wasm`, and `build.json`: every input's hash, the flags,
 *    the compiler's version and the outputs' hashes. `--check` builds into a scratch folder and
 *    fails unless the outputs are byte for byte the committed ones.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(new URL('..', import.meta.url).pathname);
const ENGINE = path.join(ROOT, 'engine');
const WORK = path.join(ROOT, '.data', 'engine-build');

const SOURCE = {
  package: 'quickjs',
  version: '2025.04.26-1',
  suite: 'trixie',
  tarball: 'quickjs_2025.04.26.orig.tar.xz',
  sha256: 'ec81da5b3249ed648dbc7df4a1654988910e66a118d9b71cb63534216efcfbbe',
  engineVersion: '2025-04-26',
};
const EMSCRIPTEN = { package: 'emscripten', version: '3.1.6~dfsg-5' };

const INTERFACE = [
  'interface.c',
  'interface-builtins.c',
  'interface-values.c',
  'interface-eval.c',
  'pre.js',
];
const ENGINE_SOURCES = ['dtoa.c', 'libregexp.c', 'libunicode.c', 'cutils.c'];

/** The compiler flags: the engine's own defines, then the module shape quickjs-emscripten-core loads. */
function flags(exported: string[]): string[] {
  return [
    '-O2',
    `-DCONFIG_VERSION="${SOURCE.engineVersion}"`,
    '-D_GNU_SOURCE',
    // QuickJS leaves its stack limit out under emscripten; the platform's stack cap needs it
    '-DCONFIG_STACK_CHECK',
    '-fwrapv',
    '-sMODULARIZE=1',
    '-sEXPORT_ES6=1',
    '-sEXPORT_NAME=QuickJSRaw',
    // the platform hands the module its bytes and memory; no fetching, no file system
    '-sENVIRONMENT=web',
    '-sIMPORTED_MEMORY=1',
    '-sALLOW_MEMORY_GROWTH=1',
    '-sMAXIMUM_MEMORY=4GB',
    '-sINITIAL_MEMORY=16MB',
    '-sTOTAL_STACK=8MB',
    '-sFILESYSTEM=0',
    '-sASSERTIONS=0',
    '-sDYNAMIC_EXECUTION=0',
    `-sEXPORTED_FUNCTIONS=${JSON.stringify(['_malloc', '_free', ...exported.map((f) => `_${f}`)])}`,
    '-sEXPORTED_RUNTIME_METHODS=["cwrap","UTF8ToString","stringToUTF8","lengthBytesUTF8"]',
    '--pre-js',
    'pre.js',
  ];
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const run = (cmd: string, args: string[], cwd?: string) =>
  execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** The mirror the machine's own apt sources name (deb822 or one-line form). */
function machineMirror(): string {
  const files = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'];
  for (const f of files) {
    if (!existsSync(f)) continue;
    const text = readFileSync(f, 'utf8');
    const deb822 = /^URIs:\s*(\S+)/m.exec(text);
    if (deb822) return deb822[1]!;
    const line = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+\S+\s+main/m.exec(text);
    if (line) return line[1]!;
  }
  throw new Error("no Debian mirror in this machine's apt sources");
}

function ensureEmscripten(): string {
  if (!has('emcc')) {
    const spec = `${EMSCRIPTEN.package}=${EMSCRIPTEN.version}`;
    if (process.getuid?.() !== 0)
      throw new Error(`emcc is not installed: run \`sudo apt-get install -y ${spec}\` and again`);
    console.log(`installing ${spec}…`);
    run('apt-get', ['install', '-y', '--no-install-recommends', spec]);
  }
  return run('emcc', ['--version']).split('\n')[0]!.trim();
}

/** The upstream tarball, fetched by package name and version, its checksum checked. */
function fetchSource(): string {
  const apt = path.join(WORK, 'apt');
  const tarball = path.join(WORK, 'source', SOURCE.tarball);
  if (existsSync(tarball) && sha256(readFileSync(tarball)) === SOURCE.sha256) return tarball;
  for (const d of ['lists/partial', 'cache/archives/partial', 'etc'])
    mkdirSync(path.join(apt, d), { recursive: true });
  mkdirSync(path.dirname(tarball), { recursive: true });
  writeFileSync(
    path.join(apt, 'etc', 'sources.list'),
    `deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${machineMirror()} ${SOURCE.suite} main\n`,
  );
  const options = [
    '-o',
    `Dir::Etc::sourcelist=${path.join(apt, 'etc', 'sources.list')}`,
    '-o',
    'Dir::Etc::sourceparts=-',
    '-o',
    `Dir::State::Lists=${path.join(apt, 'lists')}`,
    '-o',
    `Dir::Cache=${path.join(apt, 'cache')}`,
    '-o',
    'APT::Get::List-Cleanup=0',
    '-o',
    'APT::Sandbox::User=root',
  ];
  run('apt-get', [...options, 'update', '-qq']);
  // the .dsc's signature is Debian's; what is compiled is the tarball, whose hash is pinned here
  run(
    'apt-get',
    [
      ...options,
      '--allow-unauthenticated',
      'source',
      '--download-only',
      `${SOURCE.package}=${SOURCE.version}`,
    ],
    path.dirname(tarball),
  );
  const got = sha256(readFileSync(tarball));
  if (got !== SOURCE.sha256)
    throw new Error(`${SOURCE.tarball}: sha256 ${got}, expected ${SOURCE.sha256}`);
  return tarball;
}

function patches(): string[] {
  const dir = path.join(ENGINE, 'patches');
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.patch'))
        .sort()
    : [];
}

/** The exported QTS_* functions: every EMSCRIPTEN_KEEPALIVE definition of the interface. */
function exportedFunctions(): string[] {
  const names = INTERFACE.filter((f) => f.endsWith('.c')).flatMap((f) =>
    [
      ...readFileSync(path.join(ENGINE, f), 'utf8').matchAll(
        /EMSCRIPTEN_KEEPALIVE[^(]*?\b(QTS_\w+)\(/g,
      ),
    ].map((m) => m[1]!),
  );
  return [...new Set(names)].sort();
}

function build(out: string): Record<string, unknown> {
  const compiler = ensureEmscripten();
  const tarball = fetchSource();
  const src = path.join(WORK, 'src');
  rmSync(src, { recursive: true, force: true });
  mkdirSync(src, { recursive: true });
  run('tar', ['-xJf', tarball, '-C', src, '--strip-components=1']);
  for (const p of patches())
    run('patch', ['-p1', '--quiet', '-i', path.join(ENGINE, 'patches', p)], src);
  for (const f of INTERFACE) cpSync(path.join(ENGINE, f), path.join(src, f));
  const exported = exportedFunctions();
  const args = [...flags(exported), 'interface.c', ...ENGINE_SOURCES, '-o', 'quickjs.mjs'];
  const result = spawnSync('emcc', args, {
    cwd: src,
    stdio: 'inherit',
    // Debian's emcc runs its JS tools with the machine's node, which looks for acorn here
    env: { ...process.env, NODE_PATH: '/usr/share/nodejs', SOURCE_DATE_EPOCH: '0' },
  });
  if (result.status !== 0) throw new Error(`emcc failed (${result.status})`);
  mkdirSync(out, { recursive: true });
  const outputs: Record<string, string> = {};
  for (const f of ['quickjs.mjs', 'quickjs.wasm']) {
    const bytes = readFileSync(path.join(src, f));
    writeFileSync(path.join(out, f), bytes);
    outputs[f] = sha256(bytes);
  }
  const inputs: Record<string, string> = { [SOURCE.tarball]: SOURCE.sha256 };
  for (const f of INTERFACE) inputs[`engine/${f}`] = sha256(readFileSync(path.join(ENGINE, f)));
  for (const p of patches())
    inputs[`engine/patches/${p}`] = sha256(readFileSync(path.join(ENGINE, 'patches', p)));
  const record = {
    source: { package: SOURCE.package, version: SOURCE.version, suite: SOURCE.suite },
    compiler: { package: `${EMSCRIPTEN.package}=${EMSCRIPTEN.version}`, version: compiler },
    flags: flags(['…']).filter((f) => !f.startsWith('-sEXPORTED_FUNCTIONS')),
    exported,
    inputs,
    outputs,
  };
  writeFileSync(path.join(out, 'build.json'), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

const check = process.argv.includes('--check');
const dist = path.join(ENGINE, 'dist');
const out = check ? path.join(WORK, 'check') : dist;
const built = build(out) as { outputs: Record<string, string> };
if (check) {
  const committed = JSON.parse(readFileSync(path.join(dist, 'build.json'), 'utf8')) as typeof built;
  const same = Object.entries(built.outputs).every(
    ([f, h]) => committed.outputs[f] === h && sha256(readFileSync(path.join(dist, f))) === h,
  );
  for (const [f, h] of Object.entries(built.outputs))
    console.log(
      `${f}  ${h}  ${committed.outputs[f] === h ? 'same as committed' : `committed ${committed.outputs[f]}`}`,
    );
  if (!same) {
    console.error('the build does not give the committed bytes');
    process.exit(1);
  }
} else {
  for (const [f, h] of Object.entries(built.outputs)) console.log(`engine/dist/${f}  ${h}`);
}
