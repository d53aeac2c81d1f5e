/**
 * Stopping a command on SIGINT (Ctrl-C) or SIGTERM so that it can clean up first, and the exit
 * status a shell reports for it (128 + the signal's number).
 *
 * @module
 */
import { constants as osConstants } from 'node:os';
import type { SignalSource, StopSignal } from './io.js';

/** A command stopped by a signal (Ctrl-C, or `kill`): it exits 128 + the signal's number, as a shell reports it. */
export class Interrupted extends Error {
  constructor(readonly signal: StopSignal) {
    super(`stopped by ${signal}`);
    this.name = 'Interrupted';
  }

  get status(): number {
    return 128 + osConstants.signals[this.signal];
  }
}

/**
 * Runs `body` with a signal that is aborted, with an {@link Interrupted} as its reason, by the
 * first SIGINT or SIGTERM. Without these listeners a signal ends the process on the spot and
 * leaves what it was building behind; with them, `body` stops at its next check and cleans up.
 * Only the first is heard: a second signal, with no listener left, still ends the process at once.
 */
export async function stoppable<T>(signals: SignalSource, body: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const onSignal = (signal: StopSignal): void => {
    signals.off('SIGINT', onSignal);
    signals.off('SIGTERM', onSignal);
    stop.abort(new Interrupted(signal));
  };
  signals.once('SIGINT', onSignal);
  signals.once('SIGTERM', onSignal);
  try {
    return await body(stop.signal);
  } finally {
    signals.off('SIGINT', onSignal);
    signals.off('SIGTERM', onSignal);
  }
}
