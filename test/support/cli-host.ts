/**
 * Commands of the CLI run in a child process that stays up between them (`cli-host-child.ts`
 * runs `main` for each), for the tests that run a matrix of commands: a command costs what it
 * does, not a Node.js start and the load of every module (about 0.4 s of CPU each). A command
 * that does not end within its deadline (one blocked on a FIFO, say) gets the child killed and
 * fails the test, as a stuck process of the real bin would; so does a child that dies. The real
 * bin's own few lines (`lib/cli.js`: the exit status from `main`'s) are run by `cli()` of
 * `cli.ts`, which each test file that uses this keeps for some of its commands.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Run } from './cli.js';

const CHILD = fileURLToPath(new URL('./cli-host-child.js', import.meta.url));
/** How long a command may take, by default, before it counts as stuck. */
const STUCK_MS = 15_000;

interface Answer extends Run {
  readonly id: number;
}

/** What a command waits on: its answer, or its child's end. */
interface Waiter {
  readonly resolve: (run: Run) => void;
  readonly reject: (e: Error) => void;
}

/** A child and the commands sent to it that have not been answered. */
interface Host {
  readonly child: ChildProcess;
  readonly waiting: Map<number, Waiter>;
}

/** A child that runs commands, started on the first and again after one was killed or died. */
export class CliHost {
  private host: Host | null = null;
  private next = 0;

  /** `stuckMs`: how long a command may take before it counts as stuck. */
  constructor(private readonly stuckMs = STUCK_MS) {}

  /** Runs `ledgerstore args...` with `input` on stdin, to the end. */
  run(args: readonly string[], input = ''): Promise<Run> {
    const host = this.started();
    const id = this.next++;
    return new Promise<Run>((resolve, reject) => {
      const stuck = setTimeout(() => {
        host.waiting.delete(id);
        this.end(host, 'kill');
        reject(new Error(`stuck for ${this.stuckMs / 1000} s: ledgerstore ${args.join(' ')}`));
      }, this.stuckMs);
      host.waiting.set(id, {
        resolve: (run) => {
          clearTimeout(stuck);
          resolve(run);
        },
        reject: (e) => {
          clearTimeout(stuck);
          reject(e);
        },
      });
      host.child.send({ id, args, input });
    });
  }

  /** Lets the child end (at the end of a test file): it exits once its channel closes. */
  stop(): void {
    if (this.host !== null) this.end(this.host, 'disconnect');
  }

  /** Ends `host`'s child: gently, or (a command is stuck) by SIGKILL. */
  private end(host: Host, how: 'kill' | 'disconnect'): void {
    if (this.host === host) this.host = null;
    if (how === 'kill') host.child.kill('SIGKILL');
    else if (host.child.connected) host.child.disconnect();
  }

  private started(): Host {
    if (this.host !== null) return this.host;
    const child = fork(CHILD, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    const host: Host = { child, waiting: new Map() };
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    (child.stderr as Socket | null)?.unref();
    child.on('message', (answer: Answer) => {
      const { id, code, stdout, stderr } = answer;
      host.waiting.get(id)?.resolve({ code, stdout, stderr });
      host.waiting.delete(id);
    });
    child.on('exit', (code, signal) => {
      if (this.host === host) this.host = null;
      const why = new Error(`the CLI's host process ended (${signal ?? code}) during a command: ${stderr}`);
      for (const { reject } of host.waiting.values()) reject(why);
      host.waiting.clear();
    });
    // a test file's end need not wait for it
    child.unref();
    child.channel?.unref();
    this.host = host;
    return host;
  }
}
