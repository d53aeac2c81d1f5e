/**
 * Test support for the command line: `ledgerstore(args)` runs `main` in this process, with stdin
 * from a buffer, stdout and stderr gathered into strings, and signals that the test sends
 * (`signals.emit('SIGINT', 'SIGINT')`); the fixture ledger the CLI tests share; and `cli(args)`,
 * which runs the real bin in a child process, for what only a process shows (exit codes, pipes,
 * real signals).
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import { main } from '../../lib/cli/main.js';
import { encodeRecord, type Record } from '../../lib/index.js';
import {
  conclude,
  decided,
  edit,
  failed,
  fleet,
  type Home,
  sent,
  skip,
  turn,
  turnTo,
  unconclude,
  withHome,
} from './ledger.js';

/** The bin, as package.json names it. */
export const CLI = fileURLToPath(new URL('../../lib/cli.js', import.meta.url));
export const RUNBOOK = 'see docs/runbook.md#honcho-ledger-damaged';

/** How a command ended. */
export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A stream that keeps what is written to it. */
class Gathered extends Writable {
  private readonly chunks: Buffer[] = [];
  /** Called with each chunk as it is written. */
  onChunk: ((text: string) => void) | undefined;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    this.onChunk?.(chunk.toString('utf8'));
    done();
  }

  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** What a test can give an in-process run besides its arguments. */
export interface RunOptions {
  readonly input?: string | Buffer;
  /** Whether stderr is to look like a terminal (progress is drawn there only). */
  readonly tty?: boolean;
  /** Where the test sends signals from: `signals.emit('SIGINT', 'SIGINT')`. */
  readonly signals?: EventEmitter;
  /** Called with each piece of stderr as it is written (to act at a point of the run). */
  readonly onStderr?: (text: string) => void;
  /** The clock the progress line is measured by, in milliseconds (default: the real one). */
  readonly now?: () => number;
  /** The terminal's width. */
  readonly columns?: number;
}

/** A clock that moves on `step` milliseconds each time it is read: every progress update is drawn, with rates that do not depend on the machine. */
export function steppingClock(step = 1000): () => number {
  let t = 0;
  return () => (t += step);
}

/** Runs `ledgerstore args...` in this process, with `input` on stdin, to the end. */
export async function ledgerstore(args: readonly string[], options: RunOptions = {}): Promise<Run> {
  const input = options.input ?? '';
  const stdout = new Gathered();
  const stderr = new Gathered();
  stderr.onChunk = options.onStderr;
  const code = await main(args, {
    stdin: Readable.from(input.length === 0 ? [] : [Buffer.from(input)]),
    stdout,
    stderr,
    stderrIsTTY: options.tty ?? false,
    stderrColumns: options.columns,
    signals: options.signals ?? new EventEmitter(),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Runs the real bin, `node dist/lib/cli.js args...`, in a child process with `input` on stdin, to the end. */
export function cli(args: readonly string[], input: string | Buffer = ''): Run {
  const run: SpawnSyncReturns<string> = spawnSync(process.execPath, [CLI, ...args], {
    input,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (run.error !== undefined) throw run.error;
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

export function expectRun(run: Run, code: number, stdout: string, stderr: string): void {
  assert.is(run.stderr, stderr, 'stderr');
  assert.is(run.stdout, stdout, 'stdout');
  assert.is(run.code, code, 'exit status');
}

export const lineOf = (record: Record): string => `${encodeRecord(record)}\n`;

export const COFFEE = 'Kyle takes his coffee black.';

/**
 * A ledger with every state: 10 records, 7 items decided (sent 2, waiting 3, failed 1, skipped 1),
 * a sent conclusion, and strings that JSON escapes.
 */
export const FIXTURE: readonly Record[] = [
  decided(turn('chat-1', 3), turnTo('trusted', 'kyle')),
  decided(edit('2026-09-28-0001', 0), conclude('trusted', COFFEE)),
  decided(turn('chat-2', 1), skip('nothing to send')),
  decided(turn('chat-2', 2), fleet('deploy "v2"\n done', 'chat-2')),
  sent(edit('2026-09-28-0001', 0), ['concl-1']),
  decided(turn('chat-1', 4), turnTo('untrusted', 'ana')),
  failed(turn('chat-1', 4), 503, 'unavailable'),
  decided(turn('chat-1', 5), turnTo('trusted', 'kyle')),
  sent(turn('chat-1', 3), ['msg-a1', 'msg-a2']),
  decided(edit('2026-09-28-0002', 0), unconclude('trusted', COFFEE)),
];
export const FIXTURE_TEXT = FIXTURE.map(lineOf).join('');
export const FIXTURE_COUNTS = '{"decided":7,"sent":2,"waiting":3,"failed":1,"skipped":1}\n';
export const EMPTY_COUNTS = '{"decided":0,"sent":0,"waiting":0,"failed":0,"skipped":0}\n';
/** The outbox of the fixture, in decision order, in canonical form. */
export const FIXTURE_OUTBOX = [
  String.raw`{"item":{"type":"turn","session":"chat-2","turn":2},"action":{"type":"fleet","session":"chat-2","text":"deploy \"v2\"\n done"}}`,
  `{"item":{"type":"turn","session":"chat-1","turn":5},"action":{"type":"turn","workspace":"trusted","speaker":"kyle"}}`,
  `{"item":{"type":"edit","id":"2026-09-28-0002","part":0},"action":{"type":"unconclude","workspace":"trusted","text":"Kyle takes his coffee black."}}`,
];

/** Runs `body` with the fixture (or `text`) written at `home.path`. */
export async function withFixture(
  body: (home: Home) => Promise<void> | void,
  text: string | Buffer = FIXTURE_TEXT,
): Promise<void> {
  await withHome(async (home) => {
    writeFileSync(home.path, text);
    await body(home);
  });
}

/** Asserts that the file holds exactly `bytes`. */
export function unchanged(path: string, bytes: string | Buffer): void {
  assert.ok(readFileSync(path).equals(Buffer.from(bytes)), `${path} changed`);
}

/** Writes a ledger of `n` waiting turns, quickly (one write, not `n` appends). */
export function manyWaiting(path: string, n: number): void {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(encodeRecord(decided(turn(`chat-${i % 50}`, i))));
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** `text` as a regular expression that matches it literally. */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
