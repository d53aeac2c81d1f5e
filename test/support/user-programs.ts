/**
 * Test support: TypeScript a user would write (the docs' examples, `examples/`), type-checked
 * and run as the user's own project would: in a {@link Consumer} with the packed package
 * installed, all files in one `tsc -p` under this project's own compiler options (its
 * strictness, and the package's types checked too), then each compiled
 * program run by `node` in a fresh temporary folder of its own, with a time limit so that a
 * program that never ends fails instead of holding the run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Consumer, ROOT, TSC } from './packed.js';

/** A program to check and run, and where its text came from (for messages). */
export interface UserProgram {
  /** Its file name in the consumer project: `<name>.ts`, compiled to `out/<name>.js`. */
  readonly name: string;
  readonly source: string;
  /** Where its first line is, as `path:line`; `tsc`'s positions are given from there. */
  readonly origin: { readonly path: string; readonly line: number };
}

/** What a run of a program gave. */
export interface ProgramRun {
  readonly stdout: string;
  readonly stderr: string;
  /** Why it failed (`exited with 1`, `timed out after 30 s`), or `null` when it exited 0. */
  readonly failure: string | null;
}

/** Long enough for any example on a loaded machine; a hang guard, not a measurement. */
export const RUN_LIMIT_MS = 30_000;

/**
 * Writes every program into the project and type-checks them all in one `tsc -p`, which also
 * emits them into `out/`. Gives `tsc`'s complaints with each position turned into the place in
 * the doc or file it came from (`docs/testing.md:57:12`), or `''` when it has none.
 */
export function compile(project: Consumer, programs: readonly UserProgram[]): string {
  const byFile = new Map(programs.map((p) => [`${p.name}.ts`, p]));
  for (const program of programs) writeFileSync(join(project.dir, `${program.name}.ts`), program.source);
  const own = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as {
    compilerOptions: { readonly [option: string]: unknown };
  };
  const tsconfig = {
    compilerOptions: {
      ...own.compilerOptions,
      rootDir: '.',
      outDir: 'out',
      declaration: false,
      sourceMap: false,
      skipLibCheck: false,
    },
    files: [...byFile.keys()],
  };
  writeFileSync(join(project.dir, 'tsconfig.programs.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const tsc = spawnSync(TSC, ['-p', 'tsconfig.programs.json', '--pretty', 'false'], {
    cwd: project.dir,
    encoding: 'utf8',
  });
  if (tsc.status === 0) return '';
  const said = `${tsc.stdout}${tsc.stderr}`.trim() || `tsc exited with ${tsc.status ?? tsc.signal}`;
  return said.replace(/^([\w.-]+\.ts)\((\d+),(\d+)\)/gm, (whole, file: string, row: string, column: string) => {
    const program = byFile.get(file);
    return program === undefined ? whole : `${program.origin.path}:${program.origin.line + Number(row) - 1}:${column}`;
  });
}

/**
 * Runs a compiled program with a fresh, empty temporary folder as its working directory (its
 * relative paths land there), removed afterwards; `'ledgerstore'` resolves from the project.
 */
export function runProgram(project: Consumer, program: UserProgram, args: readonly string[] = []): ProgramRun {
  const cwd = mkdtempSync(join(tmpdir(), 'ledgerstore-example-'));
  try {
    const run = spawnSync(process.execPath, [join(project.dir, 'out', `${program.name}.js`), ...args], {
      cwd,
      encoding: 'utf8',
      timeout: RUN_LIMIT_MS,
      killSignal: 'SIGKILL',
    });
    const failure =
      run.error !== undefined && (run.error as NodeJS.ErrnoException).code === 'ETIMEDOUT'
        ? `timed out after ${RUN_LIMIT_MS / 1000} s`
        : run.error !== undefined
          ? `could not run: ${run.error.message}`
          : run.status !== 0
            ? run.status === null
              ? `was killed by ${run.signal}`
              : // Node exits 13 when the program ends on a top-level await that can never settle.
                `exited with ${run.status}${run.status === 13 ? ' (a top-level await that never settles)' : ''}`
            : null;
    return { stdout: run.stdout, stderr: run.stderr, failure };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
