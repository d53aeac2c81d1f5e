-- ledgerstore's PostgreSQL schema, version 1 (schema.ts says how it is used).
--
-- Run whole, in the transaction that makes the schema, after CREATE SCHEMA. Its variables are
-- psql's, filled in by sql-text.ts: :"schema" is the schema's name as an identifier,
-- :'format' a value as a literal, :max_passed a value as it is. A released version is never
-- changed: the next one is a migration of its own (sql/v2.sql), from this one.

CREATE TABLE :"schema".meta (format text PRIMARY KEY, version integer NOT NULL);

-- fillfactor leaves room on the page for the head's updates to stay HOT. unfinished: what fills
-- the log (copy, gen) until its last record is written and checked; every other open refuses it
CREATE TABLE :"schema".logs (
  name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,48}$'),
  head bigint NOT NULL DEFAULT 0 CHECK (head >= 0),
  unfinished text
) WITH (fillfactor = 50);

-- No foreign key to logs: its check per inserted row doubles the cost of a large batch. batch:
-- on a batch's first record, the uuid its writer made for it, else null (which costs nothing:
-- the tuple header's null bitmap fits in the padding it has anyway). key: a hash of the
-- caller's key, 8 bytes a record; two keys that share one only make a conflict that a catch-up
-- resolves; null (no key given) clashes with every key.
CREATE TABLE :"schema".records (
  log text NOT NULL,
  position bigint NOT NULL CHECK (position >= 0),
  line text NOT NULL,
  batch uuid,
  key bigint,
  PRIMARY KEY (log, position)
);

-- Unlogged: a batch waiting here is not acknowledged, so a crash may lose it (the writer's
-- session is lost too, and its look-up finds the batch absent), and a batch put here and taken
-- out again writes no WAL of its own, so its transactions need no flush. locked: the waiter
-- holds its batch's lock while it waits (a batch waits only while its writer does).
CREATE UNLOGGED TABLE :"schema".waiting (
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
  locked boolean NOT NULL DEFAULT false,
  PRIMARY KEY (log, batch)
);

-- One batch put at p_head if the rules of append() let it: its records inserted, the head it
-- makes returned; the caller moves the log's head.
CREATE FUNCTION :"schema".place(p_log text, p_head bigint, p_expected bigint, p_known bigint, p_lines text[], p_keys text[], p_batch uuid,
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
    IF p_keys IS NULL OR p_head < p_expected OR p_head - p_expected > :max_passed THEN
      RETURN;
    END IF;
    -- Past records the caller has not seen, all committed or placed before it in this
    -- transaction: the batch goes after them only if none is about one of its keys.
    SELECT string_agg(r.line, E'\n' ORDER BY r.position), count(*),
           count(*) FILTER (WHERE r.key IS NULL OR r.key = ANY(ARRAY(SELECT hashtextextended(k, 0) FROM unnest(p_keys) AS k)))
      INTO passed, v_count, v_clashes
      FROM :"schema".records r WHERE r.log = p_log AND r.position >= p_expected AND r.position < p_head;
    IF v_clashes > 0 OR v_count <> p_head - p_expected THEN
      passed := NULL;
      RETURN;
    END IF;
  END IF;
  INSERT INTO :"schema".records (log, position, line, batch, key)
    SELECT p_log, p_head + t.o - 1, t.l, CASE WHEN t.o = 1 THEN p_batch END, hashtextextended(p_keys[t.o], 0)
    FROM unnest(p_lines) WITH ORDINALITY AS t(l, o);
  ok := true;
  head := p_head + cardinality(p_lines);
END
$fn$;


-- In the transaction that holds the log's append lock: places every waiting batch of the log,
-- in the order they came, then (p_lines not null) the caller's own; moves the head once and
-- tells of it. One commit, one WAL flush, for them all.
CREATE FUNCTION :"schema".settle(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_lines text[], p_keys text[],
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
  SELECT l.head INTO v_start FROM :"schema".logs l WHERE l.name = p_log;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
  END IF;
  v_head := v_start;
  FOR v_waiting IN SELECT * FROM :"schema".waiting w WHERE w.log = p_log AND w.ok IS NULL ORDER BY w.at LOOP
    -- A batch is placed only while its writer still waits for it: from before its row
    -- is committed until it has its answer, the waiter holds its batch's lock (for the
    -- session: no transaction ends it). A row whose lock is free was given up (the
    -- wait failed, and its writer looks the batch up and finds it absent; or its
    -- session ended): it is taken out, never written. (p_batch: a waiter settling for
    -- itself, whose own lock this session holds. A row not locked is placed as it is.)
    IF v_waiting.locked AND v_waiting.batch IS DISTINCT FROM p_batch
       AND pg_try_advisory_xact_lock(hashtextextended(:'batch_lock_prefix' || v_waiting.batch::text, 0)) THEN
      DELETE FROM :"schema".waiting w WHERE w.log = p_log AND w.batch = v_waiting.batch;
      CONTINUE;
    END IF;
    SELECT * INTO v_placed
      FROM :"schema".place(p_log, v_head, v_waiting.expected, v_waiting.known, v_waiting.lines, v_waiting.keys, v_waiting.batch);
    UPDATE :"schema".waiting w SET ok = v_placed.ok, "from" = v_placed."from", head = v_placed.head
      WHERE w.log = p_log AND w.batch = v_waiting.batch;
    v_head := v_placed.head;
  END LOOP;
  IF p_lines IS NOT NULL THEN
    SELECT * INTO v_placed FROM :"schema".place(p_log, v_head, p_expected, p_known, p_lines, p_keys, p_batch);
    ok := v_placed.ok;
    "from" := v_placed."from";
    head := v_placed.head;
    passed := v_placed.passed;
    v_head := v_placed.head;
  END IF;
  IF v_head <> v_start THEN
    -- only this lock's holder moves the head: it is where it was read
    UPDATE :"schema".logs l SET head = v_head WHERE l.name = p_log;
    -- delivered when the transaction commits, and only if it does
    PERFORM pg_notify(:'channel_prefix' || p_log, v_head::text);
  END IF;
END
$fn$;


-- The only writer. p_lines: the batch's lines joined by newlines (a line holds none), p_count
-- of them. No defaults: a call of other arguments matches no procedure, and writes nothing.
CREATE PROCEDURE :"schema".append(p_log text, p_expected bigint, p_known bigint, p_batch uuid, p_count integer,
                             p_lines text, p_keys text[],
                             INOUT ok boolean, INOUT "from" bigint, INOUT head bigint, INOUT passed text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_lines text[] := CASE WHEN p_count > 0 THEN string_to_array(p_lines, E'\n') END;
  v_n bigint := coalesce(cardinality(v_lines), 0);
  v_lock bigint := hashtextextended(:'append_lock_prefix' || p_log, 0);
  v_settled record;
  v_mine :"schema".waiting;
BEGIN
  IF v_n <> greatest(p_count, 0) THEN
    RAISE EXCEPTION 'ledgerstore: a batch of % records came as % lines: a line holds a newline, which its codec must not write', p_count, v_n
      USING ERRCODE = '22023';
  END IF;
  IF p_keys IS NOT NULL AND coalesce(cardinality(p_keys), 0) <> v_n THEN
    RAISE EXCEPTION 'ledgerstore: % keys for % records', coalesce(cardinality(p_keys), 0), v_n USING ERRCODE = '22023';
  END IF;
  IF v_n = 0 THEN
    SELECT l.head INTO head FROM :"schema".logs l WHERE l.name = p_log;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'ledgerstore: there is no log named %', p_log USING ERRCODE = 'P0002';
    END IF;
    ok := head >= p_known AND (p_expected IS NULL OR p_expected = head);
    "from" := head;
    RETURN;
  END IF;
  IF pg_try_advisory_xact_lock(v_lock) THEN
    IF NOT EXISTS (SELECT FROM :"schema".waiting w WHERE w.log = p_log AND w.ok IS NULL) THEN
      -- The common turn: no batch waits, and the head is where the writer expected it
      -- (or anywhere at or past the head it knew, with no expected head): the head
      -- moved, the records inserted and the new head told, in one statement. Any
      -- other turn is settle()'s, which knows every rule.
      IF current_setting('synchronous_commit') NOT IN ('on', 'remote_apply') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
      END IF;
      WITH moved AS (
        UPDATE :"schema".logs l SET head = l.head + v_n
          WHERE l.name = p_log AND l.head >= p_known AND (p_expected IS NULL OR l.head = p_expected)
          RETURNING l.head - v_n AS at, l.head AS head
      ), put AS (
        INSERT INTO :"schema".records (log, position, line, batch, key)
          SELECT p_log, m.at + t.o - 1, t.l, CASE WHEN t.o = 1 THEN p_batch END, hashtextextended(p_keys[t.o], 0)
          FROM moved m, unnest(v_lines) WITH ORDINALITY AS t(l, o)
      )
      SELECT m.at, m.head INTO "from", head
        FROM moved m, pg_notify(:'channel_prefix' || p_log, m.head::text) AS told;
      IF FOUND THEN
        ok := true;
        RETURN;
      END IF;
    END IF;
    SELECT * INTO v_settled FROM :"schema".settle(p_log, p_expected, p_known, p_batch, v_lines, p_keys);
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
  PERFORM pg_advisory_lock(hashtextextended(:'batch_lock_prefix' || p_batch::text, 0));
  INSERT INTO :"schema".waiting (log, batch, expected, known, lines, keys, locked)
    VALUES (p_log, p_batch, p_expected, p_known, v_lines, p_keys, true);
  COMMIT;
  BEGIN
    PERFORM pg_advisory_xact_lock(v_lock);
    SELECT * INTO v_mine FROM :"schema".waiting w WHERE w.log = p_log AND w.batch = p_batch;
    IF v_mine.ok IS NULL THEN
      PERFORM :"schema".settle(p_log, NULL, NULL, p_batch, NULL, NULL);
      SELECT * INTO v_mine FROM :"schema".waiting w WHERE w.log = p_log AND w.batch = p_batch;
    END IF;
    IF v_mine.ok IS NULL THEN
      RAISE EXCEPTION 'ledgerstore: the batch % is no longer in the waiting table', p_batch;
    END IF;
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    -- Given up: its lock let go (a session lock, which the block's rollback leaves), no
    -- later commit writes it; one before may have: the writer looks it up.
    PERFORM pg_advisory_unlock(hashtextextended(:'batch_lock_prefix' || p_batch::text, 0));
    RAISE EXCEPTION 'ledgerstore: % (the batch waited for the log''s lock: whether it was written is to be looked up)', SQLERRM
      USING ERRCODE = :'waited_state';
  END;
  PERFORM pg_advisory_unlock(hashtextextended(:'batch_lock_prefix' || p_batch::text, 0));
  ok := v_mine.ok;
  "from" := v_mine."from";
  head := v_mine.head;
  -- The answer is taken: the lock goes with this commit (its flush, where this turn
  -- wrote records), so that the next turn does not wait for what follows: the row's
  -- removal, and the records the batch went past, committed and fixed by now.
  COMMIT;
  BEGIN
    DELETE FROM :"schema".waiting w WHERE w.log = p_log AND w.batch = p_batch;
    IF ok AND p_expected IS NOT NULL AND "from" > p_expected THEN
      passed := (SELECT string_agg(r.line, E'\n' ORDER BY r.position) FROM :"schema".records r
                 WHERE r.log = p_log AND r.position >= p_expected AND r.position < "from");
    END IF;
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    -- written or not, as the answer says; the writer finds out which as after a lost connection
    RAISE EXCEPTION 'ledgerstore: % (after the batch waited for the log''s lock: whether it was written is to be looked up)', SQLERRM
      USING ERRCODE = :'waited_state';
  END;
END
$fn$;

INSERT INTO :"schema".meta (format, version) VALUES (:'format', 1);
