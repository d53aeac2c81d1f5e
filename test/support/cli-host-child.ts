/**
 * The child of `cli-host.ts`: runs the CLI's `main` for each command its parent sends over IPC,
 * one at a time, with stdin from the message and stdout and stderr gathered, and sends back how
 * it ended. Anything the process itself writes (a warning, an uncaught error) goes to its own
 * stderr, which the parent keeps.
 */
import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { main } from '../../lib/cli/main.js';

interface Command {
  readonly id: number;
  readonly args: readonly string[];
  readonly input: string;
}

class Gathered extends Writable {
  private readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    done();
  }
  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

let queue: Promise<void> = Promise.resolve();

process.on('message', (message: Command) => {
  queue = queue.then(async () => {
    const stdout = new Gathered();
    const stderr = new Gathered();
    const code = await main(message.args, {
      stdin: Readable.from(message.input.length === 0 ? [] : [Buffer.from(message.input)]),
      stdout,
      stderr,
      stderrIsTTY: false,
      stderrColumns: undefined,
      signals: new EventEmitter(),
    });
    process.send?.({ id: message.id, code, stdout: stdout.text, stderr: stderr.text });
  });
});
