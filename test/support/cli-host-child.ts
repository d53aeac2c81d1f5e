/**
 * The child of `cli-host.ts`: runs each command its parent sends over IPC through
 * `ledgerstore()` (`cli.ts`: the CLI's `main` with stdin from the message, stdout and stderr
 * gathered), one at a time, and sends back how it ended. Anything the process itself writes (a
 * warning, an uncaught error) goes to its own stderr, which the parent keeps.
 */
import { ledgerstore } from './cli.js';

interface Command {
  readonly id: number;
  readonly args: readonly string[];
  readonly input: string;
}

let queue: Promise<void> = Promise.resolve();

process.on('message', ({ id, args, input }: Command) => {
  queue = queue.then(async () => {
    process.send?.({ id, ...(await ledgerstore(args, { input })) });
  });
});
