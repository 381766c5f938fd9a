package store

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
)

// IdempotencyRequest identifies one use of an Idempotency-Key (contract §6).
type IdempotencyRequest struct {
	Merchant    uuid.UUID
	Environment sika.Environment
	Key         string
	Method      string
	Path        string
	// Hash is the SHA-256 of method, path and the canonical body.
	Hash []byte
}

// ClaimOutcome is what claiming a key decided.
type ClaimOutcome int

// Claim outcomes.
const (
	// ClaimAcquired: this request owns the key and must run, then Complete or Release it.
	ClaimAcquired ClaimOutcome = iota + 1
	// ClaimReplay: a response is stored for the same request; send it back unchanged.
	ClaimReplay
	// ClaimInUse: the same request is still running elsewhere.
	ClaimInUse
	// ClaimMismatch: the key was used for another body or route.
	ClaimMismatch
)

// StoredResponse is the first response to a key, replayed byte for byte.
type StoredResponse struct {
	Status      int
	ContentType string
	Body        []byte
}

// ClaimIdempotencyKey claims a key atomically. A new key, an expired one, or an in-flight claim
// of the same request whose lease has passed (its process died) is acquired; otherwise the
// existing row decides: replay, in use or mismatch.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, r IdempotencyRequest, lease, ttl time.Duration) (ClaimOutcome, *StoredResponse, error) {
	for range 3 {
		var acquired bool
		err := s.pool.QueryRow(ctx, `
			INSERT INTO idempotency_keys AS k (merchant_id, environment, key, request_hash, method, path, locked_until, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 millisecond', now() + $8 * interval '1 millisecond')
			ON CONFLICT (merchant_id, environment, key) DO UPDATE SET
				request_hash = EXCLUDED.request_hash, method = EXCLUDED.method, path = EXCLUDED.path,
				response_status = NULL, response_type = NULL, response_body = NULL, completed_at = NULL,
				locked_until = EXCLUDED.locked_until, created_at = now(), expires_at = EXCLUDED.expires_at
			WHERE k.expires_at < now()
			   OR (k.completed_at IS NULL AND k.locked_until < now() AND k.request_hash = EXCLUDED.request_hash)
			RETURNING true`,
			r.Merchant, r.Environment, r.Key, r.Hash, r.Method, r.Path, lease.Milliseconds(), ttl.Milliseconds()).Scan(&acquired)
		if err == nil {
			return ClaimAcquired, nil, nil
		}
		if !isNoRows(err) {
			return 0, nil, fmt.Errorf("claim idempotency key: %w", err)
		}
		var hash []byte
		var status *int
		var ctype *string
		var body []byte
		err = s.pool.QueryRow(ctx, `SELECT request_hash, response_status, response_type, response_body
			FROM idempotency_keys WHERE merchant_id = $1 AND environment = $2 AND key = $3`,
			r.Merchant, r.Environment, r.Key).Scan(&hash, &status, &ctype, &body)
		if isNoRows(err) {
			continue // released between our two statements: try to claim again
		}
		if err != nil {
			return 0, nil, fmt.Errorf("read idempotency key: %w", err)
		}
		switch {
		case !bytes.Equal(hash, r.Hash):
			return ClaimMismatch, nil, nil
		case status == nil:
			return ClaimInUse, nil, nil
		default:
			resp := &StoredResponse{Status: *status, Body: body}
			if ctype != nil {
				resp.ContentType = *ctype
			}
			return ClaimReplay, resp, nil
		}
	}
	return ClaimInUse, nil, nil
}

// CompleteIdempotencyKey stores the response of the request that holds the claim.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, r IdempotencyRequest, resp StoredResponse) error {
	_, err := s.pool.Exec(ctx, `UPDATE idempotency_keys
		SET response_status = $5, response_type = $6, response_body = $7, completed_at = now(), locked_until = NULL
		WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND request_hash = $4 AND completed_at IS NULL`,
		r.Merchant, r.Environment, r.Key, r.Hash, resp.Status, resp.ContentType, resp.Body)
	if err != nil {
		return fmt.Errorf("complete idempotency key: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey drops an unfinished claim, so that the client may retry with the same
// key (used when the request ended in a 5xx or a panic).
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, r IdempotencyRequest) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE merchant_id = $1 AND environment = $2 AND key = $3 AND request_hash = $4 AND completed_at IS NULL`,
		r.Merchant, r.Environment, r.Key, r.Hash)
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// PurgeExpiredIdempotencyKeys deletes keys past their retention, in batches, and returns how
// many it deleted.
func (s *Store) PurgeExpiredIdempotencyKeys(ctx context.Context, batch int) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE ctid IN (
			SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT $1)`, batch)
		if err != nil {
			return total, fmt.Errorf("purge idempotency keys: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}
