/**
 * A backend whose read-through at open also calls a hook with each record's position, after the
 * caller's own `replay`: for progress, or for a turn of the event loop now and then.
 *
 * @module
 */
import type { ScannedLines } from './line-scan.js';
import type { LogBackend, Position } from './log.js';

/**
 * `backend`, calling `hook(position)` after the open's `replay` of each record (and after the
 * promise `replay` returned, if it did). When `hook` returns a promise, the next record waits for it.
 */
export function withReplayHook<R>(
  backend: LogBackend<R>,
  hook: (position: Position) => void | Promise<void>,
): LogBackend<R> {
  const after = (replayed: void | Promise<void>, position: Position): void | Promise<void> =>
    replayed instanceof Promise ? replayed.then(() => hook(position)) : hook(position);
  return {
    ...backend,
    open: (options) =>
      backend.open({
        ...options,
        replay: (record, position) => after(options?.replay?.(record, position), position),
        // a replay that takes scanned lines is hooked the same way, line by line
        ...(options?.replayLine === undefined
          ? {}
          : {
              replayLine: (line: ScannedLines<R>, position: Position) =>
                after(options.replayLine?.(line, position), position),
            }),
      }),
  };
}
