/**
 * The tables and the append function, their versions and migrations, and the checks of the
 * server a log is opened on.
 *
 * Everything lives in one schema (`ledgerstore` unless the target says otherwise), shared by
 * every log of the database; a log is a row of `logs` and its records are rows of `records`:
 *
 * | table | one row per | columns |
 * |---|---|---|
 * | `meta` | format (one row) | `format` = `ledgerstore/pg`, `version` |
 * | `logs` | log | `name`, `head`: the number of records, moved only by `append`; `unfinished`: what fills it (`copy`, `gen`) while a copy or gen does, else null (version 5) |
 * | `records` | record | `log`, `position` (from 0, no gaps), `line`: the record's canonical line, as `text`; `batch`: on a batch's first record, the uuid the client made for it (else null); `key`: a hash of the record's key |
 * | `waiting` (unlogged) | batch waiting for the append lock | the call's arguments, then its answer |
 *
 * `append(log, expected, known, batch, count, lines, keys)` is the only writer: a procedure
 * (version 4; since version 5 its lines come as one text, joined by newlines, with their count)
 * whose commits hold the log's append lock, an advisory lock, through their WAL flush. A call
 * that gets it at once commits the batches waiting for it and then its own (in one statement
 * when none waits and the head is where it expected: the common turn); one that finds it
 * held puts its batch in `waiting` (unlogged: that commit has no WAL to flush), commits, and
 * waits for the lock: by then the holder's next commit, or the first waiter's, has usually
 * written it with every other waiting batch, in the order they came, with one flush for all
 * (else it commits them itself). Each batch is placed at the head its turn finds, only where
 * that head is `expected` (if given) and at least `known` (the head the writer had reached: a
 * log below it went back); else it writes nothing and returns `ok = false` and the head. With `keys` (one
 * a line), a head up to {@link MAX_PASSED} past `expected` is taken too when none of the records
 * in between has one of those keys or none (`records.key`, a hash of each record's key): the
 * batch goes after them, and they are returned (`passed`), for the writer to take in before its
 * own. It inserts the lines at `head ... head + n - 1`, the batch id with the first, notifies the channel
 * `<schema>.<log>` with the new head, and forces `synchronous_commit` on for its transaction.
 * Because every commit of appends to a log holds the lock until it is flushed, positions are
 * given out in commit order and a reader that sees position p sees every position below it. (Version 1
 * kept the batch ids in a table of their own and locked the row before updating it: 709 bytes
 * of WAL a one-record commit, where version 2 writes about 450.)
 *
 * The schema is made by the first writable open, in one transaction behind an advisory lock
 * (two processes starting at once would otherwise race on `CREATE`). Its version is in `meta`:
 * a writable open of an older version applies the migrations after it, in order, in that same
 * transaction; a version this ledgerstore does not know (a newer one) is refused, and nothing
 * is changed. A read-only open looks and never writes: a database with no schema, or no row for
 * the log, is an empty log.
 *
 * @module
 */
import { DamagedError, LedgerIoError } from '../../lib/errors.js';
import type { Position } from '../../lib/log.js';
import { type Queryable, serverFailure, sqlState } from './connection.js';
import type { PostgresPlace } from './uri.js';

/** What `meta.format` says of a ledgerstore schema. */
export const FORMAT = 'ledgerstore/pg';
/** The version of the schema that this ledgerstore writes and reads. */
export const SCHEMA_VERSION = 5;
/**
 * The most records a keyed append goes past ({@link MIGRATIONS}, version 3): a writer further
 * behind meets a conflict, and catches up a page at a time.
 */
export const MAX_PASSED = 1024;

/** A step from the version before it to `version`, written down for the record. */
interface Migration {
  readonly version: number;
  readonly what: string;
  /** The statements, for the schema `schema`. */
  readonly statements: (schema: string) => readonly string[];
}

/**
 * Every version's step, oldest first. A new version adds one at the end and never changes an
 * earlier one: a database at that version has run it already. (The schema itself is created
 * before the first step, if it is missing.)
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    what: 'the first schema: meta, logs, records, batches and append()',
    statements: (schema) => {
      const s = identifier(schema);
      return [
        `CREATE TABLE ${s}.meta (format text PRIMARY KEY, version integer NOT NULL)`,
        // fillfactor leaves room on the page for the head's updates to stay HOT
        `CREATE TABLE ${s}.logs (
           name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,48}$'),
           head bigint NOT NULL DEFAULT 0 CHECK (head >= 0)
         ) WITH (fillfactor = 50)`,
        // no foreign key to logs: its check per inserted row doubles the cost of a large batch
        `CREATE TABLE ${s}.records (
           log text NOT NULL,
           position bigint NOT NULL CHECK (position >= 0),
           line text NOT NULL,
           PRIMARY KEY (log, position)
         )`,
        `CREATE TABLE ${s}.batches (
           log text NOT NULL,
           id uuid NOT NULL,
           "from" bigint NOT NULL,
           head bigint NOT NULL,
           at timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (log, id)
         )`,
        `CREATE FUNCTION ${s}.append(p_log text, p_expected bigint, p_batch uuid, p_lines text[])
         RETURNS TABLE (ok boolean, "from" bigint, head bigint)
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_head bigint;
           v_n bigint := coalesce(cardinality(p_lines), 0);
         BEGIN
           -- For this transaction's commit, whatever the session says. (A SET clause on the
           -- function would not do: it is undone when the function returns, before the commit.)
           IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
             PERFORM set_config('synchronous_commit', 'on', true);
           END IF;
           SELECT l.head INTO v_head FROM ${s}.logs l WHERE l.name = p_log FOR NO KEY UPDATE;
           IF NOT FOUND THEN
             RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
           END IF;
           IF p_expected IS NOT NULL AND p_expected <> v_head THEN
             RETURN QUERY SELECT false, v_head, v_head;
             RETURN;
           END IF;
           IF v_n = 0 THEN
             RETURN QUERY SELECT true, v_head, v_head;
             RETURN;
           END IF;
           INSERT INTO ${s}.records (log, position, line)
             SELECT p_log, v_head + t.o - 1, t.l FROM unnest(p_lines) WITH ORDINALITY AS t(l, o);
           UPDATE ${s}.logs l SET head = v_head + v_n WHERE l.name = p_log;
           INSERT INTO ${s}.batches (log, id, "from", head) VALUES (p_log, p_batch, v_head, v_head + v_n);
           -- delivered when the transaction commits, and only if it does
           PERFORM pg_notify(${literal(`${schema}.`)} || p_log, (v_head + v_n)::text);
           RETURN QUERY SELECT true, v_head, v_head + v_n;
         END
         $fn$`,
        `INSERT INTO ${s}.meta (format, version) VALUES (${literal(FORMAT)}, 1)`,
      ];
    },
  },
  {
    version: 2,
    what: 'a leaner append(): the batch id on its first record, no batches table, no row lock of its own',
    statements: (schema) => {
      const s = identifier(schema);
      return [
        // null on every record but a batch's first, which costs nothing: the tuple header's
        // null bitmap fits in the padding it has anyway
        `ALTER TABLE ${s}.records ADD COLUMN batch uuid`,
        // a writer of version 1 still running finds no function to call: it cannot write a
        // schema it does not know; its look-up of a lost batch fails, and it stops
        `DROP FUNCTION ${s}.append(text, bigint, uuid, text[])`,
        `DROP TABLE ${s}.batches`,
        `CREATE FUNCTION ${s}.append(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_lines text[],
                                     OUT ok boolean, OUT "from" bigint, OUT head bigint)
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_n bigint := coalesce(cardinality(p_lines), 0);
           v_head bigint;
         BEGIN
           -- For this transaction's commit, whatever the session says. (A SET clause on the
           -- function would not do: it is undone when the function returns, before the commit.)
           IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
             PERFORM set_config('synchronous_commit', 'on', true);
           END IF;
           -- The update takes the row's lock, and an update that waited for it reads the head
           -- that the one before it committed (READ COMMITTED re-checks the row): one write of
           -- the head row (HOT: head is in no index) where a lock and an update were two.
           IF v_n > 0 THEN
             UPDATE ${s}.logs l SET head = l.head + v_n
               WHERE l.name = p_log AND l.head >= p_known AND (p_expected IS NULL OR l.head = p_expected)
               RETURNING l.head - v_n INTO v_head;
           END IF;
           IF v_head IS NULL THEN
             -- refused (or nothing to write): the head found, below p_known when the log went back
             SELECT l.head INTO v_head FROM ${s}.logs l WHERE l.name = p_log;
             IF NOT FOUND THEN
               RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
             END IF;
             ok := v_n = 0 AND v_head >= p_known AND (p_expected IS NULL OR p_expected = v_head);
             "from" := v_head;
             head := v_head;
             RETURN;
           END IF;
           INSERT INTO ${s}.records (log, position, line, batch)
             SELECT p_log, v_head + t.o - 1, t.l, CASE WHEN t.o = 1 THEN p_batch END
             FROM unnest(p_lines) WITH ORDINALITY AS t(l, o);
           -- delivered when the transaction commits, and only if it does
           PERFORM pg_notify(${literal(`${schema}.`)} || p_log, (v_head + v_n)::text);
           ok := true;
           "from" := v_head;
           head := v_head + v_n;
         END
         $fn$`,
      ];
    },
  },
  {
    version: 3,
    what: 'keyed appends: records.key, and append() goes past records of other keys',
    statements: (schema) => {
      const s = identifier(schema);
      return [
        // a hash of the caller's key, 8 bytes a record: two keys that share one only make a
        // conflict that a catch-up resolves; null (no key given) clashes with every key
        `ALTER TABLE ${s}.records ADD COLUMN key bigint`,
        `DROP FUNCTION ${s}.append(text, bigint, bigint, uuid, text[])`,
        `CREATE FUNCTION ${s}.append(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_lines text[], p_keys text[],
                                     OUT ok boolean, OUT "from" bigint, OUT head bigint, OUT passed text[])
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_n bigint := coalesce(cardinality(p_lines), 0);
           v_head bigint;
           v_keys bigint[];
           v_clashes bigint;
         BEGIN
           -- For this transaction's commit, whatever the session says. (A SET clause on the
           -- function would not do: it is undone when the function returns, before the commit.)
           IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
             PERFORM set_config('synchronous_commit', 'on', true);
           END IF;
           IF p_keys IS NOT NULL THEN
             IF coalesce(cardinality(p_keys), 0) <> v_n THEN
               RAISE EXCEPTION 'ledgerstore: % keys for % records', coalesce(cardinality(p_keys), 0), v_n USING ERRCODE = '22023';
             END IF;
             v_keys := ARRAY(SELECT hashtextextended(k, 0) FROM unnest(p_keys) AS k);
           END IF;
           -- The update takes the row's lock, and an update that waited for it reads the head
           -- that the one before it committed (READ COMMITTED re-checks the row). With keys, a
           -- head a little past the expected one is taken too, and checked below.
           IF v_n > 0 THEN
             UPDATE ${s}.logs l SET head = l.head + v_n
               WHERE l.name = p_log AND l.head >= p_known
                 AND (p_expected IS NULL OR l.head = p_expected
                      OR (v_keys IS NOT NULL AND l.head > p_expected AND l.head - p_expected <= ${MAX_PASSED}))
               RETURNING l.head - v_n INTO v_head;
           END IF;
           IF v_head IS NOT NULL AND p_expected IS NOT NULL AND v_head <> p_expected THEN
             -- Past records the caller has not seen, all committed (the lock's holders before
             -- this one): the batch goes after them only if none is about one of its keys, and
             -- the caller gets them, to take in before its own.
             SELECT array_agg(r.line ORDER BY r.position),
                    count(*) FILTER (WHERE r.key IS NULL OR r.key = ANY(v_keys))
               INTO passed, v_clashes
               FROM ${s}.records r WHERE r.log = p_log AND r.position >= p_expected AND r.position < v_head;
             IF v_clashes > 0 OR coalesce(cardinality(passed), 0) <> v_head - p_expected THEN
               UPDATE ${s}.logs l SET head = v_head WHERE l.name = p_log; -- nothing written after all
               ok := false;
               "from" := v_head;
               head := v_head;
               passed := NULL;
               RETURN;
             END IF;
           END IF;
           IF v_head IS NULL THEN
             -- refused (or nothing to write): the head found, below p_known when the log went back
             SELECT l.head INTO v_head FROM ${s}.logs l WHERE l.name = p_log;
             IF NOT FOUND THEN
               RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
             END IF;
             ok := v_n = 0 AND v_head >= p_known AND (p_expected IS NULL OR p_expected = v_head);
             "from" := v_head;
             head := v_head;
             RETURN;
           END IF;
           INSERT INTO ${s}.records (log, position, line, batch, key)
             SELECT p_log, v_head + t.o - 1, t.l, CASE WHEN t.o = 1 THEN p_batch END, hashtextextended(p_keys[t.o], 0)
             FROM unnest(p_lines) WITH ORDINALITY AS t(l, o);
           -- delivered when the transaction commits, and only if it does
           PERFORM pg_notify(${literal(`${schema}.`)} || p_log, (v_head + v_n)::text);
           ok := true;
           "from" := v_head;
           head := v_head + v_n;
         END
         $fn$`,
      ];
    },
  },
  {
    version: 4,
    what: 'shared commits: append() becomes a procedure, and a batch that finds the log busy waits in the waiting table for the commit that takes it',
    statements: (schema) => {
      const s = identifier(schema);
      return [
        // Unlogged: a batch waiting here is not acknowledged, so a crash may lose it (the
        // writer's session is lost too, and its look-up finds the batch absent), and a batch
        // put here and taken out again writes no WAL of its own, so its transactions need no flush.
        `CREATE UNLOGGED TABLE ${s}.waiting (
           log text NOT NULL,
           batch uuid NOT NULL,
           at timestamptz NOT NULL DEFAULT clock_timestamp(),
           expected bigint,
           known bigint NOT NULL,
           lines text[] NOT NULL,
           keys text[],
           ok boolean,
           "from" bigint,
           head bigint,
           PRIMARY KEY (log, batch)
         )`,
        `DROP FUNCTION ${s}.append(text, bigint, bigint, uuid, text[], text[])`,
        // One batch put at p_head if the rules of append() let it: its records inserted, the
        // head it makes returned; the caller moves the log's head.
        `CREATE FUNCTION ${s}.place(p_log text, p_head bigint, p_expected bigint, p_known bigint, p_lines text[], p_keys text[], p_batch uuid,
                                    OUT ok boolean, OUT "from" bigint, OUT head bigint, OUT passed text)
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_clashes bigint;
           v_count bigint;
         BEGIN
           ok := false;
           "from" := p_head;
           head := p_head;
           IF p_head < p_known THEN
             RETURN; -- the log went back
           END IF;
           IF p_expected IS NOT NULL AND p_head <> p_expected THEN
             IF p_keys IS NULL OR p_head < p_expected OR p_head - p_expected > ${MAX_PASSED} THEN
               RETURN;
             END IF;
             -- Past records the caller has not seen, all committed or placed before it in this
             -- transaction: the batch goes after them only if none is about one of its keys.
             SELECT string_agg(r.line, E'\\n' ORDER BY r.position), count(*),
                    count(*) FILTER (WHERE r.key IS NULL OR r.key = ANY(ARRAY(SELECT hashtextextended(k, 0) FROM unnest(p_keys) AS k)))
               INTO passed, v_count, v_clashes
               FROM ${s}.records r WHERE r.log = p_log AND r.position >= p_expected AND r.position < p_head;
             IF v_clashes > 0 OR v_count <> p_head - p_expected THEN
               passed := NULL;
               RETURN;
             END IF;
           END IF;
           INSERT INTO ${s}.records (log, position, line, batch, key)
             SELECT p_log, p_head + t.o - 1, t.l, CASE WHEN t.o = 1 THEN p_batch END, hashtextextended(p_keys[t.o], 0)
             FROM unnest(p_lines) WITH ORDINALITY AS t(l, o);
           ok := true;
           head := p_head + cardinality(p_lines);
         END
         $fn$`,
        // In the transaction that holds the log's append lock: places every waiting batch of
        // the log, in the order they came, then (p_lines not null) the caller's own; moves the
        // head once and tells of it. One commit, one WAL flush, for them all.
        `CREATE FUNCTION ${s}.settle(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_lines text[], p_keys text[],
                                     OUT ok boolean, OUT "from" bigint, OUT head bigint, OUT passed text)
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_start bigint;
           v_head bigint;
           v_placed record;
           v_waiting record;
         BEGIN
           -- For this transaction's commit, whatever the session says. (A SET clause on the
           -- function would not do: it is undone when the function returns, before the commit.)
           IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
             PERFORM set_config('synchronous_commit', 'on', true);
           END IF;
           SELECT l.head INTO v_start FROM ${s}.logs l WHERE l.name = p_log;
           IF NOT FOUND THEN
             RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
           END IF;
           v_head := v_start;
           FOR v_waiting IN SELECT * FROM ${s}.waiting w WHERE w.log = p_log AND w.ok IS NULL ORDER BY w.at LOOP
             SELECT * INTO v_placed
               FROM ${s}.place(p_log, v_head, v_waiting.expected, v_waiting.known, v_waiting.lines, v_waiting.keys, v_waiting.batch);
             UPDATE ${s}.waiting w SET ok = v_placed.ok, "from" = v_placed."from", head = v_placed.head
               WHERE w.log = p_log AND w.batch = v_waiting.batch;
             v_head := v_placed.head;
           END LOOP;
           IF p_lines IS NOT NULL THEN
             SELECT * INTO v_placed FROM ${s}.place(p_log, v_head, p_expected, p_known, p_lines, p_keys, p_batch);
             ok := v_placed.ok;
             "from" := v_placed."from";
             head := v_placed.head;
             passed := v_placed.passed;
             v_head := v_placed.head;
           END IF;
           IF v_head <> v_start THEN
             -- only this lock's holder moves the head: it is where it was read
             UPDATE ${s}.logs l SET head = v_head WHERE l.name = p_log;
             -- delivered when the transaction commits, and only if it does
             PERFORM pg_notify(${literal(`${schema}.`)} || p_log, v_head::text);
           END IF;
         END
         $fn$`,
        `CREATE PROCEDURE ${s}.append(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_lines text[], p_keys text[],
                                      INOUT ok boolean DEFAULT NULL, INOUT "from" bigint DEFAULT NULL,
                                      INOUT head bigint DEFAULT NULL, INOUT passed text DEFAULT NULL)
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_n bigint := coalesce(cardinality(p_lines), 0);
           v_lock bigint := ${appendLockKey(schema, 'p_log')};
           v_settled record;
           v_mine ${s}.waiting;
         BEGIN
           IF p_keys IS NOT NULL AND coalesce(cardinality(p_keys), 0) <> v_n THEN
             RAISE EXCEPTION 'ledgerstore: % keys for % records', coalesce(cardinality(p_keys), 0), v_n USING ERRCODE = '22023';
           END IF;
           IF v_n = 0 THEN
             SELECT l.head INTO head FROM ${s}.logs l WHERE l.name = p_log;
             IF NOT FOUND THEN
               RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
             END IF;
             ok := head >= p_known AND (p_expected IS NULL OR p_expected = head);
             "from" := head;
             RETURN;
           END IF;
           IF pg_try_advisory_xact_lock(v_lock) THEN
             SELECT * INTO v_settled FROM ${s}.settle(p_log, p_expected, p_known, p_batch, p_lines, p_keys);
             ok := v_settled.ok;
             "from" := v_settled."from";
             head := v_settled.head;
             passed := v_settled.passed;
             RETURN;
           END IF;
           -- Another writer holds the lock through its commit: the batch waits for the next
           -- commit, whoever makes it. (Unlogged: this commit writes no WAL to flush.)
           INSERT INTO ${s}.waiting (log, batch, expected, known, lines, keys)
             VALUES (p_log, p_batch, p_expected, p_known, p_lines, p_keys);
           COMMIT;
           BEGIN
             PERFORM pg_advisory_xact_lock(v_lock);
             SELECT * INTO v_mine FROM ${s}.waiting w WHERE w.log = p_log AND w.batch = p_batch;
             IF v_mine.ok IS NULL THEN
               PERFORM ${s}.settle(p_log, NULL, NULL, NULL, NULL, NULL);
               SELECT * INTO v_mine FROM ${s}.waiting w WHERE w.log = p_log AND w.batch = p_batch;
             END IF;
             IF v_mine.ok IS NULL THEN
               RAISE EXCEPTION 'ledgerstore: the batch % is no longer in the waiting table', p_batch;
             END IF;
             DELETE FROM ${s}.waiting w WHERE w.log = p_log AND w.batch = p_batch;
             ok := v_mine.ok;
             "from" := v_mine."from";
             head := v_mine.head;
             IF ok AND p_expected IS NOT NULL AND "from" > p_expected THEN
               passed := (SELECT string_agg(r.line, E'\\n' ORDER BY r.position) FROM ${s}.records r
                          WHERE r.log = p_log AND r.position >= p_expected AND r.position < "from");
             END IF;
           EXCEPTION WHEN OTHERS OR query_canceled THEN
             -- the batch is in the waiting table, committed: a later commit may still take it
             RAISE EXCEPTION 'ledgerstore: % (the batch waited for the log''s lock: whether it was written is to be looked up)', SQLERRM
               USING ERRCODE = '${WAITED_STATE}';
           END;
         END
         $fn$`,
      ];
    },
  },
  {
    version: 5,
    what: "a leaner append(): the batch's lines in one text, a turn of the lock that finds no batch waiting written by one statement, and a batch waiting only while its writer does",
    statements: (schema) => {
      const s = identifier(schema);
      return [
        // a writer of version 4 still running finds no procedure to call, and writes nothing;
        // one that waits for the lock in the old procedure is taken by settle(), unchanged
        `DROP PROCEDURE ${s}.append(text, bigint, bigint, uuid, text[], text[], boolean, bigint, bigint, text)`,
        // a batch waits only while its writer does: the waiter holds its batch's lock
        `ALTER TABLE ${s}.waiting ADD COLUMN locked boolean NOT NULL DEFAULT false`,
        // a log that a copy or gen is filling: what fills it (copy, gen), until its last
        // record is written and checked; every other open refuses it (lifecycle.ts)
        `ALTER TABLE ${s}.logs ADD COLUMN unfinished text`,
        `CREATE OR REPLACE FUNCTION ${s}.settle(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_lines text[], p_keys text[],
                                     OUT ok boolean, OUT "from" bigint, OUT head bigint, OUT passed text)
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_start bigint;
           v_head bigint;
           v_placed record;
           v_waiting record;
         BEGIN
           -- For this transaction's commit, whatever the session says. (A SET clause on the
           -- function would not do: it is undone when the function returns, before the commit.)
           IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
             PERFORM set_config('synchronous_commit', 'on', true);
           END IF;
           SELECT l.head INTO v_start FROM ${s}.logs l WHERE l.name = p_log;
           IF NOT FOUND THEN
             RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
           END IF;
           v_head := v_start;
           FOR v_waiting IN SELECT * FROM ${s}.waiting w WHERE w.log = p_log AND w.ok IS NULL ORDER BY w.at LOOP
             -- A batch is placed only while its writer still waits for it: from before its row
             -- is committed until it has its answer, the waiter holds its batch's lock (for the
             -- session: no transaction ends it). A row whose lock is free was given up (the
             -- wait failed, and its writer looks the batch up and finds it absent; or its
             -- session ended): it is taken out, never written. (p_batch: a waiter settling for
             -- itself, whose own lock this session holds. A row of version 4 holds no lock.)
             IF v_waiting.locked AND v_waiting.batch IS DISTINCT FROM p_batch
                AND pg_try_advisory_xact_lock(${batchLockKey('v_waiting.batch')}) THEN
               DELETE FROM ${s}.waiting w WHERE w.log = p_log AND w.batch = v_waiting.batch;
               CONTINUE;
             END IF;
             SELECT * INTO v_placed
               FROM ${s}.place(p_log, v_head, v_waiting.expected, v_waiting.known, v_waiting.lines, v_waiting.keys, v_waiting.batch);
             UPDATE ${s}.waiting w SET ok = v_placed.ok, "from" = v_placed."from", head = v_placed.head
               WHERE w.log = p_log AND w.batch = v_waiting.batch;
             v_head := v_placed.head;
           END LOOP;
           IF p_lines IS NOT NULL THEN
             SELECT * INTO v_placed FROM ${s}.place(p_log, v_head, p_expected, p_known, p_lines, p_keys, p_batch);
             ok := v_placed.ok;
             "from" := v_placed."from";
             head := v_placed.head;
             passed := v_placed.passed;
             v_head := v_placed.head;
           END IF;
           IF v_head <> v_start THEN
             -- only this lock's holder moves the head: it is where it was read
             UPDATE ${s}.logs l SET head = v_head WHERE l.name = p_log;
             -- delivered when the transaction commits, and only if it does
             PERFORM pg_notify(${literal(`${schema}.`)} || p_log, v_head::text);
           END IF;
         END
         $fn$`,
        // p_lines: the batch's lines joined by newlines (a line holds none), p_count of them. No
        // defaults: a call of version 4's ten arguments matches no procedure, and writes nothing.
        `CREATE PROCEDURE ${s}.append(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_count integer,
                                      p_lines text, p_keys text[],
                                      INOUT ok boolean, INOUT "from" bigint, INOUT head bigint, INOUT passed text)
         LANGUAGE plpgsql AS $fn$
         DECLARE
           v_lines text[] := CASE WHEN p_count > 0 THEN string_to_array(p_lines, E'\\n') END;
           v_n bigint := coalesce(cardinality(v_lines), 0);
           v_lock bigint := ${appendLockKey(schema, 'p_log')};
           v_settled record;
           v_mine ${s}.waiting;
         BEGIN
           IF v_n <> greatest(p_count, 0) THEN
             RAISE EXCEPTION 'ledgerstore: a batch of % records came as % lines: a line holds a newline, which its codec must not write', p_count, v_n
               USING ERRCODE = '22023';
           END IF;
           IF p_keys IS NOT NULL AND coalesce(cardinality(p_keys), 0) <> v_n THEN
             RAISE EXCEPTION 'ledgerstore: % keys for % records', coalesce(cardinality(p_keys), 0), v_n USING ERRCODE = '22023';
           END IF;
           IF v_n = 0 THEN
             SELECT l.head INTO head FROM ${s}.logs l WHERE l.name = p_log;
             IF NOT FOUND THEN
               RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
             END IF;
             ok := head >= p_known AND (p_expected IS NULL OR p_expected = head);
             "from" := head;
             RETURN;
           END IF;
           IF pg_try_advisory_xact_lock(v_lock) THEN
             IF NOT EXISTS (SELECT FROM ${s}.waiting w WHERE w.log = p_log AND w.ok IS NULL) THEN
               -- The common turn: no batch waits, and the head is where the writer expected it
               -- (or anywhere at or past the head it knew, with no expected head): the head
               -- moved, the records inserted and the new head told, in one statement. Any
               -- other turn is settle()'s, which knows every rule.
               IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
                 PERFORM set_config('synchronous_commit', 'on', true);
               END IF;
               WITH moved AS (
                 UPDATE ${s}.logs l SET head = l.head + v_n
                   WHERE l.name = p_log AND l.head >= p_known AND (p_expected IS NULL OR l.head = p_expected)
                   RETURNING l.head - v_n AS at, l.head AS head
               ), put AS (
                 INSERT INTO ${s}.records (log, position, line, batch, key)
                   SELECT p_log, m.at + t.o - 1, t.l, CASE WHEN t.o = 1 THEN p_batch END, hashtextextended(p_keys[t.o], 0)
                   FROM moved m, unnest(v_lines) WITH ORDINALITY AS t(l, o)
               )
               SELECT m.at, m.head INTO "from", head
                 FROM moved m, pg_notify(${literal(`${schema}.`)} || p_log, m.head::text) AS told;
               IF FOUND THEN
                 ok := true;
                 RETURN;
               END IF;
             END IF;
             SELECT * INTO v_settled FROM ${s}.settle(p_log, p_expected, p_known, p_batch, v_lines, p_keys);
             ok := v_settled.ok;
             "from" := v_settled."from";
             head := v_settled.head;
             passed := v_settled.passed;
             RETURN;
           END IF;
           -- Another writer holds the lock through its commit: the batch waits for the next
           -- commit, whoever makes it, while this session waits with it and holds its batch's
           -- lock (settle() takes out a row whose lock is free). (Unlogged: this commit writes
           -- no WAL to flush.)
           PERFORM pg_advisory_lock(${batchLockKey('p_batch')});
           INSERT INTO ${s}.waiting (log, batch, expected, known, lines, keys, locked)
             VALUES (p_log, p_batch, p_expected, p_known, v_lines, p_keys, true);
           COMMIT;
           BEGIN
             PERFORM pg_advisory_xact_lock(v_lock);
             SELECT * INTO v_mine FROM ${s}.waiting w WHERE w.log = p_log AND w.batch = p_batch;
             IF v_mine.ok IS NULL THEN
               PERFORM ${s}.settle(p_log, NULL, NULL, p_batch, NULL, NULL);
               SELECT * INTO v_mine FROM ${s}.waiting w WHERE w.log = p_log AND w.batch = p_batch;
             END IF;
             IF v_mine.ok IS NULL THEN
               RAISE EXCEPTION 'ledgerstore: the batch % is no longer in the waiting table', p_batch;
             END IF;
           EXCEPTION WHEN OTHERS OR query_canceled THEN
             -- Given up: its lock let go (a session lock, which the block's rollback leaves), no
             -- later commit writes it; one before may have: the writer looks it up.
             PERFORM pg_advisory_unlock(${batchLockKey('p_batch')});
             RAISE EXCEPTION 'ledgerstore: % (the batch waited for the log''s lock: whether it was written is to be looked up)', SQLERRM
               USING ERRCODE = '${WAITED_STATE}';
           END;
           PERFORM pg_advisory_unlock(${batchLockKey('p_batch')});
           ok := v_mine.ok;
           "from" := v_mine."from";
           head := v_mine.head;
           -- The answer is taken: the lock goes with this commit (its flush, where this turn
           -- wrote records), so that the next turn does not wait for what follows: the row's
           -- removal, and the records the batch went past, committed and fixed by now.
           COMMIT;
           BEGIN
             DELETE FROM ${s}.waiting w WHERE w.log = p_log AND w.batch = p_batch;
             IF ok AND p_expected IS NOT NULL AND "from" > p_expected THEN
               passed := (SELECT string_agg(r.line, E'\\n' ORDER BY r.position) FROM ${s}.records r
                          WHERE r.log = p_log AND r.position >= p_expected AND r.position < "from");
             END IF;
           EXCEPTION WHEN OTHERS OR query_canceled THEN
             -- written or not, as the answer says; the writer finds out which as after a lost connection
             RAISE EXCEPTION 'ledgerstore: % (after the batch waited for the log''s lock: whether it was written is to be looked up)', SQLERRM
               USING ERRCODE = '${WAITED_STATE}';
           END;
         END
         $fn$`,
      ];
    },
  },
];

/**
 * The SQLSTATE of an append that failed after its batch was put in the waiting table
 * (version 4): the batch may still be written by another writer's commit, so the writer finds
 * out as after a lost connection.
 */
export const WAITED_STATE = 'LSWTD';

/**
 * The key of the advisory lock that a log's appends take, through their commit (version 4), as
 * SQL of `log` (an SQL expression of the log's name).
 */
export function appendLockKey(schema: string, log: string): string {
  return `hashtextextended(${literal(`ledgerstore append ${schema}.`)} || ${log}, 0)`;
}

/**
 * The key of the lock a waiting batch's writer holds while it waits (version 5), as SQL of
 * `batch` (an SQL expression of the batch's uuid).
 */
export function batchLockKey(batch: string): string {
  return `hashtextextended(${literal('ledgerstore batch ')} || ${batch}::text, 0)`;
}

/** `text` as an SQL string literal. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** A checked schema name as an SQL identifier. */
export function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The channel on which `append` tells of a log's new head. */
export function channelOf(place: PostgresPlace): string {
  return `${place.schema}.${place.log}`;
}

/** A bigint column, which node-postgres gives as text, as a position. */
export function positionOf(name: string, value: unknown): Position {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new DamagedError(name, 0, `the database gives ${String(value)} as a position, which is not one`);
  return n;
}

/** The failure of an open whose server or role cannot hold a log, said plainly. */
function refusal(name: string, why: string): LedgerIoError {
  return new LedgerIoError(name, new Error(why));
}

/**
 * Checks the server before anything is read: its encoding (records are UTF-8 text), and for
 * writing that it syncs (`fsync`) and accepts writes (not a standby).
 * @throws {@link LedgerIoError} saying what is wrong and what to do
 */
export async function checkServer(db: Queryable, place: PostgresPlace, writable: boolean): Promise<void> {
  let row: { encoding: string; fsync: string; recovery: boolean; readonly: string } | undefined;
  try {
    ({
      rows: [row],
    } = await db.query<{ encoding: string; fsync: string; recovery: boolean; readonly: string }>(
      `SELECT current_setting('server_encoding') AS encoding, current_setting('fsync') AS fsync,
              pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS readonly`,
    ));
  } catch (e) {
    throw serverFailure(place.name, 'looking at the server', e);
  }
  if (row === undefined) throw refusal(place.name, 'the server did not say what it is');
  if (row.encoding !== 'UTF8') {
    throw refusal(
      place.name,
      `the database's encoding is ${row.encoding}; ledgerstore stores records as UTF-8 text and needs a UTF8 database (createdb -E UTF8)`,
    );
  }
  if (!writable) return;
  if (row.fsync !== 'on') {
    throw refusal(
      place.name,
      'the server runs with fsync=off, so an acknowledged append would not survive a crash of its machine; turn fsync on, or open the ledger read-only',
    );
  }
  if (row.recovery || row.readonly === 'on') {
    throw refusal(
      place.name,
      'the server accepts only reads (a standby, or default_transaction_read_only); connect to the primary, or open the ledger read-only',
    );
  }
}

/** The schema's version, or `null` when it has no `meta` table (no ledgerstore schema yet). */
export async function versionOf(db: Queryable, place: PostgresPlace): Promise<number | null> {
  const s = identifier(place.schema);
  const {
    rows: [present],
  } = await db.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [`${s}.meta`]);
  if (present?.present !== true) return null;
  const { rows } = await db.query<{ format: string; version: number }>(`SELECT format, version FROM ${s}.meta`);
  const ours = rows.find((row) => row.format === FORMAT);
  if (ours === undefined)
    throw new DamagedError(
      place.name,
      0,
      `the schema ${place.schema} has a meta table that is not ledgerstore's (no ${FORMAT} row): not a schema that ledgerstore made`,
    );
  return ours.version;
}

/** Damage: a schema of a version that this ledgerstore cannot read as it is. */
export function otherVersion(place: PostgresPlace, version: number, writable: boolean): DamagedError {
  const what =
    version > SCHEMA_VERSION
      ? 'a later ledgerstore made it; use that version, or a later one'
      : writable
        ? 'it has no migration to this version'
        : 'open it for writing once, which migrates it';
  return new DamagedError(
    place.name,
    0,
    `the schema ${place.schema} is in version ${version} of ledgerstore's PostgreSQL format, which this ledgerstore does not read (it reads version ${SCHEMA_VERSION}): ${what}`,
  );
}

/**
 * For a writable open, in one transaction: makes the schema, or migrates it, checks that the
 * role may write the log, and adds the log's row. Gives the log's {@link LogState}. On any
 * refusal the transaction rolls back and nothing is changed.
 * @throws {@link DamagedError} for a schema of another version; {@link LedgerIoError} for a role that may not write, or a server failure
 */
export async function prepareToWrite(db: Queryable, place: PostgresPlace): Promise<LogState> {
  const s = identifier(place.schema);
  let doing = 'opening a transaction';
  try {
    await db.query('BEGIN');
    try {
      doing = 'waiting for the schema lock';
      await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`ledgerstore schema ${place.schema}`]);
      doing = `looking at the schema ${place.schema}`;
      const version = await versionOf(db, place);
      if (version !== null && version > SCHEMA_VERSION) throw otherVersion(place, version, true);
      if (version === null) {
        const {
          rows: [there],
        } = await db.query<{ there: boolean }>('SELECT to_regnamespace($1) IS NOT NULL AS there', [s]);
        doing = `creating the schema ${place.schema}`;
        if (there?.there !== true) await db.query(`CREATE SCHEMA ${s}`);
      }
      for (const migration of MIGRATIONS) {
        if (migration.version <= (version ?? 0)) continue;
        doing = `${version === null ? 'creating' : 'migrating'} the schema ${place.schema} (version ${migration.version}: ${migration.what})`;
        for (const statement of migration.statements(place.schema)) await db.query(statement);
        await db.query(`UPDATE ${s}.meta SET version = $1 WHERE format = $2`, [migration.version, FORMAT]);
      }
      doing = 'checking the role';
      await checkMayWrite(db, place);
      doing = `adding the log ${place.log}`;
      await db.query(`INSERT INTO ${s}.logs (name) VALUES ($1) ON CONFLICT DO NOTHING`, [place.log]);
      // answers that no writer came back for (one killed while it waited): no call waits an hour
      await db.query(`DELETE FROM ${s}.waiting WHERE log = $1 AND ok IS NOT NULL AND at < now() - interval '1 hour'`, [
        place.log,
      ]);
      const state = await stateOf(db, place);
      doing = 'committing';
      await db.query('COMMIT');
      return state;
    } catch (e) {
      await db.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  } catch (e) {
    if (e instanceof DamagedError || e instanceof LedgerIoError) throw e;
    throw serverFailure(place.name, doing, e);
  }
}

/** Refuses a role that lacks a privilege an append needs, naming each. */
async function checkMayWrite(db: Queryable, place: PostgresPlace): Promise<void> {
  const s = identifier(place.schema);
  const needs: readonly [string, string, string][] = [
    ['table', `${s}.logs`, 'INSERT'],
    ['table', `${s}.logs`, 'UPDATE'],
    ['table', `${s}.records`, 'INSERT'],
    ['table', `${s}.waiting`, 'INSERT'],
    ['table', `${s}.waiting`, 'UPDATE'],
    ['table', `${s}.waiting`, 'DELETE'],
    [
      'function',
      `${s}.append(text, bigint, bigint, uuid, integer, text, text[], boolean, bigint, bigint, text)`,
      'EXECUTE',
    ],
  ];
  const {
    rows: [row],
  } = await db.query<{ role: string; has: boolean[] }>(
    `SELECT current_user AS role, ARRAY[${needs.map(([kind], n) => `has_${kind}_privilege($${2 * n + 1}, $${2 * n + 2})`).join(', ')}] AS has`,
    needs.flatMap(([, object, privilege]) => [object, privilege]),
  );
  const missing = needs
    .filter((_, n) => row?.has[n] !== true)
    .map(([, object, privilege]) => `${privilege} on ${object}`);
  if (missing.length > 0) {
    throw refusal(
      place.name,
      `the role ${row?.role ?? '?'} may not write this log: it lacks ${missing.join(', ')}; open the ledger read-only, or grant them (see docs/postgres.md, "Roles")`,
    );
  }
}

/**
 * For a read-only open: looks, writes nothing. Gives the log's {@link LogState}, head 0 when the database has no
 * ledgerstore schema or no such log.
 * @throws {@link DamagedError} for a schema of another version
 */
export async function lookToRead(db: Queryable, place: PostgresPlace): Promise<LogState> {
  try {
    const version = await versionOf(db, place);
    if (version === null) return { head: 0, unfinished: null };
    if (version !== SCHEMA_VERSION) throw otherVersion(place, version, false);
    return await stateOf(db, place);
  } catch (e) {
    if (e instanceof DamagedError) throw e;
    throw serverFailure(place.name, `looking at the schema ${place.schema}`, e);
  }
}

/** A log's row: its head, and what fills it while a copy or gen does (`null` once it is a ledger). */
export interface LogState {
  readonly head: Position;
  readonly unfinished: string | null;
}

/**
 * The log's head in the database now; 0 when it has no row, or (for a reader that opened
 * before any writer made the schema) no table.
 */
export async function headOf(db: Queryable, place: PostgresPlace): Promise<Position> {
  return (await stateOf(db, place)).head;
}

/** The log's {@link LogState} in the database now: as {@link headOf}, and whether it is unfinished. */
export async function stateOf(db: Queryable, place: PostgresPlace): Promise<LogState> {
  try {
    const {
      rows: [row],
    } = await db.query<{ head: string; unfinished: string | null }>(
      `SELECT head, unfinished FROM ${identifier(place.schema)}.logs WHERE name = $1`,
      [place.log],
    );
    return row === undefined
      ? { head: 0, unfinished: null }
      : { head: positionOf(place.name, row.head), unfinished: row.unfinished };
  } catch (e) {
    if (sqlState(e) === '42P01') return { head: 0, unfinished: null };
    throw e;
  }
}
