package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

const checkoutColumns = `c.id, c.merchant_id, c.environment, c.created_by_member, c.slug, c.checkout_url, c.amount, c.currency,
	c.description, c.country, c.customer_email, c.customer_name, c.customer_phone, c.return_url, c.metadata,
	c.fee_charge_mode, c.status, c.expires_at, c.transaction_id, c.payment_link_id, c.paid_at, c.created_at, c.updated_at`

func scanCheckoutSession(row pgx.Row) (sika.CheckoutSession, error) {
	var c sika.CheckoutSession
	var amount decimal.Decimal
	var metadata []byte
	err := row.Scan(&c.ID, &c.Merchant, &c.Environment, &c.CreatedByMember, &c.Slug, &c.CheckoutURL, &amount, &c.Currency,
		&c.Description, &c.Country, &c.CustomerEmail, &c.CustomerName, &c.CustomerPhone, &c.ReturnURL, &metadata,
		&c.FeeChargeMode, &c.Status, &c.ExpiresAt, &c.Transaction, &c.PaymentLink, &c.PaidAt, &c.CreatedAt, &c.UpdatedAt)
	c.Amount = sika.NewAmount(amount)
	c.Metadata = json.RawMessage(metadata)
	return c, err
}

var checkoutTable = table[sika.CheckoutSession]{kind: "Checkout session", what: "checkout sessions", columns: checkoutColumns,
	from: "checkout_sessions c", alias: "c.", scan: scanCheckoutSession}

// CreateCheckoutSession inserts a PENDING session and the outbox row of its expiry workflow in
// one Postgres transaction: no session is ever left without the workflow that expires it.
func (s *Store) CreateCheckoutSession(ctx context.Context, c sika.CheckoutSession, start func(sika.CheckoutSession) WorkflowStart) (sika.CheckoutSession, int64, error) {
	var outboxID int64
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		metadata := []byte(c.Metadata)
		if len(metadata) == 0 {
			metadata = []byte("{}")
		}
		created, err := scanCheckoutSession(tx.QueryRow(ctx, `INSERT INTO checkout_sessions AS c (id, merchant_id, environment,
				created_by_member, slug, checkout_url, amount, currency, description, country, customer_email, customer_name,
				customer_phone, return_url, metadata, fee_charge_mode, status, expires_at, payment_link_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'PENDING', $17, $18)
			RETURNING `+checkoutColumns,
			c.ID, c.Merchant, c.Environment, c.CreatedByMember, c.Slug, c.CheckoutURL, c.Amount.Decimal, c.Currency,
			c.Description, c.Country, c.CustomerEmail, c.CustomerName, c.CustomerPhone, c.ReturnURL, metadata,
			c.FeeChargeMode, c.ExpiresAt, c.PaymentLink))
		if err != nil {
			return fmt.Errorf("insert checkout session: %w", err)
		}
		c = created
		outboxID, err = insertOutbox(ctx, tx, start(c))
		return err
	})
	return c, outboxID, err
}

// CheckoutSessionByID returns a session of the merchant and environment, or not_found.
func (s *Store) CheckoutSessionByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.CheckoutSession, error) {
	return checkoutTable.byID(ctx, s.pool, merchantID, env, id, false)
}

// CheckoutSession returns a session by id alone, for workflows (which carry no tenancy).
func (s *Store) CheckoutSession(ctx context.Context, id uuid.UUID) (sika.CheckoutSession, error) {
	return checkoutTable.where(ctx, s.pool, "select checkout session", `c.id = $1`, id)
}

// CheckoutSessionBySlug returns a session by its public slug, for the hosted page.
func (s *Store) CheckoutSessionBySlug(ctx context.Context, slug string) (sika.CheckoutSession, error) {
	if !postgresText(slug) {
		return sika.CheckoutSession{}, sika.NotFound("Checkout session")
	}
	return checkoutTable.where(ctx, s.pool, "select checkout session", `c.slug = $1`, slug)
}

// CheckoutSessionFilter narrows the list of sessions; empty fields do not filter.
type CheckoutSessionFilter struct {
	Status   sika.CheckoutStatus
	Currency string
}

// ListCheckoutSessions returns a page of the merchant's sessions, newest first.
func (s *Store) ListCheckoutSessions(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f CheckoutSessionFilter, page PageRequest) ([]sika.CheckoutSession, int, error) {
	return listPage(ctx, s, "list checkout sessions", checkoutColumns, `FROM checkout_sessions c WHERE c.merchant_id = $1 AND c.environment = $2
		AND ($3 = '' OR c.status = $3) AND ($4 = '' OR c.currency = $4)`, `c.created_at DESC, c.id DESC`,
		[]any{merchantID, env, string(f.Status), f.Currency}, page, scanCheckoutSession)
}

// CancelCheckoutSession moves a PENDING session to CANCELLED and records
// checkout_session.cancelled, in one Postgres transaction; any other status answers 409
// not_pending naming it.
func (s *Store) CancelCheckoutSession(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.CheckoutSession, error) {
	var c sika.CheckoutSession
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		c, err = checkoutTable.byID(ctx, tx, merchantID, env, id, true)
		if err != nil {
			return err
		}
		if c.Status != sika.CheckoutPending {
			return sika.Errorf(sika.CodeNotPending, "Checkout session is %s, not PENDING.", c.Status)
		}
		c, _, err = closeCheckoutSession(ctx, tx, id, sika.CheckoutCancelled, nil)
		return err
	})
	return c, err
}

// ExpireCheckoutSession moves a session that is still PENDING to EXPIRED and records
// checkout_session.expired; a session already paid or cancelled is left as it is (changed false).
func (s *Store) ExpireCheckoutSession(ctx context.Context, id uuid.UUID) (c sika.CheckoutSession, changed bool, err error) {
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		c, changed, err = closeCheckoutSession(ctx, tx, id, sika.CheckoutExpired, nil)
		return err
	})
	return c, changed, err
}

// closeCheckoutSession moves a PENDING session to a final status with a conditional UPDATE and
// records the matching event. Under concurrency the row lock of the UPDATE serialises the
// movers: the second re-reads the row, sees it no longer PENDING and changes nothing, so a
// session leaves PENDING exactly once. paid is the transaction that paid it (PAID only).
func closeCheckoutSession(ctx context.Context, tx pgx.Tx, id uuid.UUID, to sika.CheckoutStatus, paid *sika.Transaction) (sika.CheckoutSession, bool, error) {
	var txID *uuid.UUID
	if paid != nil {
		txID = &paid.ID
	}
	c, err := scanCheckoutSession(tx.QueryRow(ctx, `UPDATE checkout_sessions c SET status = $2,
			transaction_id = coalesce($3, transaction_id),
			paid_at = CASE WHEN $2 = 'PAID' THEN now() ELSE paid_at END, updated_at = now()
		WHERE c.id = $1 AND c.status = 'PENDING' RETURNING `+checkoutColumns, id, to, txID))
	if isNoRows(err) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("close checkout session: %w", err)
	}
	typ := map[sika.CheckoutStatus]sika.EventType{
		sika.CheckoutPaid: sika.EventCheckoutSessionPaid, sika.CheckoutExpired: sika.EventCheckoutSessionExpired,
		sika.CheckoutCancelled: sika.EventCheckoutSessionCanceled,
	}[to]
	var link *uuid.UUID
	if paid != nil {
		link = paid.PaymentLink
	}
	if _, err := recordEvent(ctx, tx, typ, c.Merchant, c.Environment, link, txID, c); err != nil {
		return c, false, err
	}
	return c, true, nil
}

// markCheckoutSessionPaid is the step of CompletePayment for a successful payment made through
// a checkout session: the session becomes PAID (once) with the transaction and
// checkout_session.paid is recorded. A payment that succeeds after the session was cancelled or
// expired keeps its transaction SUCCESS (the customer paid, the wallet is credited) and the
// session keeps its status.
func markCheckoutSessionPaid(ctx context.Context, tx pgx.Tx, t sika.Transaction) error {
	if t.CheckoutSession == nil || t.Status != sika.StatusSuccess || t.Type != sika.TypePayment {
		return nil
	}
	_, _, err := closeCheckoutSession(ctx, tx, *t.CheckoutSession, sika.CheckoutPaid, &t)
	return err
}

// CreateCheckoutPayment creates a payment of a checkout session (as CreateTransaction) after
// locking the session in the same Postgres transaction: a session that is no longer PENDING, or
// whose expires_at has passed at now, answers 409 session_not_payable and nothing is created.
// A session has at most one payment in flight: while one is PENDING, another answers 409
// checkout_payment_in_progress and nothing is created; while an earlier one may still be paid
// at its operator (an attempt re-read, waitForUnresolved), 409 outcome_unresolved. Postgres enforces it (the unique index
// checkoutInFlightIndex), so concurrent calls on one session create exactly one payment.
func (s *Store) CreateCheckoutPayment(ctx context.Context, nt NewTransaction, start WorkflowStart, now time.Time) (sika.Transaction, int64, error) {
	if nt.CheckoutSession == nil {
		return sika.Transaction{}, 0, fmt.Errorf("create checkout payment: no session")
	}
	t, outboxID, _, err := s.createTransaction(ctx, nt, start, func(tx pgx.Tx, t sika.Transaction) error {
		c, err := scanCheckoutSession(tx.QueryRow(ctx, `SELECT `+checkoutColumns+` FROM checkout_sessions c WHERE c.id = $1 FOR UPDATE`, *t.CheckoutSession))
		if err != nil {
			return fmt.Errorf("lock checkout session: %w", err)
		}
		if !c.Payable(now) {
			return sessionNotPayable(c)
		}
		if err := waitForUnresolved(ctx, tx, "this checkout session", `t.checkout_session_id = $1 AND t.id <> $2`, c.ID, t.ID); err != nil {
			return err
		}
		return setTransactionSlug(ctx, tx, t.ID, "checkout_session_slug", c.Slug)
	})
	if isUniqueViolation(err, checkoutInFlightIndex) {
		// The INSERT met the index before the session was read: a session that can no longer
		// be paid (cancelled or expired with a payment still in flight) says so first.
		if c, cerr := s.CheckoutSession(ctx, *nt.CheckoutSession); cerr == nil && !c.Payable(now) {
			return sika.Transaction{}, 0, sessionNotPayable(c)
		}
		return sika.Transaction{}, 0, paymentInProgress(err)
	}
	return t, outboxID, err
}

// checkoutInFlightIndex is the partial unique index that lets a checkout session have one
// PENDING payment at a time (migration 0013).
const checkoutInFlightIndex = "transactions_checkout_in_flight"

// paymentInProgress turns the unique violation of a second in-flight payment of a checkout
// session (a PENDING insert, or a FAILED payment moved back to PENDING) into 409
// checkout_payment_in_progress; any other error is returned as it is.
func paymentInProgress(err error) error {
	if isUniqueViolation(err, checkoutInFlightIndex) {
		return sika.Errorf(sika.CodePaymentInProgress, "A payment for this checkout session is already in progress; wait for its outcome.")
	}
	return err
}

// sessionNotPayable is the 409 of a payment on a session that can no longer be paid.
func sessionNotPayable(c sika.CheckoutSession) error {
	if c.Status == sika.CheckoutPending {
		return sika.Errorf(sika.CodeSessionNotPayable, "Checkout session has expired.")
	}
	return sika.Errorf(sika.CodeSessionNotPayable, "Checkout session is %s and can no longer be paid.", c.Status)
}

// LatestCheckoutTransaction returns the newest payment made through a session, or not_found.
func (s *Store) LatestCheckoutTransaction(ctx context.Context, sessionID uuid.UUID) (sika.Transaction, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t
		WHERE t.checkout_session_id = $1 ORDER BY t.created_at DESC, t.id DESC LIMIT 1`, sessionID), scanTransaction, "Transaction", "select checkout transaction")
}

// HostedNetworks returns the networks a hosted page may offer in an environment (active, with
// an enabled gateway route), each with the ISO code of its country, by country and name.
func (s *Store) HostedNetworks(ctx context.Context, env sika.Environment) ([]sika.Network, []string, error) {
	rows, err := s.pool.Query(ctx, `SELECT n.id, n.country_id, n.code, n.name, n.is_active, n.otp_kind, n.otp_instructions,
			n.redirect, n.min_amount, n.max_amount, n.created_at, n.updated_at, c.iso_code
		FROM networks n JOIN countries c ON c.id = n.country_id
		WHERE n.is_active AND EXISTS (SELECT 1 FROM gateway_routes g WHERE g.network_id = n.id AND g.environment = $1 AND g.is_enabled)
		ORDER BY c.iso_code, n.name`, env)
	if err != nil {
		return nil, nil, fmt.Errorf("list hosted networks: %w", err)
	}
	defer rows.Close()
	var networks []sika.Network
	var countries []string
	for rows.Next() {
		var n sika.Network
		var iso string
		if err := rows.Scan(&n.ID, &n.Country, &n.Code, &n.Name, &n.IsActive, &n.OTPKind, &n.OTPInstructions, &n.Redirect,
			&n.MinAmount, &n.MaxAmount, &n.CreatedAt, &n.UpdatedAt, &iso); err != nil {
			return nil, nil, fmt.Errorf("scan hosted network: %w", err)
		}
		networks = append(networks, n)
		countries = append(countries, iso)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list hosted networks: %w", err)
	}
	return networks, countries, nil
}

// setTransactionSlug copies the slug of the session or link that produced a transaction onto it
// (column checkout_session_slug or payment_link_slug), so that transaction search needs no join.
func setTransactionSlug(ctx context.Context, tx pgx.Tx, id uuid.UUID, column, slug string) error {
	if _, err := tx.Exec(ctx, `UPDATE transactions SET `+column+` = $2 WHERE id = $1`, id, slug); err != nil {
		return fmt.Errorf("set %s: %w", column, err)
	}
	return nil
}

// waitForUnresolved refuses (409 outcome_unresolved, with the time it can be tried again) a new
// payment while an earlier payment of the same session or customer (the payments that match
// where, with $1 and $2) may still be paid at its operator: one of its attempts ended without
// the operator's final word and is still re-read. Pushing the customer again then could charge
// them twice.
func waitForUnresolved(ctx context.Context, tx pgx.Tx, of, where string, args ...any) error {
	var gw string
	var until time.Time
	err := tx.QueryRow(ctx, `SELECT a.gateway, a.recheck_until FROM transaction_attempts a JOIN transactions t ON t.id = a.transaction_id
		WHERE `+where+` AND t.status <> 'SUCCESS' AND a.recheck_until > now() AND a.failure_code <> 'gateway_unavailable'
		ORDER BY a.recheck_until DESC LIMIT 1`, args...).Scan(&gw, &until)
	if isNoRows(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read unresolved payments: %w", err)
	}
	return sika.Errorf(sika.CodeOutcomeUnresolved, "An earlier payment of %s expired at %s without the operator confirming its cancel; "+
		"Sika re-reads it until %s so that the customer is not charged twice. Pay again after that.", of, gw, until.UTC().Format(time.RFC3339))
}
