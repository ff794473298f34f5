-- A send's debit (store/pg/balances.ts), in one statement that nothing has to
-- wait for: one free row of the account's balance that covers the amount
-- (FOR UPDATE SKIP LOCKED), else every row locked in stripe order, waiting
-- for their holders, and the amount taken on the total; with its ledger row.
-- Each statement of a PL/pgSQL function takes its own snapshot (READ
-- COMMITTED): the rows locked by the second see what their holders committed.
-- When the total does not cover the amount: false, or, with `p_raise`, an
-- error with SQLSTATE OT402 that rolls the transaction back, so that a send
-- can send its debit pipelined and learn at COMMIT that it ran again with
-- the debit awaited (store/pg/storage.ts).
CREATE FUNCTION "otpd_debit"("p_amount" bigint, "p_account" integer, "p_verification" text, "p_note" text, "p_at" bigint, "p_stripe" integer, "p_raise" boolean) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  moved integer;
BEGIN
  WITH picked AS MATERIALIZED (
    SELECT stripe FROM account_balances WHERE account_id = p_account AND balance >= p_amount
    ORDER BY (stripe - p_stripe + 16) % 16 LIMIT 1 FOR UPDATE SKIP LOCKED
  ), taken AS (
    UPDATE account_balances b SET balance = b.balance - p_amount FROM picked
    WHERE b.account_id = p_account AND b.stripe = picked.stripe AND b.balance >= p_amount RETURNING b.account_id
  )
  INSERT INTO credit_ledger (account_id, kind, amount, verification_id, note, created_at)
  SELECT account_id, 'debit', p_amount, p_verification, p_note, p_at FROM taken;
  GET DIAGNOSTICS moved = ROW_COUNT;
  IF moved = 0 THEN
    WITH held AS MATERIALIZED (
      SELECT stripe, balance FROM account_balances WHERE account_id = p_account ORDER BY stripe FOR UPDATE
    ), covered AS (
      SELECT 1 FROM held HAVING coalesce(sum(balance), 0) >= p_amount
    ), plan AS (
      SELECT stripe, least(balance, p_amount - (sum(balance) OVER (ORDER BY stripe) - balance)) AS amount
      FROM held WHERE balance > 0
    ), taken AS (
      UPDATE account_balances b SET balance = b.balance - plan.amount FROM plan
      WHERE EXISTS (SELECT 1 FROM covered) AND b.account_id = p_account AND b.stripe = plan.stripe AND plan.amount > 0
      RETURNING b.account_id
    )
    INSERT INTO credit_ledger (account_id, kind, amount, verification_id, note, created_at)
    SELECT p_account, 'debit', p_amount, p_verification, p_note, p_at WHERE EXISTS (SELECT 1 FROM taken);
    GET DIAGNOSTICS moved = ROW_COUNT;
  END IF;
  IF moved = 0 AND p_raise THEN
    RAISE EXCEPTION 'account %: its balance does not cover % credit(s)', p_account, p_amount USING ERRCODE = 'OT402';
  END IF;
  RETURN moved > 0;
END
$$;
