-- A merchant's retry of a FAILED payment (POST /payments/{id}/retry/) records its Idempotency-Key
-- and the request's fingerprint with the run it started, in the retry's own Postgres transaction.
-- The idempotency layer hands a key whose request died mid-way (its process killed after the
-- commit, before the response was stored) to the next request once the lease has passed; that
-- request finds the run the first one started and answers it instead of starting another
-- (found by make chaos: one key, two runs).
CREATE TABLE transaction_retries (
    transaction_id          uuid NOT NULL REFERENCES transactions (id),
    idempotency_key         text NOT NULL,
    idempotency_fingerprint bytea,
    run                     int NOT NULL CHECK (run > 1),
    created_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (transaction_id, idempotency_key)
);
