-- One softpay acceptance as the service writes it to Postgres, for pgbench (cmd/sikabench):
-- the Idempotency-Key claim (api.idempotent, store.ClaimIdempotencyKey), then one transaction
-- with the record, its first status log, the transaction.pending event and its webhook-endpoint
-- match, the outbox row (store.createTransaction, recordEvent, insertOutbox: a payment's row
-- raises no notification, only webhook deliveries do),
-- then the response stored on the key (store.CompleteIdempotencyKey). Same tables, columns,
-- indexes and conflict clauses; ids are time-ordered like the service's UUIDv7. Not included:
-- the reads of the request (API key, catalogue, routes, settings, pricing) and the outbox row's
-- deletion once the workflow has started.
-- Variables (pgbench -D): merchant, network (uuids), payload (a real transaction.pending
-- event, also standing for the stored 201 body).
INSERT INTO idempotency_keys AS k (merchant_id, environment, key, request_hash, method, path, locked_until, expires_at)
VALUES (:merchant, 'TEST', md5(random()::text || clock_timestamp()::text), sha256(convert_to(random()::text, 'UTF8')),
        'POST', '/api/v1/payments/softpay/', now() + 30000 * interval '1 millisecond', now() + 86400000 * interval '1 millisecond')
ON CONFLICT (merchant_id, environment, key) DO UPDATE SET
    request_hash = EXCLUDED.request_hash, method = EXCLUDED.method, path = EXCLUDED.path,
    response_status = NULL, response_type = NULL, response_body = NULL, completed_at = NULL,
    locked_until = EXCLUDED.locked_until, created_at = now(), expires_at = EXCLUDED.expires_at
WHERE k.expires_at < now()
   OR (k.completed_at IS NULL AND k.locked_until < now() AND k.request_hash = EXCLUDED.request_hash)
RETURNING key AS ikey, encode(request_hash, 'hex') AS ihash,
    (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 19))::uuid AS tid,
    (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 19))::uuid AS lid,
    (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 19))::uuid AS eid,
    'PAY-' || to_char(now(), 'YYYYMMDD') || '-' || upper(substr(md5(random()::text), 1, 10)) AS ref,
    'evt_' || substr(md5(random()::text), 1, 26) AS evt,
    '+22997' || lpad(floor(random() * 1000)::int::text, 3, '0') || '123' AS phone \gset
BEGIN;
INSERT INTO transactions AS t (id, reference, merchant_id, environment, transaction_type, status,
        requested_amount, client_fee, debited_amount, gateway_fee, platform_fee, net_amount, currency,
        original_amount, original_currency, exchange_rate, country, network_id, network, customer_name, customer_email,
        customer_phone, recipient, description, metadata, fee_charge_mode, checkout_session_id, payment_link_id,
        otp, idempotency_key)
VALUES (:tid, :ref, :merchant, 'TEST', 'PAIEMENT', 'PENDING', 1000, 15, 1000, 10, 5, 985, 'XOF', NULL, NULL, NULL,
        'BJ', NULLIF(:network::uuid, '00000000-0000-0000-0000-000000000000'::uuid), 'MTN_BJ', 'Bench Customer', '',
        :phone, '', 'sikabench ' || :ref::text, '{}', 'DEDUCTED', NULL, NULL, NULL, :ikey)
ON CONFLICT (merchant_id, environment, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING t.id, t.reference, t.gateway_reference, t.merchant_id, t.environment, t.transaction_type,
    t.flow_direction, t.status, t.requested_amount, t.client_fee, t.debited_amount, t.gateway_fee, t.platform_fee,
    t.net_amount, t.currency, t.original_amount, t.original_currency, t.exchange_rate, t.country, t.network,
    t.customer_name, t.customer_email, t.customer_phone, t.recipient, t.description, t.metadata, t.fee_charge_mode,
    t.checkout_session_id, t.payment_link_id, t.failure_code, t.failure_message, t.created_at, t.updated_at,
    t.completed_at, coalesce(t.network_id, '00000000-0000-0000-0000-000000000000'::uuid), t.run;
INSERT INTO transaction_status_logs (id, transaction_id, merchant_id, environment, from_status, to_status, reason, triggered_by)
VALUES (:lid, :tid, :merchant, 'TEST', NULL, 'PENDING', 'Payment requested', 'CLIENT');
INSERT INTO events (id, event_id, merchant_id, environment, type, payload, payment_link_id, transaction_id, created_at)
VALUES (:eid, :evt, :merchant, 'TEST', 'transaction.pending', :payload, NULL, :tid, now());
SELECT id FROM webhook_endpoints
WHERE merchant_id = :merchant AND environment = 'TEST' AND is_active AND deleted_at IS NULL
  AND (payment_link_id IS NULL OR payment_link_id = NULL::uuid);
INSERT INTO workflow_outbox (workflow_id, workflow_type, input)
VALUES ('payment:' || :tid::text, 'Payment', ('{"TransactionID":"' || :tid::text || '","Run":1}')::jsonb) RETURNING id;
COMMIT;
UPDATE idempotency_keys
SET response_status = 201, response_type = 'application/json', response_body = convert_to(:payload, 'UTF8'),
    completed_at = now(), locked_until = NULL
WHERE merchant_id = :merchant AND environment = 'TEST' AND key = :ikey AND request_hash = decode(:ihash, 'hex')
  AND completed_at IS NULL;
