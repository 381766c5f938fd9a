-- Failed logins per account (issue 24): every way in (POST /auth/login/, the dashboard's and the
-- console's login forms) counts an attempt here before it checks the password, and a success
-- forgets the account's row. Past a few failures the account waits, longer at each failure
-- (capped), whatever address the attempts come from. The account is the SHA-256 of the
-- normalised email, so addresses typed at random are not kept.
CREATE TABLE login_failures (
    account_hash   bytea PRIMARY KEY,
    failures       integer NOT NULL,
    last_failed_at timestamptz NOT NULL,
    locked_until   timestamptz
);
