package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/telemetry"
)

const transactionColumns = `t.id, t.reference, t.gateway_reference, t.merchant_id, t.environment, t.transaction_type,
	t.flow_direction, t.status, t.requested_amount, t.client_fee, t.debited_amount, t.gateway_fee, t.platform_fee,
	t.net_amount, t.currency, t.original_amount, t.original_currency, t.exchange_rate, t.country, t.network,
	t.customer_name, t.customer_email, t.customer_phone, t.recipient, t.description, t.metadata, t.fee_charge_mode,
	t.checkout_session_id, t.payment_link_id, t.failure_code, t.failure_message, t.created_at, t.updated_at,
	t.completed_at, coalesce(t.network_id, '00000000-0000-0000-0000-000000000000'::uuid), t.run, t.pending_reason,
	t.refunded_transaction_id, t.amount_refunded`

func scanTransaction(row pgx.Row) (sika.Transaction, error) {
	var t sika.Transaction
	var origAmount *decimal.Decimal
	var metadata []byte
	err := row.Scan(&t.ID, &t.Reference, &t.GatewayReference, &t.Merchant, &t.Environment, &t.Type,
		&t.FlowDirection, &t.Status, numeric(&t.RequestedAmount.Decimal), numeric(&t.ClientFee.Decimal), numeric(&t.DebitedAmount.Decimal),
		numeric(&t.GatewayFee.Decimal), numeric(&t.PlatformFee.Decimal), numeric(&t.NetAmount.Decimal), &t.Currency, &origAmount, &t.OriginalCurrency, &t.ExchangeRate, &t.Country, &t.Network,
		&t.CustomerName, &t.CustomerEmail, &t.CustomerPhone, &t.Recipient, &t.Description, &metadata, &t.FeeChargeMode,
		&t.CheckoutSession, &t.PaymentLink, &t.FailureCode, &t.FailureMessage, &t.CreatedAt, &t.UpdatedAt,
		&t.CompletedAt, &t.NetworkID, &t.Run, &t.PendingReason, &t.RefundedTransaction, numeric(&t.AmountRefunded.Decimal))
	t.Amount = t.RequestedAmount
	t.SetRefundStatus()
	if origAmount != nil {
		a := sika.NewAmount(*origAmount)
		t.OriginalAmount = &a
	}
	t.Metadata = json.RawMessage(metadata)
	return t, err
}

// WorkflowStart is a workflow to start once the record that needs it is committed; it is
// written to the outbox in the same Postgres transaction.
type WorkflowStart struct {
	ID    string
	Type  string
	Input any
}

// OutboxEntry is a workflow start waiting in the outbox.
type OutboxEntry struct {
	ID         int64
	WorkflowID string
	Type       string
	Input      json.RawMessage
	Attempts   int
}

func insertOutbox(ctx context.Context, tx pgx.Tx, w WorkflowStart) (int64, error) {
	input, err := json.Marshal(w.Input)
	if err != nil {
		return 0, fmt.Errorf("encode workflow input: %w", err)
	}
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO workflow_outbox (workflow_id, workflow_type, input) VALUES ($1, $2, $3) RETURNING id`,
		w.ID, w.Type, input).Scan(&id); err != nil {
		return 0, fmt.Errorf("insert outbox: %w", err)
	}
	// A webhook delivery wakes the workers' senders when the transaction commits (see
	// ListenOutbox): its first try is made at once. Other starts are made by the API right after
	// the commit; the sweeper takes them only once they are old enough that that start has
	// clearly failed, so a notification would wake every worker replica for nothing at every
	// payment (it looks every interval instead).
	if w.Type == WebhookDeliveryWorkflowType {
		if _, err := tx.Exec(ctx, `SELECT pg_notify('`+outboxChannel+`', '')`); err != nil {
			return 0, fmt.Errorf("notify outbox: %w", err)
		}
	}
	return id, nil
}

// insertStatusLog appends one status change.
func insertStatusLog(ctx context.Context, tx pgx.Tx, t sika.Transaction, from *sika.TransactionStatus, to sika.TransactionStatus, reason string, by sika.Trigger) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	// The gateway that decided the change (set on the row by the completion) is read back for
	// the metric: the domain type does not carry it.
	var gw string
	err = tx.QueryRow(ctx, `INSERT INTO transaction_status_logs (id, transaction_id, merchant_id, environment, from_status, to_status, reason, triggered_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		RETURNING (SELECT gateway FROM transactions WHERE id = $2)`, id, t.ID, t.Merchant, t.Environment, from, to, reason, by).Scan(&gw)
	if err != nil {
		return fmt.Errorf("insert status log: %w", err)
	}
	countStatusChange(tx, t, gw, from, to)
	return nil
}

// countStatusChange counts, once the change commits, a transaction accepted (its first status,
// PENDING) or ended (moved to SUCCESS or FAILED from another status: a completion, or a late
// success reconciling a FAILED payment). Every status change is written by insertStatusLog,
// so this is the one place money outcomes are counted.
func countStatusChange(tx pgx.Tx, t sika.Transaction, gw string, from *sika.TransactionStatus, to sika.TransactionStatus) {
	typ, network, env := string(t.Type), t.Network, string(t.Environment)
	switch {
	case from == nil:
		afterCommit(tx, func() { telemetry.PaymentsAccepted.WithLabelValues(typ, network, env).Inc() })
	case *from == to:
	case to == sika.StatusSuccess || to == sika.StatusFailed:
		status := telemetry.StatusSucceeded
		if to == sika.StatusFailed {
			status = telemetry.StatusFailed
		}
		afterCommit(tx, func() { telemetry.PaymentsCompleted.WithLabelValues(typ, network, gw, env, status).Inc() })
	}
}

// NewTransaction is a transaction to create, with what only creation needs.
type NewTransaction struct {
	sika.Transaction
	// OTP is a pre-payment code kept until the first gateway call.
	OTP string
	// IdempotencyKey, when set, makes a second creation with the same key return the first
	// transaction (a safety net under the API's idempotency layer, which still holds once the
	// API's record of the key is gone: released after a 5xx, or purged after 24 hours).
	IdempotencyKey string
	// Fingerprint identifies the request behind IdempotencyKey (the API's request hash of
	// method, path and canonical body). A second creation with the key and another fingerprint
	// is idempotency_key_reused rather than the first transaction. Nil compares with nothing:
	// the first transaction is returned, as for a row written before fingerprints were kept.
	Fingerprint []byte
	// Reason is written on the first status log.
	Reason string
	// RefundVia, on a refund, is how it reaches the customer (RefundViaOperator or
	// RefundViaPayout).
	RefundVia RefundVia
	// Flag, on a refund, is the REFUND_DUE flag it is issued for: the flag closes when the
	// refund succeeds.
	Flag *uuid.UUID
	// Approval, on a payout over the merchant's approval threshold, makes it AWAITING_APPROVAL
	// (its money held, nothing sent) until a second member decides (DecidePayout).
	Approval *NewPayoutApproval
}

// CreateTransaction inserts a PENDING transaction, its first status log (from null, CLIENT) and
// the outbox row of its workflow, in one Postgres transaction. With an idempotency key already
// used, it returns the existing transaction and created false when the fingerprints match (see
// NewTransaction.Fingerprint), idempotency_key_reused when they differ.
func (s *Store) CreateTransaction(ctx context.Context, nt NewTransaction, start WorkflowStart) (sika.Transaction, int64, bool, error) {
	return s.createTransaction(ctx, nt, start, nil)
}

// createTransaction is CreateTransaction with a step (the payout hold) run in the same Postgres
// transaction, after the record is inserted.
func (s *Store) createTransaction(ctx context.Context, nt NewTransaction, start WorkflowStart, also func(pgx.Tx, sika.Transaction) error) (sika.Transaction, int64, bool, error) {
	t := nt.Transaction
	if err := t.CheckAmounts(); err != nil {
		return t, 0, false, fmt.Errorf("create transaction: %w", err)
	}
	var outboxID int64
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		if t, err = insertTransaction(ctx, tx, nt); err != nil {
			return err
		}
		if also != nil {
			if err := also(tx, t); err != nil {
				return err
			}
		}
		if start.ID == "" { // nothing runs afterwards (a wallet transfer completes at once)
			return nil
		}
		outboxID, err = insertOutbox(ctx, tx, start)
		return err
	})
	if err == errDuplicateKey {
		existing, err := s.transactionOfKey(ctx, nt)
		return existing, 0, false, err
	}
	if err != nil {
		return t, 0, false, err
	}
	return t, outboxID, true, nil
}

// insertTransaction writes a PENDING transaction (AWAITING_APPROVAL when it waits for an
// approval), its first status log (from null, CLIENT) and its events in the caller's Postgres
// transaction; an idempotency key already taken answers errDuplicateKey.
func insertTransaction(ctx context.Context, tx pgx.Tx, nt NewTransaction) (sika.Transaction, error) {
	t := nt.Transaction
	metadata := []byte(t.Metadata)
	if len(metadata) == 0 {
		metadata = []byte("{}")
	}
	var otp, key *string
	if nt.OTP != "" {
		otp = &nt.OTP
	}
	var fingerprint []byte
	if nt.IdempotencyKey != "" {
		key = &nt.IdempotencyKey
		fingerprint = nt.Fingerprint
	}
	var origAmount *decimal.Decimal
	if t.OriginalAmount != nil {
		origAmount = &t.OriginalAmount.Decimal
	}
	status := sika.StatusPending
	if nt.Approval != nil {
		status = sika.StatusAwaitingApproval
	}
	row := tx.QueryRow(ctx, `INSERT INTO transactions AS t (id, reference, merchant_id, environment, transaction_type, status,
			requested_amount, client_fee, debited_amount, gateway_fee, platform_fee, net_amount, currency,
			original_amount, original_currency, exchange_rate, country, network_id, network, customer_name, customer_email,
			customer_phone, recipient, description, metadata, fee_charge_mode, checkout_session_id, payment_link_id,
			otp, idempotency_key, idempotency_fingerprint, refunded_transaction_id, refund_via)
		VALUES ($1, $2, $3, $4, $5, $33, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, NULLIF($17, '00000000-0000-0000-0000-000000000000'::uuid), $18, $19, $20,
			$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, NULLIF($32, ''))
		ON CONFLICT (merchant_id, environment, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
		RETURNING `+transactionColumns,
		t.ID, t.Reference, t.Merchant, t.Environment, t.Type, t.RequestedAmount.Decimal, t.ClientFee.Decimal,
		t.DebitedAmount.Decimal, t.GatewayFee.Decimal, t.PlatformFee.Decimal, t.NetAmount.Decimal, t.Currency,
		origAmount, t.OriginalCurrency, t.ExchangeRate, t.Country, t.NetworkID, t.Network, t.CustomerName,
		t.CustomerEmail, t.CustomerPhone, t.Recipient, t.Description, metadata, t.FeeChargeMode, t.CheckoutSession,
		t.PaymentLink, otp, key, fingerprint, t.RefundedTransaction, string(nt.RefundVia), status)
	created, err := scanTransaction(row)
	if isNoRows(err) {
		return t, errDuplicateKey
	}
	if err != nil {
		return t, fmt.Errorf("insert transaction: %w", err)
	}
	if err := insertStatusLog(ctx, tx, created, nil, status, nt.Reason, sika.TriggerClient); err != nil {
		return created, err
	}
	return created, transactionEvents(ctx, tx, created)
}

var errDuplicateKey = fmt.Errorf("duplicate idempotency key")

// transactionOfKey returns the transaction that already holds nt's idempotency key when it was
// created by the same request, and idempotency_key_reused when it was created by another one
// (another body or route). A row without a fingerprint (written before they were kept), or a
// creation without one, compares with nothing and gets the existing transaction.
func (s *Store) transactionOfKey(ctx context.Context, nt NewTransaction) (sika.Transaction, error) {
	var fingerprint []byte
	existing, err := scanTransaction(withColumns{s.pool.QueryRow(ctx, `SELECT `+transactionColumns+`, t.idempotency_fingerprint
		FROM transactions t WHERE t.merchant_id = $1 AND t.environment = $2 AND t.idempotency_key = $3`,
		nt.Merchant, nt.Environment, nt.IdempotencyKey), []any{&fingerprint}})
	if err != nil {
		return sika.Transaction{}, fmt.Errorf("read transaction of idempotency key: %w", err)
	}
	if fingerprint != nil && nt.Fingerprint != nil && !bytes.Equal(fingerprint, nt.Fingerprint) {
		return sika.Transaction{}, errKeyReused(existing)
	}
	return existing, nil
}

// errKeyReused is the answer to an idempotency key that already created existing for another
// request.
func errKeyReused(existing sika.Transaction) error {
	telemetry.IdempotencyConflicts.WithLabelValues(telemetry.ConflictReused).Inc()
	return sika.Errorf(sika.CodeIdempotencyKeyReused,
		"This Idempotency-Key already created transaction %s with another request body or route; use a new key for a new request.",
		existing.Reference)
}

// withColumns scans a row of more columns than a scanner reads: the extra ones, after the
// scanner's, into extra.
type withColumns struct {
	pgx.Row
	extra []any
}

func (r withColumns) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

// DeleteOutbox removes a workflow start once the workflow runs (or already ran).
func (s *Store) DeleteOutbox(ctx context.Context, id int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM workflow_outbox WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete outbox %d: %w", id, err)
	}
	return nil
}

// outboxDeleteBatch and outboxDeleteEvery bound how long DeleteOutboxSoon holds a row's id.
const (
	outboxDeleteBatch = 500
	outboxDeleteEvery = 100 * time.Millisecond
)

// outboxDeleter removes started workflows' outbox rows in batches (DeleteOutboxSoon).
type outboxDeleter struct {
	mu     sync.Mutex
	closed bool
	ids    chan int64
	done   chan struct{}
}

// DeleteOutboxSoon removes a workflow start's row once the workflow runs, together with the
// rows of other starts made within outboxDeleteEvery: one statement for many payments instead
// of one each. A row whose id is lost (the process dies first) is started again by the
// sweeper, which a workflow start allows (startOperation: the run is checked by the workflow).
func (s *Store) DeleteOutboxSoon(id int64) {
	d := &s.outboxDeletes
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return // the store is closing: the sweeper takes the row
	}
	if d.ids == nil {
		d.ids, d.done = make(chan int64, outboxDeleteBatch), make(chan struct{})
		go s.deleteOutboxBatches(d.ids, d.done)
	}
	d.ids <- id
}

// stop deletes what is queued and ends the batches.
func (d *outboxDeleter) stop() {
	d.mu.Lock()
	d.closed = true
	ids, done := d.ids, d.done
	d.mu.Unlock()
	if ids != nil {
		close(ids)
		<-done
	}
}

func (s *Store) deleteOutboxBatches(in <-chan int64, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(outboxDeleteEvery)
	defer tick.Stop()
	var ids []int64
	flush := func() {
		if len(ids) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := s.pool.Exec(ctx, `DELETE FROM workflow_outbox WHERE id = ANY($1)`, ids); err != nil {
			slog.Warn("delete started workflows' outbox rows; the sweeper will start them again", "rows", len(ids), "err", err)
		}
		ids = ids[:0]
	}
	for {
		select {
		case id, ok := <-in:
			if !ok {
				flush()
				return
			}
			if ids = append(ids, id); len(ids) >= outboxDeleteBatch {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// DueOutbox returns the workflow starts whose next attempt is due, oldest first, once older than
// minAgeSeconds (the API starts them itself right after the commit). Webhook deliveries are not
// among them: the worker's webhook sender claims those (ClaimWebhookOutbox). No lock is taken:
// starting a workflow twice is harmless.
func (s *Store) DueOutbox(ctx context.Context, minAgeSeconds, limit int) ([]OutboxEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, workflow_id, workflow_type, input, attempts FROM workflow_outbox
		WHERE next_attempt_at <= now() AND workflow_type <> $3 AND created_at <= now() - $1 * interval '1 second'
		ORDER BY id LIMIT $2`, minAgeSeconds, limit, WebhookDeliveryWorkflowType)
	if err != nil {
		return nil, fmt.Errorf("list due outbox: %w", err)
	}
	return collectOutbox(rows, "due outbox")
}

func collectOutbox(rows pgx.Rows, what string) ([]OutboxEntry, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OutboxEntry, error) {
		var e OutboxEntry
		err := r.Scan(&e.ID, &e.WorkflowID, &e.Type, &e.Input, &e.Attempts)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", what, err)
	}
	return out, nil
}

// DeferOutbox records a failed start and when to try again.
func (s *Store) DeferOutbox(ctx context.Context, id int64, cause string, delaySeconds int) error {
	_, err := s.pool.Exec(ctx, `UPDATE workflow_outbox SET attempts = attempts + 1, last_error = $2,
		next_attempt_at = now() + $3 * interval '1 second' WHERE id = $1`, id, cause, delaySeconds)
	if err != nil {
		return fmt.Errorf("defer outbox %d: %w", id, err)
	}
	return nil
}

// TransactionByID returns a transaction of the merchant and environment, or not_found.
func (s *Store) TransactionByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.Transaction, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t
		WHERE t.id = $1 AND t.merchant_id = $2 AND t.environment = $3`, id, merchantID, env), scanTransaction, "Transaction", "select transaction")
}

// Transaction returns a transaction by id alone, for workflows (which carry no tenancy).
func (s *Store) Transaction(ctx context.Context, id uuid.UUID) (sika.Transaction, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t WHERE t.id = $1`, id), scanTransaction, "Transaction", "select transaction")
}

// TransactionDetail returns a transaction with its attempts and status logs.
func (s *Store) TransactionDetail(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.TransactionDetail, error) {
	t, err := s.TransactionByID(ctx, merchantID, env, id)
	if err != nil {
		return sika.TransactionDetail{}, err
	}
	d := sika.TransactionDetail{Transaction: t}
	if d.Attempts, err = s.attempts(ctx, `WHERE a.transaction_id = $1 ORDER BY a.run, a.sequence`, id); err != nil {
		return d, err
	}
	d.StatusLogs, err = collect(ctx, s.pool, "status logs", scanStatusLog, `SELECT `+statusLogColumns+` FROM transaction_status_logs l
		WHERE l.transaction_id = $1 ORDER BY l.created_at, l.id`, id)
	return d, err
}

const statusLogColumns = `l.id, l.transaction_id, l.from_status, l.to_status, l.reason, l.triggered_by, l.created_at`

func scanStatusLog(row pgx.Row) (sika.TransactionStatusLog, error) {
	var l sika.TransactionStatusLog
	err := row.Scan(&l.ID, &l.Transaction, &l.FromStatus, &l.ToStatus, &l.Reason, &l.TriggeredBy, &l.CreatedAt)
	return l, err
}

const attemptColumns = `a.id, a.transaction_id, a.gateway, a.priority, a.run, a.sequence, a.status, a.gateway_reference,
	a.failure_code, a.failure_message, a.created_at, a.updated_at, a.completed_at, a.last_answer, a.last_answer_at`

func scanAttempt(row pgx.Row) (sika.TransactionAttempt, error) {
	var a sika.TransactionAttempt
	err := row.Scan(attemptDest(&a)...)
	return a, err
}

// attemptDest is where the attemptColumns of a row go.
func attemptDest(a *sika.TransactionAttempt) []any {
	return []any{&a.ID, &a.Transaction, &a.Gateway, &a.Priority, &a.Run, &a.Sequence, &a.Status, &a.GatewayReference,
		&a.FailureCode, &a.FailureMessage, &a.CreatedAt, &a.UpdatedAt, &a.CompletedAt, &a.LastAnswer, &a.LastAnswerAt}
}

// AttemptAndTransaction returns an attempt and its transaction in one query (an operator's
// callback needs both), or not_found.
func (s *Store) AttemptAndTransaction(ctx context.Context, attemptID uuid.UUID) (sika.TransactionAttempt, sika.Transaction, error) {
	var a sika.TransactionAttempt
	t, err := scanTransaction(withColumns{s.pool.QueryRow(ctx, `SELECT `+transactionColumns+`, `+attemptColumns+`
		FROM transaction_attempts a JOIN transactions t ON t.id = a.transaction_id WHERE a.id = $1`, attemptID), attemptDest(&a)})
	return a, t, rowErr(err, "Transaction attempt", "select attempt and transaction")
}

func (s *Store) attempts(ctx context.Context, where string, args ...any) ([]sika.TransactionAttempt, error) {
	return collect(ctx, s.pool, "attempts", scanAttempt, `SELECT `+attemptColumns+` FROM transaction_attempts a `+where, args...)
}
