package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika/gateway/sandbox"
)

// sandboxOp is an operation as the sandbox recorded it.
type sandboxOp = sandbox.OperationView

// readWorld reads the merchant's end state from Postgres.
func (h *harness) readWorld(ctx context.Context) (*world, error) {
	w := &world{txs: map[uuid.UUID]txRow{}, logs: map[uuid.UUID][]logRow{}, attempts: map[string]attemptRow{},
		entries: map[uuid.UUID][]entryRow{}, flags: map[uuid.UUID][]flagRow{}, eventTypes: map[uuid.UUID]map[string]int{}}
	m := h.setup.merchantID
	db := h.st.Pool()
	err := scanRows(ctx, db, `SELECT id, transaction_type, status, network, customer_phone, recipient, failure_code, run,
			checkout_session_id, idempotency_key, requested_amount, net_amount, debited_amount
		FROM transactions WHERE merchant_id = $1`, []any{m}, func(r pgx.Rows) error {
		var t txRow
		if err := r.Scan(&t.id, &t.typ, &t.status, &t.network, &t.phone, &t.recipient, &t.failureCode, &t.run,
			&t.session, &t.key, &t.requested, &t.netAmount, &t.debited); err != nil {
			return err
		}
		w.txs[t.id] = t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read transactions: %w", err)
	}
	err = scanRows(ctx, db, `SELECT id, transaction_id, coalesce(from_status, ''), to_status, reason, triggered_by, created_at
		FROM transaction_status_logs WHERE merchant_id = $1 ORDER BY transaction_id, created_at, id`, []any{m}, func(r pgx.Rows) error {
		var id uuid.UUID
		var l logRow
		if err := r.Scan(&l.id, &id, &l.from, &l.to, &l.reason, &l.by, &l.at); err != nil {
			return err
		}
		w.logs[id] = append(w.logs[id], l)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read status logs: %w", err)
	}
	err = scanRows(ctx, db, `SELECT id, transaction_id, run, gateway, status, recheck_until FROM transaction_attempts WHERE merchant_id = $1`,
		[]any{m}, func(r pgx.Rows) error {
			var id uuid.UUID
			var a attemptRow
			if err := r.Scan(&id, &a.tx, &a.run, &a.gateway, &a.status, &a.recheckUntil); err != nil {
				return err
			}
			a.id = id
			w.attempts[id.String()] = a
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read attempts: %w", err)
	}
	err = scanRows(ctx, db, `SELECT transaction_id, type, amount, attempt_id FROM ledger_entries WHERE merchant_id = $1 AND transaction_id IS NOT NULL`,
		[]any{m}, func(r pgx.Rows) error {
			var id uuid.UUID
			var e entryRow
			if err := r.Scan(&id, &e.typ, &e.amount, &e.attempt); err != nil {
				return err
			}
			w.entries[id] = append(w.entries[id], e)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read ledger entries: %w", err)
	}
	err = scanRows(ctx, db, `SELECT country, available_amount, pending_amount FROM wallets WHERE merchant_id = $1`,
		[]any{m}, func(r pgx.Rows) error {
			var wl walletRow
			if err := r.Scan(&wl.country, &wl.available, &wl.pending); err != nil {
				return err
			}
			w.wallets = append(w.wallets, wl)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read wallets: %w", err)
	}
	err = scanRows(ctx, db, `SELECT id, status, transaction_id FROM checkout_sessions WHERE merchant_id = $1`,
		[]any{m}, func(r pgx.Rows) error {
			var s sessionRow
			if err := r.Scan(&s.id, &s.status, &s.tx); err != nil {
				return err
			}
			w.sessions = append(w.sessions, s)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read checkout sessions: %w", err)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM operator_answers o JOIN transactions t ON t.id = o.transaction_id
		WHERE t.merchant_id = $1 AND o.processed_at IS NULL`, m).Scan(&w.pendingAnswers); err != nil {
		return nil, fmt.Errorf("read operator answers: %w", err)
	}
	err = scanRows(ctx, db, `SELECT transaction_id, kind, attempt_id FROM money_flags WHERE merchant_id = $1`,
		[]any{m}, func(r pgx.Rows) error {
			var id uuid.UUID
			var f flagRow
			if err := r.Scan(&id, &f.kind, &f.attempt); err != nil {
				return err
			}
			w.flags[id] = append(w.flags[id], f)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read money flags: %w", err)
	}
	err = scanRows(ctx, db, `SELECT transaction_id, type, count(*) FROM events WHERE merchant_id = $1 AND transaction_id IS NOT NULL
		GROUP BY transaction_id, type`, []any{m}, func(r pgx.Rows) error {
		var id uuid.UUID
		var typ string
		var n int
		if err := r.Scan(&id, &typ, &n); err != nil {
			return err
		}
		if w.eventTypes[id] == nil {
			w.eventTypes[id] = map[string]int{}
		}
		w.eventTypes[id][typ] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read event types: %w", err)
	}
	w.settle = map[string][]time.Duration{}
	err = scanRows(ctx, db, `SELECT transaction_type, completed_at - created_at FROM transactions
		WHERE merchant_id = $1 AND run = 1 AND completed_at IS NOT NULL AND transaction_type <> 'TRANSFERT'`,
		[]any{m}, func(r pgx.Rows) error {
			var typ string
			var d time.Duration
			if err := r.Scan(&typ, &d); err != nil {
				return err
			}
			w.settle[typ] = append(w.settle[typ], d)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read completion times: %w", err)
	}
	if err := db.QueryRow(ctx, `SELECT count(*) FROM workflow_outbox`).Scan(&w.outbox); err != nil {
		return nil, fmt.Errorf("count the outbox: %w", err)
	}
	if w.events, err = h.eventIDs(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// eventIDs returns the ids of the merchant's events.
func (h *harness) eventIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := scanRows(ctx, h.st.Pool(), `SELECT event_id FROM events WHERE merchant_id = $1`, []any{h.setup.merchantID},
		func(r pgx.Rows) error {
			var id string
			if err := r.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return ids, nil
}

// querier is the part of a pgx pool the harness reads with.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// scanRows runs a query and calls each for every row.
func scanRows(ctx context.Context, db querier, sql string, args []any, each func(pgx.Rows) error) error {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
