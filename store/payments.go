package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sikahq/sika"
)

// paymentTable reads the transactions the payment routes act on, a payment's not_found naming it.
var paymentTable = table[sika.Transaction]{kind: "Payment", what: "payments", columns: transactionColumns,
	from: "transactions t", alias: "t.", scan: scanTransaction}

// GatewayRoute is one line of the routing table.
type GatewayRoute struct {
	Gateway  string
	Priority int
}

// GatewayRoutes returns the enabled gateways of a network in an environment, by priority.
func (s *Store) GatewayRoutes(ctx context.Context, networkID uuid.UUID, env sika.Environment) ([]GatewayRoute, error) {
	return cachedRead(s, fmt.Sprint("routes ", networkID, env), func() ([]GatewayRoute, error) {
		return s.gatewayRoutes(ctx, networkID, env)
	}, slices.Clone)
}

func (s *Store) gatewayRoutes(ctx context.Context, networkID uuid.UUID, env sika.Environment) ([]GatewayRoute, error) {
	return collect(ctx, s.pool, "gateway routes", func(r pgx.Row) (GatewayRoute, error) {
		var g GatewayRoute
		err := r.Scan(&g.Gateway, &g.Priority)
		return g, err
	}, `SELECT gateway, priority FROM gateway_routes
		WHERE network_id = $1 AND environment = $2 AND is_enabled ORDER BY priority`, networkID, env)
}

// EnsureAttempt records an attempt, or returns the one already recorded with the same id (an
// activity that runs twice records it once).
func (s *Store) EnsureAttempt(ctx context.Context, t sika.Transaction, a sika.TransactionAttempt) (sika.TransactionAttempt, error) {
	_, _, got, err := s.StartAttempt(ctx, t.ID, a)
	return got, err
}

// StartAttempt records an attempt of a transaction, or finds the one already recorded with the
// same id (an activity that runs twice records it once), and returns it with the transaction
// and the pre-payment OTP still kept for it ("" when none): what sending an attempt needs, in
// one statement (one round trip, one snapshot: the attempt copies the transaction as read).
//
// The attempt keeps the price and the number it asks the customer to pay (a retry may price the
// payment again on another network): a late success is credited at this price. A statement does
// not see what its own WITH inserted, hence the UNION for the row already there.
func (s *Store) StartAttempt(ctx context.Context, txID uuid.UUID, a sika.TransactionAttempt) (sika.Transaction, string, sika.TransactionAttempt, error) {
	var otp *string
	var got sika.TransactionAttempt
	t, err := scanTransaction(withColumns{s.pool.QueryRow(ctx, `WITH t AS (SELECT * FROM transactions WHERE id = $1),
		ins AS (
			INSERT INTO transaction_attempts (id, transaction_id, merchant_id, environment, run, sequence, gateway, priority, status,
				network_id, network, customer_phone, client_fee, gateway_fee, platform_fee, debited_amount, net_amount)
			SELECT $2, t.id, t.merchant_id, t.environment, $3, $4, $5, $6, 'PENDING',
				t.network_id, t.network, t.customer_phone, t.client_fee, t.gateway_fee, t.platform_fee, t.debited_amount, t.net_amount
			FROM t ON CONFLICT DO NOTHING
			RETURNING *)
		SELECT `+transactionColumns+`, t.otp, `+attemptColumns+` FROM t CROSS JOIN LATERAL (
			SELECT * FROM ins
			UNION ALL
			SELECT * FROM transaction_attempts WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM ins)) a`,
		txID, a.ID, a.Run, a.Sequence, a.Gateway, a.Priority), append([]any{&otp}, attemptDest(&got)...)})
	// No row: no such transaction, or another transaction's attempt holds the id's conflict
	// target (or, under a concurrent first insert, the row is not visible yet: a retry finds it).
	if err := rowErr(err, "Transaction attempt", "start attempt"); err != nil || otp == nil {
		return t, "", got, err
	}
	return t, *otp, got, nil
}

// Attempt returns an attempt by id, or not_found.
func (s *Store) Attempt(ctx context.Context, id uuid.UUID) (sika.TransactionAttempt, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+attemptColumns+` FROM transaction_attempts a WHERE a.id = $1`, id), scanAttempt, "Transaction attempt", "select attempt")
}

// LatestAttempt returns the newest attempt of a transaction's current run, or not_found.
func (s *Store) LatestAttempt(ctx context.Context, txID uuid.UUID) (sika.TransactionAttempt, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+attemptColumns+` FROM transaction_attempts a
		JOIN transactions t ON t.id = a.transaction_id AND t.run = a.run
		WHERE a.transaction_id = $1 ORDER BY a.sequence DESC LIMIT 1`, txID), scanAttempt, "Transaction attempt", "select latest attempt")
}

// ClearOTP forgets a pre-payment OTP once a gateway has received it.
func (s *Store) ClearOTP(ctx context.Context, txID uuid.UUID) error {
	if _, err := s.pool.Exec(ctx, `UPDATE transactions SET otp = NULL WHERE id = $1 AND otp IS NOT NULL`, txID); err != nil {
		return fmt.Errorf("clear otp: %w", err)
	}
	return nil
}

// AttemptUpdate is what a gateway answered for an attempt.
type AttemptUpdate struct {
	ID               uuid.UUID
	Status           sika.AttemptStatus
	GatewayReference string
	FailureCode      string
	FailureMessage   string
	// RecheckFor, when set, keeps the attempt re-read at its gateway that long (an attempt
	// closed on a 503 that the operator may have taken all the same).
	RecheckFor time.Duration
}

// UpdateAttempt records a gateway's answer on an attempt that is still PENDING; a final attempt
// never changes again. The time of the first answer is kept (answered_at: the gateway's latency,
// read by NetworkHealth).
func (s *Store) UpdateAttempt(ctx context.Context, u AttemptUpdate) error {
	return updateAttempt(ctx, s.pool, u) // one statement: no BEGIN and COMMIT round trips
}

// execer runs a statement: a pool (a statement of its own) or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func updateAttempt(ctx context.Context, tx execer, u AttemptUpdate) error {
	_, err := tx.Exec(ctx, `UPDATE transaction_attempts SET status = $2,
			gateway_reference = CASE WHEN $3 = '' THEN gateway_reference ELSE $3 END,
			failure_code = $4, failure_message = $5, updated_at = now(), answered_at = COALESCE(answered_at, now()),
			completed_at = CASE WHEN $2 = 'PENDING' THEN NULL ELSE now() END,
			recheck_until = CASE WHEN $6::bigint > 0 THEN now() + $6::bigint * interval '1 millisecond' ELSE recheck_until END
		WHERE id = $1 AND status = 'PENDING'`, u.ID, u.Status, u.GatewayReference, u.FailureCode, u.FailureMessage, u.RecheckFor.Milliseconds())
	if err != nil {
		return fmt.Errorf("update attempt: %w", err)
	}
	return nil
}

// Completion ends a transaction's run: SUCCESS or FAILED, from a given attempt.
type Completion struct {
	TransactionID uuid.UUID
	Run           int
	Attempt       AttemptUpdate // ID zero when no attempt is concerned (every gateway unavailable)
	Gateway       string
	Status        sika.TransactionStatus
	Reason        string
	TriggeredBy   sika.Trigger
	// RecheckFor, on a FAILED collection that ended without the operator's final word (expired
	// with its cancel unclear), keeps the attempt re-read at its gateway for that long: a success
	// that comes later is reconciled (ReconcileSuccess).
	RecheckFor time.Duration
	// Staff, when support ended the run, is the audited action, written with the completion.
	Staff *StaffAction
}

// CompletePayment moves a PENDING transaction of the given run to SUCCESS or FAILED, in one
// Postgres transaction with its status log, its attempt and its wallet movement: a successful
// collection credits the wallet (COLLECTION/CREDIT); a payout settles its hold when it succeeds
// (PAYOUT/DEBIT) and releases it when it fails (PAYOUT_REVERSAL/CREDIT); a successful payment
// of a checkout session marks the session PAID (see markCheckoutSessionPaid). It is idempotent: a
// transaction that is no longer PENDING in that run is left as it is and changed is false.
func (s *Store) CompletePayment(ctx context.Context, c Completion) (t sika.Transaction, changed bool, err error) {
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		t, err = scanTransaction(tx.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t WHERE t.id = $1 FOR UPDATE`, c.TransactionID))
		if err != nil {
			return fmt.Errorf("lock transaction: %w", err)
		}
		if t.Status != sika.StatusPending || t.Run != c.Run {
			if err := endStaleAttempt(ctx, tx, c); err != nil {
				return err
			}
			if c.Status == sika.StatusSuccess && c.Attempt.ID != uuid.Nil {
				// The operator paid an attempt of a run that is over (a retry replaced it, or a
				// late success already decided it): never drop a success, reconcile it.
				if t, _, err = reconcileSuccess(ctx, tx, LateSuccess{AttemptID: c.Attempt.ID, GatewayReference: c.Attempt.GatewayReference,
					Source: "status of a run that had ended"}); err != nil {
					return err
				}
			}
			_, err := processKeptAnswers(ctx, tx, t.ID, uuid.Nil)
			return err
		}
		var decided uuid.UUID // the kept answer the run ends on, if any
		var paid uuid.UUID    // the attempt this transaction records SUCCESS, if any
		if c.Status == sika.StatusFailed {
			// The operator reported another attempt of this run paid while the run went on (a
			// gateway that answered 503 and paid anyway, a success that came while the end was
			// being recorded): the run ends SUCCESS on it, not FAILED.
			kept, err := keptAnswers(ctx, tx, t.ID)
			if err != nil {
				return err
			}
			for _, k := range kept {
				if k.Run != t.Run {
					continue
				}
				if k.AttemptID != c.Attempt.ID {
					if _, err := endAttempt(ctx, tx, c); err != nil {
						return err
					}
				}
				decided, paid = k.ID, k.AttemptID
				c.Status, c.Gateway, c.TriggeredBy, c.RecheckFor = sika.StatusSuccess, k.Gateway, sika.TriggerSystem, 0
				c.Reason = fmt.Sprintf("Confirmed by %s for attempt %s (%s) while the run was ending: %s", k.Gateway, k.AttemptID, k.Source, c.Reason)
				c.Attempt = AttemptUpdate{ID: k.AttemptID, Status: sika.AttemptSuccess, GatewayReference: k.GatewayReference}
				if err := markAttemptPaid(ctx, tx, k.AttemptID, k.GatewayReference); err != nil {
					return err
				}
				break
			}
		}
		ended, err := endAttempt(ctx, tx, c)
		if err != nil {
			return err
		}
		if ended && c.Attempt.Status == sika.AttemptSuccess {
			paid = c.Attempt.ID
		}
		if c.Staff != nil {
			if err := recordStaffAction(ctx, tx, *c.Staff); err != nil {
				return err
			}
		}
		failureCode, failureMessage := "", ""
		if c.Status == sika.StatusFailed {
			failureCode, failureMessage = c.Attempt.FailureCode, c.Attempt.FailureMessage
		}
		t, err = scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET status = $2, failure_code = $3, failure_message = $4,
				gateway = CASE WHEN $5 = '' THEN gateway ELSE $5 END,
				gateway_reference = CASE WHEN $6 = '' THEN gateway_reference ELSE $6 END,
				otp = NULL, pending_reason = '', updated_at = now(), completed_at = now()
			WHERE t.id = $1 RETURNING `+transactionColumns,
			t.ID, c.Status, failureCode, failureMessage, c.Gateway, c.Attempt.GatewayReference))
		if err != nil {
			return fmt.Errorf("complete transaction: %w", err)
		}
		from := sika.StatusPending
		if err := insertStatusLog(ctx, tx, t, &from, c.Status, c.Reason, c.TriggeredBy); err != nil {
			return err
		}
		if err := settleRefund(ctx, tx, t); err != nil {
			return err
		}
		if err := transactionEvents(ctx, tx, t); err != nil {
			return err
		}
		if decided != uuid.Nil {
			if err := answerProcessed(ctx, tx, decided, ReconcileCredited); err != nil {
				return err
			}
		}
		// The wallet's movement comes as late as the order of locks allows (the wallet before a
		// checkout session, as reconcileSuccess; a payout's hold settled or released before the
		// kept answers are weighed against it): every completion of the merchant in the country
		// waits for the wallet's row from here to the commit.
		if p, ok := completionPosting(t); ok {
			if p.Type == sika.LedgerCollection && c.Attempt.ID != uuid.Nil {
				p.Attempt = &c.Attempt.ID
			}
			if _, err := postLedgerEntry(ctx, tx, p); err != nil {
				return err
			}
		}
		changed = true
		paidSession, err := payCheckoutSession(ctx, tx, t)
		if err != nil {
			return err
		}
		if !paidSession {
			// Another payment paid the session first (only a late success can get here): the
			// customer paid twice.
			if err := flagMoney(ctx, tx, FlagRefundDue, t, c.Attempt.ID, t.DebitedAmount.Decimal,
				fmt.Sprintf("Checkout session %s was already paid by another payment: this one is credited and due for refund.", *t.CheckoutSession)); err != nil {
				return err
			}
		}
		// What the operator said about the run's other attempts while it went on is settled
		// now that the run's end is recorded (a second success: REFUND_DUE, PAYOUT_PAID_TWICE).
		reconciled, err := processKeptAnswers(ctx, tx, t.ID, paid)
		if err != nil || !reconciled {
			return err
		}
		t, err = scanTransaction(tx.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t WHERE t.id = $1`, t.ID))
		return err
	})
	return t, changed, err
}

// endAttempt records the run's answer on its attempt and, when the run ended it without the
// operator's final word (expired with its cancel unclear, ended by support), how long it is
// re-read. An attempt already final (a duplicate completion, an attempt the operator reported
// paid) is left as it is.
func endAttempt(ctx context.Context, tx pgx.Tx, c Completion) (bool, error) {
	if c.Attempt.ID == uuid.Nil {
		return false, nil
	}
	tag, err := tx.Exec(ctx, `UPDATE transaction_attempts SET status = $2,
			gateway_reference = CASE WHEN $3 = '' THEN gateway_reference ELSE $3 END,
			failure_code = $4, failure_message = $5, updated_at = now(), answered_at = COALESCE(answered_at, now()),
			completed_at = CASE WHEN $2 = 'PENDING' THEN NULL ELSE now() END,
			recheck_until = CASE WHEN $6::bigint > 0 THEN now() + $6::bigint * interval '1 millisecond' ELSE recheck_until END
		WHERE id = $1 AND status = 'PENDING'`, c.Attempt.ID, c.Attempt.Status, c.Attempt.GatewayReference,
		c.Attempt.FailureCode, c.Attempt.FailureMessage, c.RecheckFor.Milliseconds())
	if err != nil {
		return false, fmt.Errorf("end attempt: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// endStaleAttempt records the end a run gives its attempt when its transaction no longer
// waits for that run (a retry replaced it, or a late success of an earlier run decided the
// payment): an attempt that expired with its cancel unclear is still re-read until the
// operator's final word, or a customer who approves it later would be neither credited nor
// flagged.
func endStaleAttempt(ctx context.Context, tx pgx.Tx, c Completion) error {
	if c.Status == sika.StatusSuccess {
		return nil // reconciled by the caller
	}
	_, err := endAttempt(ctx, tx, c)
	return err
}

// completionPosting is the wallet movement that ends a transaction, if any.
func completionPosting(t sika.Transaction) (ledgerPosting, bool) {
	p := ledgerPosting{Merchant: t.Merchant, Environment: t.Environment, Country: t.Country, Currency: t.Currency, Transaction: &t.ID}
	held := t.DebitedAmount.Decimal
	switch {
	case t.Type == sika.TypePayment && t.Status == sika.StatusSuccess:
		p.Type, p.Direction, p.Amount, p.AvailableDelta = sika.LedgerCollection, sika.Credit, t.NetAmount.Decimal, t.NetAmount.Decimal
		p.Description = "Collection " + t.Reference
	case t.Type.HoldsFunds() && t.Status == sika.StatusSuccess:
		p.Type, p.Direction, p.Amount, p.PendingDelta = sika.LedgerPayout, sika.Debit, held, held.Neg()
		p.Description = holdLabel(t) + " " + t.Reference
	case t.Type.HoldsFunds() && t.Status == sika.StatusFailed:
		p.Type, p.Direction, p.Amount, p.AvailableDelta, p.PendingDelta = sika.LedgerPayoutReversal, sika.Credit, held, held, held.Neg()
		p.Description = holdLabel(t) + " " + t.Reference + " failed: hold released"
	default:
		return p, false
	}
	return p, true
}

// ErrRetriedWithKey is RetryPayment's answer when the request's Idempotency-Key has already
// started a run of the transaction: the transaction is returned as it stands and nothing is
// done again.
var ErrRetriedWithKey = errors.New("this Idempotency-Key already retried the payment")

// RetryKey is the Idempotency-Key of a retry request and its fingerprint (the API's request
// hash); the zero value is a retry without a key.
type RetryKey struct {
	Key         string
	Fingerprint []byte
}

// RetriedWithKey reports whether k already started a run of transaction id (the API answers
// such a request with the transaction as it stands before judging its status); another
// request's fingerprint under the same key is idempotency_key_reused.
func (s *Store) RetriedWithKey(ctx context.Context, id uuid.UUID, k RetryKey) (bool, error) {
	return retriedWithKey(ctx, s.pool, id, k)
}

func retriedWithKey(ctx context.Context, q rowQueryer, id uuid.UUID, k RetryKey) (bool, error) {
	if k.Key == "" {
		return false, nil
	}
	var fingerprint []byte
	err := q.QueryRow(ctx, `SELECT idempotency_fingerprint FROM transaction_retries WHERE transaction_id = $1 AND idempotency_key = $2`,
		id, k.Key).Scan(&fingerprint)
	switch {
	case isNoRows(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read retry of idempotency key: %w", err)
	case fingerprint != nil && k.Fingerprint != nil && !bytes.Equal(fingerprint, k.Fingerprint):
		return false, sika.Errorf(sika.CodeIdempotencyKeyReused, "This Idempotency-Key already retried this payment with another request body.")
	}
	return true, nil
}

// RetryPayment replays a FAILED inbound payment as a new run of the same transaction: status
// PENDING, run + 1, optionally another network or number, a CLIENT status log, the outbox row of
// the new run and the retry's Idempotency-Key (k), in one Postgres transaction. A key that
// already started a run returns the transaction as it stands with ErrRetriedWithKey. A
// transaction that is not a FAILED payment answers 409 not_failed.
// Fees, when set, replace the amounts (a retry on another network is priced again).
func (s *Store) RetryPayment(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID, k RetryKey, network *sika.Network, phone string, fees *sika.Fees, start func(sika.Transaction) WorkflowStart) (sika.Transaction, int64, error) {
	var t sika.Transaction
	var outboxID int64
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = paymentTable.byID(ctx, tx, merchantID, env, id, true)
		if err != nil {
			return err
		}
		// Under the transaction's lock: a request that took over this key's claim after the
		// first one died finds the run that one started.
		if done, err := retriedWithKey(ctx, tx, id, k); err != nil || done {
			if done {
				return ErrRetriedWithKey
			}
			return err
		}
		if t.FlowDirection != sika.DirectionInbound {
			return sika.Errorf(sika.CodeNotFailed, "Only inbound payments can be retried; a payout is redone with a new request.")
		}
		if t.Status != sika.StatusFailed {
			return sika.Errorf(sika.CodeNotFailed, "Payment is %s, not FAILED.", t.Status)
		}
		if gw, until, err := unresolvedAttempt(ctx, tx, t); err != nil || gw != "" {
			if err != nil {
				return err
			}
			return sika.Errorf(sika.CodeOutcomeUnresolved, "The previous attempt at %s expired without the operator confirming its cancel; "+
				"Sika re-reads it until %s so that the customer is not charged twice. Retry after that, or verify the payment.",
				gw, until.UTC().Format(time.RFC3339))
		}
		var networkID *uuid.UUID
		var networkCode *string
		if network != nil {
			networkID, networkCode = &network.ID, &network.Code
		}
		if fees == nil {
			fees = &sika.Fees{ClientFee: t.ClientFee.Decimal, GatewayFee: t.GatewayFee.Decimal, PlatformFee: t.PlatformFee.Decimal,
				DebitedAmount: t.DebitedAmount.Decimal, NetAmount: t.NetAmount.Decimal}
		}
		t, err = scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET status = 'PENDING', run = run + 1,
				failure_code = '', failure_message = '', gateway = '', gateway_reference = '', completed_at = NULL,
				network_id = coalesce($2, network_id), network = coalesce($3, network),
				customer_phone = CASE WHEN $4 = '' THEN customer_phone ELSE $4 END,
				client_fee = $5, gateway_fee = $6, platform_fee = $7, debited_amount = $8, net_amount = $9, updated_at = now()
			WHERE t.id = $1 RETURNING `+transactionColumns, id, networkID, networkCode, phone,
			fees.ClientFee, fees.GatewayFee, fees.PlatformFee, fees.DebitedAmount, fees.NetAmount))
		if err != nil {
			// Another payment of the same checkout session is in flight.
			return paymentInProgress(fmt.Errorf("retry transaction: %w", err))
		}
		// The session is locked after the in-flight index has been taken, in the order of
		// CreateCheckoutPayment (insert, then lock): the other order deadlocks with a customer
		// paying the session at that moment (found by make chaos).
		if t.CheckoutSession != nil {
			var status sika.CheckoutStatus
			if err := tx.QueryRow(ctx, `SELECT status FROM checkout_sessions WHERE id = $1 FOR UPDATE`, *t.CheckoutSession).Scan(&status); err != nil {
				return fmt.Errorf("lock checkout session: %w", err)
			}
			if status == sika.CheckoutPaid {
				return sika.Errorf(sika.CodeSessionNotPayable, "Checkout session is already PAID by another payment; retrying this one would charge the customer twice.")
			}
			if err := waitForUnresolved(ctx, tx, "this checkout session", `t.checkout_session_id = $1 AND t.id <> $2`, *t.CheckoutSession, t.ID); err != nil {
				return err
			}
		}
		from := sika.StatusFailed
		if err := insertStatusLog(ctx, tx, t, &from, sika.StatusPending, "retried by the merchant", sika.TriggerClient); err != nil {
			return err
		}
		// transaction.pending again: a backend that follows the payment by its webhooks learns
		// that it is no longer FAILED (a team member may have retried it from the dashboard).
		if err := transactionEvents(ctx, tx, t); err != nil {
			return err
		}
		if k.Key != "" {
			if _, err := tx.Exec(ctx, `INSERT INTO transaction_retries (transaction_id, idempotency_key, idempotency_fingerprint, run)
				VALUES ($1, $2, $3, $4)`, t.ID, k.Key, k.Fingerprint, t.Run); err != nil {
				return fmt.Errorf("record the retry's idempotency key: %w", err)
			}
		}
		outboxID, err = insertOutbox(ctx, tx, start(t))
		return err
	})
	return t, outboxID, err
}
