-- A webhook endpoint rotated twice within the overlap keeps signing with the secret before the
-- last two as well, until its own overlap ends: the merchant whose first rotation's answer (the
-- new secret, shown once) was lost rotates again, and the secret still deployed must not stop
-- verifying at once. At most three secrets sign a delivery.
ALTER TABLE webhook_endpoints
    ADD COLUMN older_secret            text,
    ADD COLUMN older_secret_expires_at timestamptz;
