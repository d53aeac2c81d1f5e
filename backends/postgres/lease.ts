/**
 * Leases: a claim that one holder at a time has on a log, among every process and machine that
 * opens it (the Honcho ledger's sender lease: one sender per ledger).
 *
 * A lease is a session-level advisory lock, `pg_try_advisory_lock` on the key
 * `hashtextextended('ledgerstore lease <schema>.<log> <name>', 0)`, taken on a session of its
 * own (`application_name` `ledgerstore-lease`) and held for as long as that session lives. It
 * dies with it: a holder that exits, is killed, or loses its connection, gives it up without
 * anyone cleaning up, as a kernel lock on a file does. The holder hears of the loss (the
 * session's `error` or `end`, or a look every `heartbeatMs` that fails), and the lease's signal
 * aborts; the server hears of it when the connection ends, and only then lets another take it.
 *
 * A 64-bit hash may in principle collide with another application's advisory lock on the same
 * database: that would keep a lease from being taken, never give one to two holders.
 *
 * @module
 */
import type { Lease } from '../../lib/log.js';
import { type Connector, serverFailure } from './connection.js';
import type { PostgresPlace } from './uri.js';

/**
 * Takes the lease `name` on the log at `place`: `null` when another session holds it.
 * @throws `LedgerIoError` when the server cannot be reached or refuses
 */
export async function takeLease(connector: Connector, place: PostgresPlace, name: string): Promise<Lease | null> {
  const session = await connector.session('lease');
  let got: boolean;
  try {
    const {
      rows: [row],
    } = await session.query<{ got: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got', [
      `ledgerstore lease ${place.schema}.${place.log} ${name}`,
    ]);
    got = row?.got === true;
  } catch (e) {
    await session.end();
    throw serverFailure(place.name, `taking the lease ${name}`, e);
  }
  if (!got) {
    await session.end();
    return null;
  }
  const held = new AbortController();
  const lost = (): void => {
    clearInterval(heartbeat);
    held.abort();
  };
  session.client.once('end', lost);
  session.client.once('error', lost);
  // a connection that dies without a word (a network gone quiet) is found by the next look
  const heartbeat = setInterval(() => {
    session.query('SELECT 1').catch(() => {
      lost();
      void session.end();
    });
  }, connector.heartbeatMs);
  heartbeat.unref();
  return {
    signal: held.signal,
    release: async () => {
      lost();
      await session.end();
    },
  };
}
