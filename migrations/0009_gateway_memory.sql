-- What operators told us about an operation that later calls need and cannot be read back by
-- our reference (gateway.Memory): Wave checkout session ids, Orange pay and notification
-- tokens. Written by the adapter when the operator answers an initiation, read by status reads
-- and callbacks in any process.
CREATE TABLE gateway_memory (
    gateway    text NOT NULL,
    key        text NOT NULL,
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (gateway, key)
);
