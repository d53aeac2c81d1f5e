/**
 * Test support: ledgerstore as another project gets it. `consumer()` makes a fresh project in a
 * temporary folder with ledgerstore installed from `npm pack` of this checkout (what the registry
 * would serve), so a test can run its `ledgerstore` bin and type-check and run code that imports
 * `'ledgerstore'` against the built, packed package, not the source tree.
 *
 * The install is `--prefer-offline`: the dependencies are those `npm ci` has just put in npm's
 * cache, so it takes seconds and needs the registry only for what the cache lacks. Under the
 * runner (`run.ts`), the test files of a run share one install of the packed checkout
 * (`run-folder.ts`): each project gets a copy of it (`cp -a`, a fraction of a second against
 * seconds of CPU for a pack and an install).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { madeOncePerRun } from './run-folder.js';

/** The checkout's root (the tests run from `dist/test/support`). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The TypeScript compiler of the checkout, to type-check code as a user's project would. */
export const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');

/** A user's tsconfig: as strict as ours, resolving `'ledgerstore'` through node_modules. */
export const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    noUnusedLocals: true,
    noUnusedParameters: true,
    verbatimModuleSyntax: true,
    skipLibCheck: false,
    outDir: 'out',
    rootDir: '.',
  },
  include: ['*.ts'],
};

/** A project of a user's, with ledgerstore installed. */
export interface Consumer {
  readonly dir: string;
  /** Runs a command in the project and gives its stdout; throws (with stderr) when it fails. */
  run(file: string, args: readonly string[], input?: string): string;
  remove(): void;
}

const npm = (args: readonly string[], cwd: string): string =>
  execFileSync('npm', ['--no-audit', '--no-fund', '--loglevel=error', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/**
 * Packs the checkout into `dir` as `npm pack` does, and gives the tarball's path. Without its
 * scripts: the run built dist/ already, and `prepare` would build it again under the test files
 * running beside this one (test/run.ts runs several at once), which then load half-written modules.
 */
export function packInto(dir: string): string {
  npm(['pack', '--ignore-scripts', '--pack-destination', dir], ROOT);
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${dir}`);
  return join(dir, tarball);
}

/**
 * A fresh project with ledgerstore installed from `spec`: `'pack'` installs the tarball
 * `npm pack` makes of the checkout; any other string is handed to `npm install` as it is (a git
 * URL, say).
 */
export function consumer(spec: 'pack' | string = 'pack'): Consumer {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerstore-consumer-'));
  try {
    writeFileSync(join(dir, 'package.json'), consumerManifest());
    writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify(CONSUMER_TSCONFIG, null, 2)}\n`);
    // the run's one install of the packed checkout, for each project to copy (`run-folder.ts`)
    const shared =
      spec === 'pack'
        ? madeOncePerRun('packed-project', (folder) => {
            writeFileSync(join(folder, 'package.json'), consumerManifest());
            install(folder, 'pack');
          })
        : null;
    if (shared !== null) {
      execFileSync('cp', ['-a', `${shared}/.`, dir]);
    } else install(dir, spec);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    dir,
    run: (file, args, input) =>
      execFileSync(file, [...args], { cwd: dir, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A user's project's package.json, before the install. */
const consumerManifest = (): string =>
  `${JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`;

/** Installs ledgerstore from `spec` (`'pack'`: the checkout, packed) into the project at `dir`. */
function install(dir: string, spec: string): void {
  const source = spec === 'pack' ? packInto(dir) : spec;
  // @types/node, so that a user's code that touches Node's API type-checks as it would for them.
  npm(['install', '--prefer-offline', source, `@types/node@${typesNodeVersion()}`], dir);
}

/** The @types/node this checkout builds with. */
function typesNodeVersion(): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies?: Record<string, string>;
  };
  return manifest.devDependencies?.['@types/node'] ?? '20';
}
