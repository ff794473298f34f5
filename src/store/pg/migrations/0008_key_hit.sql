-- A key's hit, recorded at COMMIT (store/pg/event-logs.ts): the key's row
-- lock, its window read again under it, then the hit, in one statement sent
-- with COMMIT, so one busy key's transactions hold the lock for the COMMIT
-- only, with no round trip of theirs in between. Each statement of a
-- PL/pgSQL function takes its own snapshot (READ COMMITTED): the reads after
-- the lock see the hit its previous holder committed.
CREATE FUNCTION "otpd_key_hit"("p_key" integer, "p_at" bigint, "p_max" integer, "p_window_ms" bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  last_seq bigint;
  nth_at bigint;
BEGIN
  PERFORM 1 FROM api_keys WHERE id = p_key FOR NO KEY UPDATE;
  SELECT max(seq) INTO last_seq FROM key_hits WHERE key_id = p_key;
  IF p_max IS NOT NULL AND last_seq IS NOT NULL THEN
    SELECT at INTO nth_at FROM key_hits WHERE key_id = p_key AND seq = last_seq - p_max + 1;
    IF nth_at IS NOT NULL AND nth_at + p_window_ms > p_at THEN
      RAISE EXCEPTION 'key %: its window filled before this request committed', p_key USING ERRCODE = 'OT429';
    END IF;
  END IF;
  INSERT INTO key_hits (key_id, seq, at) VALUES (p_key, coalesce(last_seq, 0) + 1, p_at);
END
$$;
