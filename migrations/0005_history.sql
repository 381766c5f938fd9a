-- Transaction history at scale: what `search` covers and the indexes of the filtered cursor
-- lists, the search and the CSV export. Chosen from EXPLAIN ANALYZE on a million transactions
-- (cmd/sikabench-history: a merchant with 800 000 LIVE rows among 21 merchants, 1.06 M attempts,
-- 1.93 M status logs); the figures below are from that data set, warm cache.

-- Substring search (LIKE '%q%') is served by a trigram index. pg_trgm is a trusted extension
-- shipped with PostgreSQL (Debian: the postgresql-15 package).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The slugs of the payment link and checkout session that produced a transaction, copied onto it
-- so that search needs no join; to be filled by the payment-link and checkout features.
ALTER TABLE transactions ADD COLUMN payment_link_slug text;
ALTER TABLE transactions ADD COLUMN checkout_session_slug text;

-- search_text is the one text `search` matches: every searchable field, lower-cased, joined by a
-- unit separator (U+001F) so that a match cannot span two fields. Lower-cased with the ICU root
-- collation whatever the database's: under the C locale lower() folds ASCII only (KOUAMÉ would
-- not find Kouamé); the store folds the query the same way. Stored rather than an
-- expression index because the walk of a merchant's rows rechecks it on every row: LIKE on the
-- stored text costs 0.5 µs a row where ILIKE on the concatenation cost 1.9 µs (a full walk of
-- the 800 000 rows: 377 ms against 1 542 ms), and a bitmap recheck of 20 000 matches 126 ms
-- against 186 ms. It adds about 100 bytes a row.
ALTER TABLE transactions ADD COLUMN search_text text GENERATED ALWAYS AS (lower((
    reference || E'\x1f' || gateway_reference || E'\x1f' || customer_name || E'\x1f' || customer_email || E'\x1f' ||
    customer_phone || E'\x1f' || coalesce(payment_link_slug, '') || E'\x1f' || coalesce(checkout_session_slug, ''))
    COLLATE "und-x-icu")) STORED;

-- One GIN trigram index on search_text rather than one per field: one bitmap scan instead of a
-- BitmapOr of seven, one recheck. A rare term (a gateway reference, a phone number, a slug)
-- costs 1 to 20 ms through it; a common one is found faster by walking the merchant's rows
-- newest first, which the store tries first (store/history_search.go: a walk of the whole
-- history for a term in no row took 377 ms, a bitmap of a term in 2 % of rows 126 ms and in
-- 40 % 432 ms; either plan alone misses the targets). A whole reference is looked up by its
-- unique index instead (its common trigrams cost 18 to 24 ms here). Not led by the tenancy
-- (btree_gin): with (merchant_id, environment, search_text) the planner read the big merchant's
-- and the environment's posting lists too, and a rare phone number took 28 to 50 ms instead of
-- 2 (search p99 428 ms against 32 ms over the benchmark's searches). The cost of this choice:
-- the bitmap holds every merchant's matches, so a term common in other merchants' rows but rare
-- in the recent rows of a merchant with more than 10 000 rows fetches the others' matches too.
CREATE INDEX transactions_search_trgm_idx ON transactions USING gin (search_text gin_trgm_ops);

-- One b-tree per exact filter, behind the tenancy and in the list's order, so that a filtered
-- page is a plain range scan whatever the value's frequency for this merchant. With only
-- (merchant_id, environment, created_at, id), a value the merchant never has is a scan of its
-- whole history: status=CANCELLED, currency=GNF, country=GN, network=MTN_GN took 105 to 115 ms
-- (parallel seq scan and sort), status=PENDING&transaction_type=TRANSFERT 22 ms and
-- status=PENDING&country=TG over 30 days 17 ms (walks filtering thousands of rows); with these,
-- 0.05 to 3.7 ms, each an index scan with no filter or a short one. A single GIN (btree_gin) on
-- the six columns was 60 times smaller (7.6 MB against 6 x 74 MB) and within 18 ms on this data
-- set, but it depends on the planner's estimates, which are global: for a merchant whose values
-- are skewed (a collections-only merchant filtering on OUTBOUND, one country among many) a
-- mistaken walk scans its whole history, which these indexes make impossible, for generic
-- (prepared) plans too. created_at ranges use the same indexes (or the tenancy one).
CREATE INDEX transactions_status_idx ON transactions (merchant_id, environment, status, created_at DESC, id DESC);
CREATE INDEX transactions_type_idx ON transactions (merchant_id, environment, transaction_type, created_at DESC, id DESC);
CREATE INDEX transactions_flow_idx ON transactions (merchant_id, environment, flow_direction, created_at DESC, id DESC);
CREATE INDEX transactions_currency_idx ON transactions (merchant_id, environment, currency, created_at DESC, id DESC);
CREATE INDEX transactions_country_idx ON transactions (merchant_id, environment, country, created_at DESC, id DESC);
CREATE INDEX transactions_network_idx ON transactions (merchant_id, environment, network, created_at DESC, id DESC);

-- The same for the filters of the attempt and status-log lists (`transaction` uses the existing
-- indexes that start with transaction_id). Without them a value absent from the merchant's
-- history was a parallel seq scan: to_status=CANCELLED 118 ms, triggered_by=ADMIN 158 ms,
-- an unknown gateway 139 ms (1.9 M logs, 1.06 M attempts); with them under 0.2 ms.
CREATE INDEX transaction_attempts_status_idx ON transaction_attempts (merchant_id, environment, status, created_at DESC, id DESC);
CREATE INDEX transaction_attempts_gateway_idx ON transaction_attempts (merchant_id, environment, gateway, created_at DESC, id DESC);
CREATE INDEX transaction_status_logs_to_status_idx ON transaction_status_logs (merchant_id, environment, to_status, created_at DESC, id DESC);
CREATE INDEX transaction_status_logs_trigger_idx ON transaction_status_logs (merchant_id, environment, triggered_by, created_at DESC, id DESC);
