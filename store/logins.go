package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// LoginPolicy is how failed logins slow an account down: the first FreeFailures attempts of a
// run are free; each one after them locks the account for Backoff, doubled at every further
// failure up to MaxBackoff. A run ends with a success, or Forget after its last failure.
type LoginPolicy struct {
	FreeFailures int
	Backoff      time.Duration
	MaxBackoff   time.Duration
	Forget       time.Duration
}

// DefaultLoginPolicy: 5 free attempts, then 30 s, 1 min, 2 min … at most 15 min between
// attempts; a day without failure starts afresh.
var DefaultLoginPolicy = LoginPolicy{FreeFailures: 5, Backoff: 30 * time.Second, MaxBackoff: 15 * time.Minute, Forget: 24 * time.Hour}

// lockFor is the wait after the n-th failure of a run (0 while free).
func (p LoginPolicy) lockFor(n int) time.Duration {
	if n < p.FreeFailures {
		return 0
	}
	d := p.Backoff
	for i := p.FreeFailures; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxBackoff)
}

// loginAccount is the key of an email's row: the SHA-256 of its normalised form.
func loginAccount(email string) []byte {
	h := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return h[:]
}

// BeginLogin counts a login attempt for an email before its password is checked: it is
// recorded as a failure (LoginSucceeded forgets it), and when it is the FreeFailures-th or a
// later one of the run the account is locked for the policy's backoff. It returns how long the
// caller must wait when the account is locked now (the attempt is then refused and not counted).
// Attempts are serialised on the account's row, so parallel guesses each count.
func (s *Store) BeginLogin(ctx context.Context, email string, now time.Time, p LoginPolicy) (time.Duration, error) {
	account := loginAccount(email)
	var wait time.Duration
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO login_failures (account_hash, failures, last_failed_at) VALUES ($1, 0, $2)
			ON CONFLICT (account_hash) DO NOTHING`, account, now); err != nil {
			return err
		}
		var failures int
		var last time.Time
		var locked *time.Time
		if err := tx.QueryRow(ctx, `SELECT failures, last_failed_at, locked_until FROM login_failures WHERE account_hash = $1 FOR UPDATE`,
			account).Scan(&failures, &last, &locked); err != nil {
			return err
		}
		if locked != nil && locked.After(now) {
			wait = locked.Sub(now)
			return nil
		}
		if now.Sub(last) > p.Forget {
			failures = 0
		}
		failures++
		var until *time.Time
		if d := p.lockFor(failures); d > 0 {
			t := now.Add(d)
			until = &t
		}
		_, err := tx.Exec(ctx, `UPDATE login_failures SET failures = $2, last_failed_at = $3, locked_until = $4 WHERE account_hash = $1`,
			account, failures, now, until)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count login attempt: %w", err)
	}
	return wait, nil
}

// LoginSucceeded forgets an email's failures.
func (s *Store) LoginSucceeded(ctx context.Context, email string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM login_failures WHERE account_hash = $1`, loginAccount(email)); err != nil {
		return fmt.Errorf("forget login failures: %w", err)
	}
	return nil
}
