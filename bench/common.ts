/**
 * What the benchmarks (`bench/run.ts` and its measurements, `bench/read-model.ts`) share: the synthetic ledgers
 * they measure, made once and kept in `bench/data/`; a measurement run in a fresh Node.js process;
 * the queries memoryd makes at start and the bare loop that reads a ledger of any size through;
 * the progress line on a terminal; and the generated sections of the docs that their figures go
 * to.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Ledger } from '../lib/ledger.js';
import { WORKLOAD_VERSION, writeSyntheticLedger } from './workload.js';

const showProgress = process.stderr.isTTY === true;

/** Shows `message` as the progress line, when stderr is a terminal. */
export function progress(message: string): void {
  if (showProgress) process.stderr.write(`\r\x1b[K${message}`);
}

/** Takes the progress line off. */
export function progressDone(): void {
  if (showProgress) process.stderr.write('\r\x1b[K');
}

/**
 * The benchmarks' data folder (`<root>/bench/data`), named relative to the working directory:
 * a read model built there writes its log's name into its STATUS file, which must hold no
 * machine's path.
 */
export function benchData(root: string): string {
  return path.relative(process.cwd(), path.join(root, 'bench', 'data')) || '.';
}

/**
 * The synthetic ledger of `records` records from `seed`, generated once into `dataDir` and kept
 * for later runs. Its name holds the count, the seed and the generator's version, so that a
 * changed generator never reuses an old file.
 */
export async function syntheticLedger(
  dataDir: string,
  records: number,
  seed: number,
): Promise<{ file: string; bytes: number }> {
  const file = path.join(dataDir, `replay-${records}-s${seed}-w${WORKLOAD_VERSION}.jsonl`);
  if (!fs.existsSync(file)) {
    const start = performance.now();
    const { bytes } = await writeSyntheticLedger(file, {
      records,
      seed,
      onProgress: (written) => progress(`generating ${path.basename(file)}: ${Math.round((100 * written) / records)}%`),
    });
    progressDone();
    console.log(
      `generated ${path.relative(process.cwd(), file)}: ${records} records, ${(bytes / (1 << 20)).toFixed(1)} MiB in ${((performance.now() - start) / 1000).toFixed(1)} s`,
    );
  }
  return { file, bytes: fs.statSync(file).size };
}

/**
 * Runs `node <argv>` in a fresh process and gives the JSON it printed on stdout: one
 * measurement, in a process no other run has warmed or filled. `what` names it in errors.
 */
export function childSays<T>(argv: readonly string[], what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(
          new Error(
            `${what}: the measuring process ${signal === null ? `exited with ${code}` : `was killed by ${signal}`}`,
          ),
        );
        return;
      }
      try {
        resolve(JSON.parse(out) as T);
      } catch {
        reject(new Error(`${what}: the measuring process printed ${JSON.stringify(out.slice(0, 200))}`));
      }
    });
  });
}

/**
 * Puts `section` between the markers `<!-- <name>:start -->` and `<!-- <name>:end -->` of the
 * Markdown file `doc`, keeping the prose around them: the docs quote a benchmark's figures only
 * there, so that a run replaces every figure it measured and none is left behind by hand. A doc
 * without the markers gets them at its end under `## <heading>` when a heading is given (a fresh
 * `docs/benchmarks.md`); otherwise the markers' absence is an error that names the doc, rather
 * than figures dropped somewhere no reader looks.
 */
export function writeGeneratedSection(doc: string, name: string, section: string, heading?: string): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const generated = `${start}\n${section}\n${end}`;
  let text: string;
  try {
    text = fs.readFileSync(doc, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || heading === undefined) throw e;
    text = '';
  }
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from !== -1 && to > from) {
    fs.writeFileSync(doc, `${text.slice(0, from)}${generated}${text.slice(to + end.length)}`);
    return;
  }
  if (heading === undefined)
    throw new Error(`${doc}: no ${start} ... ${end} to write the figures between; put them where the figures go`);
  fs.writeFileSync(doc, `${text.trimEnd()}\n\n## ${heading}\n\n${generated}\n`.trimStart());
}

/**
 * A few queries, as memoryd asks them at start: the counts, the first page of the outbox, the
 * sent ids of its items, and a thousand decisions with their conclusions. A process's peak RSS is
 * taken after them, so that it holds what answering them keeps, not only what the open did.
 */
export async function startupQueries(ledger: Ledger): Promise<void> {
  await ledger.counts();
  const page = await ledger.outboxPage(100);
  for (const { item } of page.decisions) await ledger.sentIds(item);
  let n = 0;
  for await (const { item, action } of ledger.decisions()) {
    await ledger.isDecided(item);
    if (action.type === 'conclude') await ledger.conclusion(action.workspace, action.text);
    if (++n === 1000) break;
  }
}

/**
 * The bare loop of reading a ledger through, in chunks (a 10M-record file is longer than a
 * string can be): the file read 8 MiB at a time, split at its newlines, each line given to
 * `JSON.parse`; no checks, no state. Gives the number of lines.
 */
export function readThroughInChunks(file: string): number {
  const fd = fs.openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(8 << 20);
  let carry: Buffer = Buffer.alloc(0);
  let lines = 0;
  try {
    for (let got = fs.readSync(fd, buffer); got > 0; got = fs.readSync(fd, buffer)) {
      const chunk = carry.length === 0 ? buffer.subarray(0, got) : Buffer.concat([carry, buffer.subarray(0, got)]);
      const end = chunk.lastIndexOf(10);
      if (end !== -1) {
        const complete = chunk.toString('utf8', 0, end).split('\n');
        for (const line of complete) JSON.parse(line);
        lines += complete.length;
      }
      carry = Buffer.from(chunk.subarray(end + 1)); // a copy: the buffer is read into again
    }
  } finally {
    fs.closeSync(fd);
  }
  return lines;
}

/** The peak RSS of this process so far, in MiB, to a tenth. */
export function peakRssMiB(): number {
  return Math.round((process.resourceUsage().maxRSS * 1024 * 10) / (1 << 20)) / 10;
}

/** The seed of the synthetic ledgers and of the appended records. */
export const SEED = 1;

/** What a measuring child reports: how many records (queries) it handled, in how many seconds. */
export interface Timing {
  readonly count: number;
  readonly seconds: number;
  /** The measuring process's peak RSS in MiB, after the replay and memoryd's start-up queries. */
  readonly peakMiB?: number;
  /** An engine's append loop: the CPU (user and system) the process spent in it, the cost on tmpfs. */
  readonly cpuSeconds?: number;
}

/** The monotonic clock, in seconds. */
export const now = (): number => performance.now() / 1000;
