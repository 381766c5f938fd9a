package store

import (
	"context"
	"fmt"
	"time"

	"github.com/sikahq/sika"
)

// StuckTransactions lists, across merchants, the transactions still PENDING after olderThan,
// oldest first: what support looks at first.
func (s *Store) StuckTransactions(ctx context.Context, olderThan time.Duration, limit int) ([]sika.Transaction, error) {
	return collect(ctx, s.pool, "stuck transactions", scanTransaction, `SELECT `+transactionColumns+` FROM transactions t
		WHERE t.status = 'PENDING' AND t.created_at < now() - $1 * interval '1 millisecond'
		ORDER BY t.created_at, t.id LIMIT $2`, olderThan.Milliseconds(), limit)
}

// KYCDossiersByStatus lists, across merchants, the dossiers in a status ("" for all), oldest
// first, with their documents: the staff review queue.
func (s *Store) KYCDossiersByStatus(ctx context.Context, status sika.KYCDossierStatus, page PageRequest) ([]sika.KYCDossier, int, error) {
	items, n, err := queryPage(ctx, s, kycDossierColumns, `FROM kyc_dossiers d WHERE ($1 = '' OR d.status = $1)`,
		`d.created_at, d.id`, []any{string(status)}, page, scanKYCDossier)
	if err != nil {
		return nil, 0, fmt.Errorf("list kyc dossiers: %w", err)
	}
	if err := withDocuments(ctx, s.pool, items); err != nil {
		return nil, 0, err
	}
	return items, n, nil
}
