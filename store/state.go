package store

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika/telemetry"
)

// OperationalState reads what the worker's metrics report at each scrape: the workflow outbox
// (depth, oldest entry) and the money held for outbound operations in flight, per currency and
// environment (the wallets' pending amounts and the PENDING outbound transactions holding them).
// Both read small sets: the outbox is drained continuously and the holds come from a partial index.
func (s *Store) OperationalState(ctx context.Context) (telemetry.State, error) {
	var st telemetry.State
	var oldest float64
	if err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
		FROM workflow_outbox`).Scan(&st.OutboxDepth, &oldest); err != nil {
		return st, fmt.Errorf("read outbox depth: %w", err)
	}
	st.OutboxOldest = time.Duration(oldest * float64(time.Second))
	rows, err := s.pool.Query(ctx, `SELECT w.currency, w.environment, w.held, coalesce(p.n, 0)
		FROM (SELECT currency, environment, sum(pending_amount) AS held FROM wallets GROUP BY currency, environment) w
		LEFT JOIN (SELECT currency, environment, count(*) AS n FROM transactions
			WHERE status IN ('PENDING', 'AWAITING_APPROVAL') AND flow_direction = 'OUTBOUND' GROUP BY currency, environment) p
			ON p.currency = w.currency AND p.environment = w.environment
		ORDER BY w.currency, w.environment`)
	if err != nil {
		return st, fmt.Errorf("read wallet holds: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h telemetry.Hold
		var held decimal.Decimal
		if err := rows.Scan(&h.Currency, &h.Environment, &held, &h.Count); err != nil {
			return st, fmt.Errorf("read wallet holds: %w", err)
		}
		h.Amount = held.InexactFloat64()
		st.Holds = append(st.Holds, h)
	}
	return st, rows.Err()
}
