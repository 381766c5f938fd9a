package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
)

// WebApp names a web app whose sessions are kept in web_sessions; a session of one app is
// never found by another.
type WebApp string

// Web apps.
const (
	WebAppDashboard WebApp = "dashboard"
	WebAppConsole   WebApp = "console"
)

// WebSession is a signed-in browser session of a web app. The browser's cookie holds a random
// id; only its SHA-256 (TokenHash) is stored.
type WebSession struct {
	TokenHash []byte
	App       WebApp
	Member    uuid.UUID
	// Merchant and Environment are the tenancy the member acts in (Merchant nil until picked).
	Merchant    *uuid.UUID
	Environment sika.Environment
	CSRFToken   string
	ClientIP    string
	UserAgent   string
	CreatedAt   time.Time
	LastSeenAt  time.Time
	// ExpiresAt is the idle deadline, moved forward by use up to AbsoluteExpiresAt.
	ExpiresAt         time.Time
	AbsoluteExpiresAt time.Time
}

const webSessionColumns = `token_hash, app, member_id, merchant_id, environment, csrf_token, client_ip, user_agent,
	created_at, last_seen_at, expires_at, absolute_expires_at`

// CreateWebSession records a new session, and deletes the sessions that have expired (of every
// member: the table holds only live sessions and those that ended since the last login).
func (s *Store) CreateWebSession(ctx context.Context, ws WebSession) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO web_sessions (`+webSessionColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		ws.TokenHash, ws.App, ws.Member, ws.Merchant, ws.Environment, ws.CSRFToken, ws.ClientIP, ws.UserAgent,
		ws.CreatedAt, ws.LastSeenAt, ws.ExpiresAt, ws.AbsoluteExpiresAt)
	if err != nil {
		return fmt.Errorf("insert web session: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE expires_at <= $1`, ws.CreatedAt); err != nil {
		return fmt.Errorf("delete expired web sessions: %w", err)
	}
	return nil
}

// WebSessionByToken returns the live session of app whose id hashes to tokenHash, or not_found
// (also when it has expired at now).
func (s *Store) WebSessionByToken(ctx context.Context, app WebApp, tokenHash []byte, now time.Time) (WebSession, error) {
	var ws WebSession
	err := s.pool.QueryRow(ctx, `SELECT `+webSessionColumns+` FROM web_sessions
		WHERE token_hash = $1 AND app = $2 AND expires_at > $3`, tokenHash, app, now).Scan(
		&ws.TokenHash, &ws.App, &ws.Member, &ws.Merchant, &ws.Environment, &ws.CSRFToken, &ws.ClientIP, &ws.UserAgent,
		&ws.CreatedAt, &ws.LastSeenAt, &ws.ExpiresAt, &ws.AbsoluteExpiresAt)
	return ws, rowErr(err, "Session", "select web session")
}

// TouchWebSession records a use of a live session at now and moves its idle deadline to
// now+idle, never past its absolute deadline.
func (s *Store) TouchWebSession(ctx context.Context, app WebApp, tokenHash []byte, now time.Time, idle time.Duration) error {
	_, err := s.pool.Exec(ctx, `UPDATE web_sessions SET last_seen_at = $3, expires_at = least($4, absolute_expires_at)
		WHERE token_hash = $1 AND app = $2 AND expires_at > $3`, tokenHash, app, now, now.Add(idle))
	if err != nil {
		return fmt.Errorf("touch web session: %w", err)
	}
	return nil
}

// SetWebSessionTenancy records the merchant and environment a session acts in.
func (s *Store) SetWebSessionTenancy(ctx context.Context, app WebApp, tokenHash []byte, merchant *uuid.UUID, env sika.Environment) error {
	tag, err := s.pool.Exec(ctx, `UPDATE web_sessions SET merchant_id = $3, environment = $4
		WHERE token_hash = $1 AND app = $2`, tokenHash, app, merchant, env)
	if err != nil {
		return fmt.Errorf("update web session tenancy: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return sika.NotFound("Session")
	}
	return nil
}

// DeleteWebSession ends a session (logout); ending one that is already gone is not an error.
func (s *Store) DeleteWebSession(ctx context.Context, app WebApp, tokenHash []byte) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM web_sessions WHERE token_hash = $1 AND app = $2`, tokenHash, app); err != nil {
		return fmt.Errorf("delete web session: %w", err)
	}
	return nil
}
