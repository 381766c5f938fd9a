-- The request behind a transaction's idempotency key (issue 17): the SHA-256 of method, path and
-- canonical body, the same hash the API's idempotency_keys rows hold. When the API's record of a
-- key is gone (released after a 5xx, or purged after its 24 hours), the transaction's unique key
-- still catches a replay; the fingerprint tells the same request (answered with the existing
-- transaction) from another one (409 idempotency_key_reused). NULL on rows written before it:
-- those keep answering the existing transaction.
ALTER TABLE transactions ADD COLUMN idempotency_fingerprint bytea;
