package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// DailyVolume is one day's money in one currency of a merchant's environment: what was
// collected (successful INBOUND transactions) and paid out (successful payouts and settlements,
// RETRAIT; a transfer between two of the merchant's wallets is neither), and how the day's
// collections ended. Amounts are requested amounts, as the transaction list shows them.
type DailyVolume struct {
	// Day is the UTC date (midnight UTC), the ledger's clock.
	Day       time.Time
	Currency  string
	Collected decimal.Decimal
	PaidOut   decimal.Decimal
	// CollectionsSucceeded and CollectionsFailed count the day's collections that ended well
	// and badly (FAILED or CANCELLED); those still PENDING are in neither.
	CollectionsSucceeded int
	CollectionsFailed    int
}

// DailyVolumes returns, for each UTC day since since and each currency, the volume of a
// merchant's environment, oldest first; a day and currency without a transaction has no row.
// The tenancy is in the query, which reads only transactions_volume_idx (an index-only scan of
// the merchant's range).
func (s *Store) DailyVolumes(ctx context.Context, merchantID uuid.UUID, env sika.Environment, since time.Time) ([]DailyVolume, error) {
	return collect(ctx, s.pool, "daily volumes", func(r pgx.Row) (DailyVolume, error) {
		var v DailyVolume
		err := r.Scan(&v.Day, &v.Currency, &v.Collected, &v.PaidOut, &v.CollectionsSucceeded, &v.CollectionsFailed)
		v.Day = time.Date(v.Day.Year(), v.Day.Month(), v.Day.Day(), 0, 0, 0, 0, time.UTC)
		return v, err
	}, `SELECT (t.created_at AT TIME ZONE 'UTC')::date AS day, t.currency,
			coalesce(sum(t.requested_amount) FILTER (WHERE t.flow_direction = 'INBOUND' AND t.status = 'SUCCESS'), 0),
			coalesce(sum(t.requested_amount) FILTER (WHERE t.transaction_type = 'RETRAIT' AND t.status = 'SUCCESS'), 0),
			count(*) FILTER (WHERE t.flow_direction = 'INBOUND' AND t.status = 'SUCCESS'),
			count(*) FILTER (WHERE t.flow_direction = 'INBOUND' AND t.status IN ('FAILED', 'CANCELLED'))
		FROM transactions t
		WHERE t.merchant_id = $1 AND t.environment = $2 AND t.created_at >= $3
		GROUP BY 1, 2 ORDER BY 1, 2`, merchantID, env, since)
}
