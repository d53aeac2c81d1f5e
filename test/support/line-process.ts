/**
 * A child process that talks in lines, for the tests between real processes: a writer that says
 * `ready`, `ack ...`, `done`; a follower (`ledgerstore follow`) that prints records. It keeps
 * every whole line the child wrote to stdout (and says whether a piece of a line is left
 * without its newline), all of stderr, and how it ended.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { until } from '../conformance/common.js';

export class LineProcess {
  readonly process: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Every whole line written to stdout so far, without its newline. */
  readonly lines: string[] = [];
  /** What stdout holds after its last newline: a line not yet (or never) finished. */
  partial = '';
  stderr = '';
  /** How it ended, once it has. */
  ended: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** Runs `node <args>`. */
  constructor(
    args: readonly string[],
    private readonly what: string,
  ) {
    this.process = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.process.stdin.on('error', () => undefined);
    this.process.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.process.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const text = this.partial + chunk;
      const last = text.lastIndexOf('\n');
      if (last === -1) {
        this.partial = text;
        return;
      }
      this.lines.push(...text.slice(0, last).split('\n'));
      this.partial = text.slice(last + 1);
    });
    this.exited = new Promise((resolve) =>
      this.process.once('close', (code, signal) => {
        this.ended = { code, signal };
        resolve(this.ended);
      }),
    );
  }

  /** Writes `line` and its newline to the child's stdin. */
  send(line: string): void {
    this.process.stdin.write(`${line}\n`);
  }

  /** Waits until `check` holds of the lines; fails, with what the child said, if it ends first. */
  async waitFor(check: (lines: readonly string[]) => boolean, what: string): Promise<void> {
    await until(() => {
      if (check(this.lines)) return true;
      if (this.ended !== null)
        throw new Error(`${this.what} ended (${JSON.stringify(this.ended)}) before ${what}: ${this.stderr}`);
      return false;
    }, `${this.what}: ${what}`);
  }

  /** Waits for a line that is exactly `line`. */
  said(line: string): Promise<void> {
    return this.waitFor((lines) => lines.includes(line), `it to say ${line}`);
  }

  /** Closes its stdin (a child that waits for it ends), and waits for it to end. */
  async end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.process.stdin.end();
    return this.exited;
  }
}
