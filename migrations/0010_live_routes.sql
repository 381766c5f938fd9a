-- LIVE routing: which operator adapter serves each network in LIVE. One account per operator
-- (gateway names match cmd/sika/live.go and /gateway-callbacks/{gateway}/). Networks without
-- a row here (Moov, Free, Expresso, Airtel, Vodacom, ...) are not available in LIVE yet; a
-- network whose gateway is not configured in a deployment answers network_unavailable.
INSERT INTO gateway_routes (network_id, environment, gateway, priority)
SELECT n.id, 'LIVE', g.gateway, 1
FROM networks n
JOIN (VALUES ('MTN\_%', 'mtnmomo'), ('WAVE\_%', 'wave'), ('ORANGE\_%', 'orange')) AS g (pattern, gateway)
  ON n.code LIKE g.pattern
ON CONFLICT DO NOTHING;
