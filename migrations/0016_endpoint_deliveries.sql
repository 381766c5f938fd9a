-- The delivery log of one webhook endpoint, newest first (store.EndpointDeliveries: the
-- dashboard's endpoint page); the event index serves an event's deliveries only.
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
