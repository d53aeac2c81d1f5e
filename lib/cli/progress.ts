/**
 * Long work shown on one line of a terminal (stderr, and only when it is one): what is being done,
 * how much of how much, the percent, the rate and the time left, for each phase of a command in
 * turn, so that no phase is silent:
 *
 *     copying to copy.jsonl: 1,200,000 of 2,000,000 records (60%), 410,233 records/s, 2 s left
 *     reading honcho.jsonl: 120.5 of 512.0 MiB (23%), 85.2 MiB/s, 5 s left
 *     reading level:ledger: 1,234,567 records, 310,000 records/s        (a total not known)
 *
 * Hand-written rather than a progress library's: the line is redrawn by the work itself as it
 * goes (never by a timer that would keep a finished command's event loop alive), it takes the
 * clock it is given (so that a test sees its lines without waiting on time), and a phase may
 * have no known total (a LevelDB ledger keeps no count to read first).
 *
 * @module
 */
import type { Writable } from 'node:stream';
import { grouped } from './describe.js';

/** What a phase counts: records, or bytes (shown in MiB). */
export type Unit = 'records' | 'bytes';

/** Redraw at most this often: more is flicker, and costs the work time. */
const REDRAW_MS = 100;

const MIB = 1 << 20;

/** `n` of `unit` for people: `1,234` for records, `12.3` for bytes in MiB. */
function amount(n: number, unit: Unit): string {
  return unit === 'records' ? grouped(n) : (n / MIB).toFixed(1);
}

function unitName(unit: Unit): string {
  return unit === 'records' ? 'records' : 'MiB';
}

/** `4 s`, `3 min 5 s`, `2 h 10 min`: a time left, rounded up to the second. */
export function timeLeft(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** One phase: its words, how much there is, and since when it runs. */
interface Phase {
  readonly label: string;
  readonly total: number | undefined;
  readonly unit: Unit;
  readonly started: number;
  done: number;
}

/** The progress line of a command. Without a terminal it does nothing at all. */
export class Progress {
  private phase: Phase | null = null;
  private lastDrawn = -Infinity;
  private shown = false;

  /**
   * @param now the clock, in milliseconds
   * @param columns the terminal's width, when known: the line is kept shorter, so that it never wraps
   */
  constructor(
    private readonly stream: Writable,
    readonly enabled: boolean,
    private readonly now: () => number,
    private readonly columns: number | undefined,
  ) {}

  /**
   * Starts a phase of `total` of `unit` (`undefined` when not known), shown at once: the rate and
   * the time left are measured from now.
   */
  start(label: string, total: number | undefined, unit: Unit = 'records'): void {
    if (!this.enabled) return;
    this.phase = { label, total, unit, started: this.now(), done: 0 };
    this.draw();
  }

  /** How much of the current phase is done; redrawn at most ten times a second. */
  update(done: number): void {
    const phase = this.phase;
    if (phase === null) return;
    phase.done = done;
    if (this.now() - this.lastDrawn >= REDRAW_MS) this.draw();
  }

  /** The line as it is drawn now. */
  line(): string {
    const phase = this.phase;
    if (phase === null) return '';
    const { label, total, unit, done } = phase;
    if (total === undefined && done === 0) return `${label}...`;
    const parts = [
      total === undefined
        ? `${amount(done, unit)} ${unitName(unit)}`
        : `${amount(done, unit)} of ${amount(total, unit)} ${unitName(unit)} (${total === 0 ? 100 : Math.floor((100 * done) / total)}%)`,
    ];
    const seconds = (this.now() - phase.started) / 1000;
    if (seconds > 0 && done > 0) {
      const rate = done / seconds;
      parts.push(`${amount(rate, unit)} ${unitName(unit)}/s`);
      if (total !== undefined && total > done) parts.push(`${timeLeft((total - done) / rate)} left`);
    }
    const text = `${label}: ${parts.join(', ')}`;
    // A terminal of no known size (a pty that was never given one says 0) is not cut to.
    const columns = this.columns ?? 0;
    return columns < 20 || text.length < columns ? text : `${text.slice(0, columns - 2)}…`;
  }

  private draw(): void {
    this.lastDrawn = this.now();
    this.shown = true;
    this.stream.write(`\r\x1b[K${this.line()}`);
  }

  /** Takes the line off the terminal for a while (for a line of text): the next update draws it again. */
  hide(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
    this.lastDrawn = -Infinity;
  }

  /** Takes the line off the terminal; the phase ends. */
  clear(): void {
    this.hide();
    this.phase = null;
  }

  /** Runs `body`, then takes its progress line off, whether `body` succeeded or not. */
  async around<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } finally {
      this.clear();
    }
  }
}
