/** A backend that records the positions of the records its opens replay: what an open read. */
import type { LogBackend, Record } from '../../lib/index.js';

/** `inner`, whose opens push each replayed record's position to `replays`. */
export function countingReplays(inner: LogBackend<Record>): { backend: LogBackend<Record>; replays: number[] } {
  const replays: number[] = [];
  return {
    replays,
    backend: {
      ...inner,
      open: (options) =>
        inner.open({
          ...options,
          replay: (record, position) => {
            replays.push(position);
            return options?.replay?.(record, position);
          },
        }),
    },
  };
}
