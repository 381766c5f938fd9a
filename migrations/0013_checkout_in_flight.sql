-- At most one payment in flight per checkout session (issue 17, case 3). Before this index two
-- payments of one session could be PENDING together (two customers on the hosted page, one
-- customer on two devices): both could succeed at the operator and both were credited. Now the
-- second INSERT (or a retry that moves a FAILED payment of the session back to PENDING) is
-- refused by Postgres with a unique violation on transactions_checkout_in_flight, which store/
-- turns into 409 checkout_payment_in_progress (paymentInProgress in store/checkout.go). The
-- row lock CreateCheckoutPayment takes on the session stays: it orders a payment against cancel
-- and expiry; this index is what makes two concurrent payments impossible, whatever the code
-- path. Rows without a session (softpay, payment links) are left out of the index: it only
-- ever holds a session's in-flight payment.
--
-- A database may already hold two PENDING payments of one session, made before this migration.
-- A unique index cannot be built over them, and neither of them may be changed here: each is a
-- push the customer may still approve, whose workflow will complete it (moving one to FAILED, or
-- detaching it from its session, would lose or misfile money the customer actually paid). Nor
-- is refusing to migrate an answer: a payment may stay PENDING for a long time while Sika awaits
-- the operator, and the service would not start meanwhile. So such payments are left alone and
-- left out: the oldest PENDING payment of each session stays in the index, the later ones are
-- named in its predicate (id <> ALL (...)) and a WARNING lists them in the server log. They end
-- as payments did before (each credited if it succeeds; the session is PAID once). The index
-- does not see them: until they end, and if one is retried, their session may have one more
-- payment in flight than the rule allows, as it could before. On a database without such
-- payments (every new one) the predicate is the rule alone.
--
-- The build takes a SHARE lock on transactions (migrations run in a transaction, so not
-- CONCURRENTLY): payments wait for the length of one scan of the table.
DO $$
DECLARE
    grandfathered uuid[];
BEGIN
    SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO grandfathered
    FROM (SELECT id, row_number() OVER (PARTITION BY checkout_session_id ORDER BY created_at, id) AS n
          FROM transactions WHERE status = 'PENDING' AND checkout_session_id IS NOT NULL) p
    WHERE n > 1;
    IF cardinality(grandfathered) = 0 THEN
        CREATE UNIQUE INDEX transactions_checkout_in_flight ON transactions (checkout_session_id)
            WHERE status = 'PENDING' AND checkout_session_id IS NOT NULL;
    ELSE
        RAISE WARNING 'transactions_checkout_in_flight: % PENDING payments share their checkout session with an older PENDING payment and are left out of the index: %',
            cardinality(grandfathered), grandfathered;
        EXECUTE format('CREATE UNIQUE INDEX transactions_checkout_in_flight ON transactions (checkout_session_id)
            WHERE status = ''PENDING'' AND checkout_session_id IS NOT NULL AND id <> ALL (%L::uuid[])', grandfathered);
    END IF;
END
$$;
