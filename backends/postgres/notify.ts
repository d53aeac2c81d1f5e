/**
 * Hearing of records that other writers appended: LISTEN/NOTIFY as a wake-up, with a look at
 * the head now and then behind it.
 *
 * `append()` notifies the channel `<schema>.<log>` with the new head when its transaction
 * commits (PostgreSQL delivers a notification only if the transaction commits, and those of
 * different transactions in commit order, which is position order here). A watcher:
 *
 * 1. has a session of its own (a pooled one could be handed to someone else), which runs
 *    `LISTEN` in autocommit, so that it is listening before it looks at the head;
 * 2. then reads the head, and reports it;
 * 3. reports each notified head after that, and reads the head every `heartbeatMs` as well, so
 *    that a notification lost in any way costs at most that long;
 * 4. when its session is lost (the server restarted, the network), makes a new one, listens
 *    again and reads the head, with a growing pause between tries, until it is stopped.
 *
 * A notification is a hint, never a record: the watcher only says "the head is at least h",
 * once for each head higher than the last it reported. Its reader reads the records by
 * position, so a repeated, folded or late notification costs nothing.
 *
 * A head that went back (a failover to an asynchronous standby that had not received the last
 * commits) is seen by a look at the head alone, never by a notification: a notification can
 * arrive after a look that already saw its commit (the server sends notifications when the
 * session goes idle, after the look's row), so a late one is lower than what was reported
 * without anything having gone back. A look, though, sees every commit whose notification had
 * arrived before the look was sent, so a look below the highest head heard before it was sent
 * is a store that lost commits: the watch ends with a {@link LogWentBackError}.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LogWentBackError } from '../../lib/errors.js';
import type { HeadWatcher, Position, Unwatch } from '../../lib/log.js';
import type { Connector, Session } from './connection.js';
import { channelOf, headOf, identifier } from './schema.js';
import type { PostgresPlace } from './uri.js';

/** Longest pause between two tries to get a lost listening session back. */
const MAX_PAUSE_MS = 5000;

/**
 * Watches the log's head: `onHead` is called with the head when the watch starts, then with
 * every higher head, whoever appended; `onFailure` once, if the head went back.
 * @throws `LedgerIoError` when the first session cannot be made (later losses are retried)
 */
export async function watchHead(connector: Connector, place: PostgresPlace, told: HeadWatcher): Promise<Unwatch> {
  const watcher = new Watcher(connector, place, told);
  await watcher.listen();
  watcher.keepGoing();
  return () => watcher.stop();
}

class Watcher {
  private session: Session | null = null;
  private reported = -1;
  private stopped = false;
  private heartbeat: NodeJS.Timeout | null = null;
  /** Resolves when the session in use is lost (or the watch stopped). */
  private lost: () => void = () => undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly connector: Connector,
    private readonly place: PostgresPlace,
    private readonly told: HeadWatcher,
  ) {}

  private report(head: Position): void {
    if (this.stopped || !(head > this.reported)) return;
    this.reported = head;
    this.told.onHead(head);
  }

  /** A look at the head on `session`: reported, or, below what was heard before it was sent, the end of the watch. */
  private async look(session: Session): Promise<void> {
    const heard = this.reported;
    const head = await headOf(session, this.place);
    if (head < heard) {
      if (this.stopped) return;
      void this.stop();
      this.told.onFailure?.(new LogWentBackError(this.place.name, heard, `it holds ${head} records`));
      return;
    }
    this.report(head);
  }

  /** A session that listens, then the head. */
  async listen(): Promise<void> {
    const session = await this.connector.session('listen');
    const channel = channelOf(this.place);
    try {
      session.client.on('notification', ({ channel: on, payload }) => {
        if (on !== channel) return;
        const head = Number(payload);
        if (Number.isSafeInteger(head)) this.report(head);
      });
      const gone = new Promise<void>((resolve) => {
        this.lost = resolve;
        session.client.once('end', () => resolve());
        session.client.once('error', () => resolve());
      });
      void gone.then(() => this.onLost(session));
      await session.query(`LISTEN ${identifier(channel)}`);
      this.session = session;
      await this.look(session);
    } catch (e) {
      await session.end();
      throw e;
    }
  }

  /** Starts the heartbeat. */
  keepGoing(): void {
    this.heartbeat = setInterval(() => {
      const session = this.session;
      if (session === null || session.lost()) return;
      this.look(session).catch(
        () => undefined, // the session's loss is handled where it is heard of
      );
    }, this.connector.heartbeatMs);
    this.heartbeat.unref();
  }

  private onLost(session: Session): void {
    if (this.stopped || this.session !== session) return;
    this.session = null;
    void session.end();
    this.running = this.comeBack();
  }

  /** Tries again and again to listen, until it does or the watch is stopped. */
  private async comeBack(): Promise<void> {
    for (let pause = 100; !this.stopped; pause = Math.min(2 * pause, MAX_PAUSE_MS)) {
      try {
        await this.listen();
        if (this.stopped) await this.release();
        return;
      } catch {
        await sleep(pause);
      }
    }
  }

  private async release(): Promise<void> {
    const session = this.session;
    this.session = null;
    await session?.end();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.lost();
    await this.running;
    await this.release();
  }
}
