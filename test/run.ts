/**
 * Runs every test file under `dist/test` (files ending in `.test.js`), each in a child process of
 * its own, a few at a time, then prints each file's time (slowest last) and the totals as one last
 * line, `N passed, N failed`, for CI. Exits non-zero when a test failed.
 *
 *     node dist/test/run.js [pattern]    only the files whose path contains `pattern`
 *
 * `LEDGERSTORE_TEST_JOBS=<n>` runs n files at once (default: twice the cores, 2 to 4): most of a
 * test's time waits on fsync or on a child process, so files side by side share the cores well.
 * A process a file keeps its state its own (a PostgreSQL test file starts its own throwaway
 * cluster, so one file's server restart never ends another's sessions). A file's output is
 * printed whole when it ends, so files never interleave. A file that dies without uvu's totals
 * (a crash, a signal) counts as one failed test, and so does one still running after 20 minutes
 * (`LEDGERSTORE_TEST_FILE_MS`), which is killed.
 *
 * The files of a run share a folder, `LEDGERSTORE_TEST_RUN_DIR`, removed when the run ends: the
 * PostgreSQL keeper keeps a fresh cluster there for the keepers after it to copy.
 *
 * The files start longest first, by the times of the last run in this build (`dist/test/.times.json`),
 * so that the slowest do not start last.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const TIMES = join(here, '.times.json');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(path);
      return entry.name.endsWith('.test.js') ? [path] : [];
    })
    .sort();
}

/** The last run's time of each file, in ms, by its name under dist/test. */
function lastTimes(): Map<string, number> {
  try {
    return new Map(Object.entries(JSON.parse(readFileSync(TIMES, 'utf8')) as { [name: string]: number }));
  } catch {
    return new Map();
  }
}

function jobs(): number {
  const given = Number(process.env.LEDGERSTORE_TEST_JOBS);
  if (Number.isInteger(given) && given > 0) return given;
  return Math.max(2, Math.min(4, 2 * availableParallelism()));
}

interface Outcome {
  readonly name: string;
  readonly passed: number;
  readonly failed: number;
  readonly ms: number;
  /** CPU seconds (user + system) of the file's process and the processes it waited for; null off Linux. */
  readonly cpu: number | null;
}

/**
 * CPU seconds of this process's children that have ended (Linux's cutime + cstime, in
 * /proc/self/stat), or null where there is no such file. It rises only as a child is reaped, so
 * its rise since the last child's `exit` was handled is the CPU of the child whose `exit` is
 * handled now, its own children's included (two children reaped at once count as one).
 */
function childrenCpu(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // after the command's ")": state is field 3, so cutime (16) and cstime (17) are at 13 and 14
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

/** uvu's totals, read from what the file printed: `Total: N`, `Passed: N`. */
function totals(printed: string): { total: number; passed: number } | null {
  const plain = printed.replace(/\u001b\[[0-9;]*m/g, '');
  const total = /Total:\s+(\d+)/.exec(plain);
  const passed = /Passed:\s+(\d+)/.exec(plain);
  return total && passed ? { total: Number(total[1]), passed: Number(passed[1]) } : null;
}

/** A file still running after this long hangs: it is killed and counts as failed. */
function fileDeadlineMs(): number {
  const given = Number(process.env.LEDGERSTORE_TEST_FILE_MS);
  return Number.isInteger(given) && given > 0 ? given : 20 * 60_000;
}

let lastCpu = childrenCpu();
/** The files' processes still running: a signal to the runner is passed on to them. */
const running = new Set<ChildProcess>();

function runFile(file: string): Promise<Outcome> {
  const name = relative(here, file);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: process.stdout.isTTY ? '1' : '0', LEDGERSTORE_TEST_RUN_DIR: runDir },
    });
    running.add(child);
    let printed = '';
    let hung = false;
    let cpu: number | null = null;
    child.on('exit', () => {
      const now = childrenCpu();
      cpu = now === null || lastCpu === null ? null : now - lastCpu;
      lastCpu = now;
    });
    const deadline = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, fileDeadlineMs());
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      printed += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      printed += chunk;
    });
    child.on('close', (code, signal) => {
      running.delete(child);
      clearTimeout(deadline);
      const ms = performance.now() - started;
      if (hung)
        printed += `\n${name}: still running after ${fileDeadlineMs() / 1000} s (LEDGERSTORE_TEST_FILE_MS), killed\n`;
      const t = totals(printed);
      const died = t === null || (code !== 0 && t.total === t.passed);
      const passed = t?.passed ?? 0;
      const failed = (t === null ? 0 : t.total - t.passed) + (died ? 1 : 0);
      const ending = died ? `\n${name}: exited with ${signal ?? code} without uvu's totals of a passing run\n` : '';
      process.stdout.write(`\n# ${name}\n${printed}${ending}`);
      resolve({ name, passed, failed, ms, cpu });
    });
  });
}

const pattern = process.argv[2] ?? '';
const times = lastTimes();
const files = testFiles(here)
  .filter((file) => relative(here, file).includes(pattern))
  .map((file) => ({ file, guess: times.get(relative(here, file)) ?? statSync(file).size }))
  .sort((a, b) => b.guess - a.guess)
  .map(({ file }) => file);

const runDir = mkdtempSync(join(tmpdir(), 'ledgerstore-run-'));
process.on('exit', () => rmSync(runDir, { recursive: true, force: true }));
// Ctrl-C or a kill: the files get it too (once more, from a terminal), and the folder goes
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)
  process.once(signal, () => {
    for (const child of running) child.kill(signal);
    process.exit(code);
  });
const outcomes: Outcome[] = [];
let next = 0;
const started = performance.now();
const cpuBefore = childrenCpu();
await Promise.all(
  Array.from({ length: Math.min(jobs(), files.length) }, async () => {
    for (let file = files[next++]; file !== undefined; file = files[next++]) outcomes.push(await runFile(file));
  }),
);

outcomes.sort((a, b) => a.ms - b.ms);
process.stdout.write("\nEach file's time (wall, then CPU), slowest last:\n");
for (const o of outcomes)
  process.stdout.write(
    `${(o.ms / 1000).toFixed(1).padStart(7)} s ${o.cpu === null ? '' : `${o.cpu.toFixed(1).padStart(7)} s`}  ${o.name}${o.failed > 0 ? `  (${o.failed} failed)` : ''}\n`,
  );
const passed = outcomes.reduce((sum, o) => sum + o.passed, 0);
const failed = outcomes.reduce((sum, o) => sum + o.failed, 0);
for (const o of outcomes) times.set(o.name, Math.round(o.ms));
try {
  writeFileSync(TIMES, JSON.stringify(Object.fromEntries(times)));
} catch {
  // a read-only build: the next run guesses by size
}
if (files.length === 0)
  process.stdout.write(`no test file's path under dist/test contains ${JSON.stringify(pattern)}\n`);
const cpuAfter = childrenCpu();
const cpuSpent = cpuBefore === null || cpuAfter === null ? '' : ` (CPU ${(cpuAfter - cpuBefore).toFixed(1)} s)`;
process.stdout.write(
  `\n${files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s${cpuSpent}, ${jobs()} at a time\n`,
);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 && files.length > 0 ? 0 : 1;
