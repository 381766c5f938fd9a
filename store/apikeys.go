package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

const apiKeyColumns = `id, merchant_id, environment, scope, name, prefix, last_used_at, revoked_at,
	created_by_member, created_at`

func scanAPIKey(row pgx.Row) (sika.APIKey, error) {
	var k sika.APIKey
	err := row.Scan(&k.ID, &k.Merchant, &k.Environment, &k.Scope, &k.Name, &k.Prefix, &k.LastUsedAt,
		&k.RevokedAt, &k.CreatedByMember, &k.CreatedAt)
	return k, err
}

// CreateAPIKey generates a key for a merchant and environment, stores its hash and returns it
// with the secret set (the only time the secret exists outside the caller's hands).
func (s *Store) CreateAPIKey(ctx context.Context, merchantID uuid.UUID, env sika.Environment, scope sika.Scope, name string, createdBy *uuid.UUID) (sika.APIKey, error) {
	secret, display, hash, err := sika.NewAPIKeySecret(env)
	if err != nil {
		return sika.APIKey{}, fmt.Errorf("generate api key: %w", err)
	}
	k, err := scanAPIKey(s.pool.QueryRow(ctx, `INSERT INTO api_keys
		(merchant_id, environment, scope, name, prefix, key_hash, created_by_member)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+apiKeyColumns,
		merchantID, env, scope, name, display, hash[:], createdBy))
	if err != nil {
		return k, fmt.Errorf("insert api key: %w", err)
	}
	k.Secret = secret
	return k, nil
}

// TouchAPIKey records that a key was used. It writes at most once a minute per key so that a
// busy key does not turn every request into a row update.
func (s *Store) TouchAPIKey(ctx context.Context, id uuid.UUID, at time.Time) error {
	// This process wrote it less than a minute ago: the statement would change nothing.
	if last, ok := s.touched.Load(id); ok && at.Sub(last.(time.Time)) < time.Minute && !at.Before(last.(time.Time)) {
		return nil
	}
	s.touched.Store(id, at)
	_, err := s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`, id, at)
	if err != nil {
		return fmt.Errorf("touch api key: %w", err)
	}
	return nil
}

// ListAPIKeys returns a merchant's keys in one environment, newest first.
func (s *Store) ListAPIKeys(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page PageRequest) ([]sika.APIKey, int, error) {
	keys, n, err := queryPage(ctx, s, apiKeyColumns, `FROM api_keys WHERE merchant_id = $1 AND environment = $2`,
		`created_at DESC, id DESC`, []any{merchantID, env}, page, scanAPIKey)
	if err != nil {
		return nil, 0, fmt.Errorf("list api keys: %w", err)
	}
	return keys, n, nil
}

// RevokeAPIKey revokes a key of the merchant and environment; revoking twice keeps the first
// revocation time. A key of another merchant or environment is not_found.
func (s *Store) RevokeAPIKey(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
		WHERE id = $1 AND merchant_id = $2 AND environment = $3 RETURNING `+apiKeyColumns, id, merchantID, env))
	s.FlushReadCache() // this replica refuses the key at once; the others on the notification
	return k, rowErr(err, "API key", "revoke api key")
}

// APIKeyWithMerchant finds a key by the hash of its secret together with its merchant, in one
// query (it runs on every API-key request), or not_found.
func (s *Store) APIKeyWithMerchant(ctx context.Context, hash [32]byte) (sika.APIKey, sika.Merchant, error) {
	type keyWithMerchant struct {
		key      sika.APIKey
		merchant sika.Merchant
	}
	km, err := cachedRead(s, fmt.Sprintf("api key %x", hash), func() (keyWithMerchant, error) {
		k, m, err := s.apiKeyWithMerchant(ctx, hash)
		return keyWithMerchant{k, m}, err
	}, same)
	return km.key, km.merchant, err
}

func (s *Store) apiKeyWithMerchant(ctx context.Context, hash [32]byte) (sika.APIKey, sika.Merchant, error) {
	var k sika.APIKey
	m, err := scanMerchant(s.pool.QueryRow(ctx, `SELECT `+merchantColumns+`,
			k.id, k.merchant_id, k.environment, k.scope, k.name, k.prefix, k.last_used_at, k.revoked_at,
			k.created_by_member, k.created_at
		FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.key_hash = $1`, hash[:]),
		&k.ID, &k.Merchant, &k.Environment, &k.Scope, &k.Name, &k.Prefix, &k.LastUsedAt, &k.RevokedAt,
		&k.CreatedByMember, &k.CreatedAt)
	return k, m, rowErr(err, "API key", "select api key with merchant")
}
