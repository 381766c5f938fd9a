-- Server-side sessions of the web apps (issue 14): the merchant dashboard (/dashboard/) and, later,
-- the staff console (/console/). The browser holds only a random session id in an HttpOnly
-- cookie; the row is keyed by the SHA-256 of that id, so that a read of this table (a backup, a
-- replica) yields no usable session. `app` keeps the two apps' sessions apart: a dashboard
-- session is never accepted by the console, nor the other way round.
--
-- A session ends at the first of `absolute_expires_at` (a fixed lifetime from login) and
-- `expires_at`, the idle deadline, which each request moves forward (never past the absolute
-- one); logout deletes the row. `csrf_token` is the session's anti-CSRF token, checked on every
-- request that is not a GET. The merchant and environment are the tenancy the member acts in,
-- chosen with the merchant picker and the TEST/LIVE switch.
CREATE TABLE web_sessions (
    token_hash          bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    app                 text NOT NULL CHECK (app IN ('dashboard', 'console')),
    member_id           uuid NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    merchant_id         uuid REFERENCES merchants (id) ON DELETE SET NULL,
    environment         text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    csrf_token          text NOT NULL,
    client_ip           text NOT NULL DEFAULT '',
    user_agent          text NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL,
    last_seen_at        timestamptz NOT NULL,
    expires_at          timestamptz NOT NULL,
    absolute_expires_at timestamptz NOT NULL,
    CHECK (expires_at <= absolute_expires_at)
);
CREATE INDEX web_sessions_member ON web_sessions (member_id);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
