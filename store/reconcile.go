package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
)

// Money safety: a run ends only on a definite answer, and an answer that comes after the run
// ended is reconciled here, in one Postgres transaction each.

// ReconcileOutcome says what a late success did.
type ReconcileOutcome string

// Reconcile outcomes.
const (
	// ReconcileCredited: the transaction moved to SUCCESS (from FAILED, or from PENDING in a
	// newer run) and the wallet was credited once; transaction.succeeded was recorded.
	ReconcileCredited ReconcileOutcome = "CREDITED"
	// ReconcileRefundDue: the customer paid twice (a second success on one transaction or one
	// checkout session): the wallet was credited and a REFUND_DUE flag awaits support.
	ReconcileRefundDue ReconcileOutcome = "REFUND_DUE"
	// ReconcilePayoutFlagged: a payout the operator reports paid after its hold was released
	// (or paid twice): flagged for support; the wallet is not touched behind a person's back.
	ReconcilePayoutFlagged ReconcileOutcome = "PAYOUT_FLAGGED"
	// ReconcileAlready: this attempt's success was already recorded: nothing changed.
	ReconcileAlready ReconcileOutcome = "ALREADY_RECORDED"
	// ReconcileInFlight: the attempt belongs to the run still deciding it: its workflow must be
	// told instead (the workflow stays the only writer of a run's outcome).
	ReconcileInFlight ReconcileOutcome = "IN_FLIGHT"
)

// FlagKind is why money needs a person (money_flags.kind).
type FlagKind string

// Money flag kinds.
const (
	FlagRefundDue              FlagKind = "REFUND_DUE"
	FlagPayoutPaidAfterRelease FlagKind = "PAYOUT_PAID_AFTER_RELEASE"
	FlagPayoutPaidTwice        FlagKind = "PAYOUT_PAID_TWICE"
	// FlagFailedAfterSuccess: the operator reports FAILED an attempt recorded SUCCESS (support
	// ended an unclear run SUCCESS and the operator later failed it): the wallet moved for
	// money that did not move, and a person must put it right.
	FlagFailedAfterSuccess FlagKind = "FAILED_AFTER_SUCCESS"
)

// AnswerStatus is an operator's answer kept in the inbox (operator_answers.status).
type AnswerStatus string

// AnswerSuccess is the only answer that needs keeping: a success to credit or flag.
const AnswerSuccess AnswerStatus = "SUCCESS"

// LateSuccess is a verified operator success for an attempt whose run may have ended.
type LateSuccess struct {
	AttemptID        uuid.UUID
	GatewayReference string
	// Source says how it was learnt, for the status log: "signed callback", "status read",
	// "support re-check", "re-check sweep", ….
	Source string
	// Gateway, when set, is the operator that reports it (a callback): an attempt sent through
	// another gateway is not its to report, and ErrAnotherGatewaysAttempt changes nothing.
	Gateway string
}

// ErrAnotherGatewaysAttempt is an operator's report about an attempt sent through another
// gateway (LateSuccess.Gateway): nothing is written.
var ErrAnotherGatewaysAttempt = errors.New("the attempt was sent through another gateway")

// ReconcileSuccess records a verified success about an attempt: the attempt becomes SUCCESS
// and the money is accounted for exactly once (the attempt's own status, under the
// transaction's row lock, and a unique ledger index keyed by the attempt make a second call
// change nothing).
//
//   - A collection recorded FAILED (or PENDING in a newer run after a retry) moves to SUCCESS
//     with a SYSTEM status log naming the source, at the price of the attempt that was paid,
//     the wallet is credited (COLLECTION/CREDIT) and transaction.succeeded is recorded; its
//     checkout session becomes PAID if still PENDING, and when another payment already paid
//     the session the success is flagged REFUND_DUE.
//   - A collection already SUCCESS through another attempt: the customer paid twice; the
//     wallet is credited for what was received and the attempt is flagged REFUND_DUE.
//   - A payout: flagged (PAYOUT_PAID_AFTER_RELEASE or PAYOUT_PAID_TWICE) for support; a payout
//     whose hold was released has what is still available held again.
//   - An attempt of the run still deciding its transaction (IN_FLIGHT): the answer is kept in
//     the operators' inbox (operator_answers) in the same Postgres transaction; the run's end
//     processes it (CompletePayment), else the re-check schedule (ProcessOperatorAnswers).
//
// Whatever the outcome, the answer is durable when this returns without error: the caller may
// acknowledge it.
func (s *Store) ReconcileSuccess(ctx context.Context, in LateSuccess) (t sika.Transaction, out ReconcileOutcome, err error) {
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		t, out, err = reconcileSuccess(ctx, tx, in)
		if err != nil || out != ReconcileInFlight {
			return err
		}
		return keepAnswer(ctx, tx, t.ID, in)
	})
	return t, out, err
}

// keepAnswer writes a success the run still deciding its transaction must take into account.
func keepAnswer(ctx context.Context, tx pgx.Tx, txID uuid.UUID, in LateSuccess) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO operator_answers (id, attempt_id, transaction_id, status, gateway_reference, source)
		VALUES ($1, $2, $3, $4, $5, $6)`, id, in.AttemptID, txID, AnswerSuccess, in.GatewayReference, in.Source); err != nil {
		return fmt.Errorf("keep operator answer: %w", err)
	}
	return nil
}

// keptAnswer is an unprocessed row of the operators' inbox.
type keptAnswer struct {
	ID uuid.UUID
	LateSuccess
	Gateway string
	Run     int
}

// keptAnswers locks the unprocessed answers about a transaction's attempts, oldest first.
func keptAnswers(ctx context.Context, tx pgx.Tx, txID uuid.UUID) ([]keptAnswer, error) {
	return collect(ctx, tx, "operator answers", func(r pgx.Row) (keptAnswer, error) {
		var k keptAnswer
		err := r.Scan(&k.ID, &k.AttemptID, &k.GatewayReference, &k.Source, &k.Gateway, &k.Run)
		return k, err
	}, `SELECT o.id, o.attempt_id, o.gateway_reference, o.source, a.gateway, a.run
		FROM operator_answers o JOIN transaction_attempts a ON a.id = o.attempt_id
		WHERE o.transaction_id = $1 AND o.processed_at IS NULL ORDER BY o.received_at, o.id FOR UPDATE OF o`, txID)
}

// answerProcessed records what a kept answer did.
func answerProcessed(ctx context.Context, tx pgx.Tx, id uuid.UUID, out ReconcileOutcome) error {
	if _, err := tx.Exec(ctx, `UPDATE operator_answers SET processed_at = now(), outcome = $2 WHERE id = $1`, id, out); err != nil {
		return fmt.Errorf("record operator answer: %w", err)
	}
	return nil
}

// processKeptAnswers reconciles the kept answers about a transaction whose run is no longer
// deciding them, in the caller's Postgres transaction. paid is the attempt the caller has just
// recorded SUCCESS in that transaction (uuid.Nil when none): its answers are recorded as already
// reconciled without locking and reading again what the caller holds. It answers whether a
// reconciliation changed the transaction (the caller's copy is then stale).
func processKeptAnswers(ctx context.Context, tx pgx.Tx, txID, paid uuid.UUID) (bool, error) {
	kept, err := keptAnswers(ctx, tx, txID)
	if err != nil {
		return false, err
	}
	changed := false
	for _, k := range kept {
		out := ReconcileAlready
		if k.AttemptID != paid {
			if _, out, err = reconcileSuccess(ctx, tx, k.LateSuccess); err != nil {
				return changed, err
			}
		}
		if out == ReconcileInFlight {
			continue
		}
		changed = changed || out != ReconcileAlready
		if err := answerProcessed(ctx, tx, k.ID, out); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// ProcessOperatorAnswers is the re-check schedule's pass over the operators' inbox: the kept
// answers received at least olderThan ago whose run has ended are reconciled (a run that ends
// processes its own at once; this catches any other way out). It answers how many it processed.
func (s *Store) ProcessOperatorAnswers(ctx context.Context, olderThan time.Duration, limit int) (int, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT o.transaction_id FROM operator_answers o
		JOIN transactions t ON t.id = o.transaction_id
		JOIN transaction_attempts a ON a.id = o.attempt_id
		WHERE o.processed_at IS NULL AND o.received_at <= now() - $1 * interval '1 millisecond'
		  AND NOT (t.status = 'PENDING' AND t.run = a.run)
		LIMIT $2`, olderThan.Milliseconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("list operator answers: %w", err)
	}
	txs, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, fmt.Errorf("scan operator answers: %w", err)
	}
	for _, id := range txs {
		if err := s.InTx(ctx, func(tx pgx.Tx) error {
			_, err := processKeptAnswers(ctx, tx, id, uuid.Nil)
			return err
		}); err != nil {
			return 0, err
		}
	}
	return len(txs), nil
}

// markAttemptPaid records the operator's success on an attempt, whatever it was recorded.
func markAttemptPaid(ctx context.Context, tx pgx.Tx, attemptID uuid.UUID, ref string) error {
	if _, err := tx.Exec(ctx, `UPDATE transaction_attempts SET status = 'SUCCESS', gateway_reference = $2,
			failure_code = '', failure_message = '', last_answer = 'SUCCESS', last_answer_at = now(),
			recheck_until = NULL, updated_at = now(), completed_at = now(), answered_at = COALESCE(answered_at, now())
		WHERE id = $1`, attemptID, ref); err != nil {
		return fmt.Errorf("record attempt paid: %w", err)
	}
	return nil
}

// attemptPrice is what an attempt asked the customer to pay (absent for attempts recorded
// before their price was kept).
type attemptPrice struct {
	NetworkID                                                    *uuid.UUID
	Network, CustomerPhone                                       *string
	ClientFee, GatewayFee, PlatformFee, DebitedAmount, NetAmount *decimal.Decimal
}

// pricedAs gives the transaction the price of the attempt that was paid when a later run
// priced it otherwise (a retry on another network): the record and the credit say what the
// customer paid. It answers whether anything changed.
func pricedAs(ctx context.Context, tx pgx.Tx, t sika.Transaction, attemptID uuid.UUID) (sika.Transaction, bool, error) {
	var p attemptPrice
	if err := tx.QueryRow(ctx, `SELECT network_id, network, customer_phone, client_fee, gateway_fee, platform_fee, debited_amount, net_amount
		FROM transaction_attempts WHERE id = $1`, attemptID).Scan(&p.NetworkID, &p.Network, &p.CustomerPhone,
		&p.ClientFee, &p.GatewayFee, &p.PlatformFee, &p.DebitedAmount, &p.NetAmount); err != nil {
		return t, false, fmt.Errorf("read attempt price: %w", err)
	}
	if p.NetAmount == nil || p.NetworkID == nil ||
		(*p.NetworkID == t.NetworkID && p.NetAmount.Equal(t.NetAmount.Decimal) && p.DebitedAmount.Equal(t.DebitedAmount.Decimal) &&
			p.ClientFee.Equal(t.ClientFee.Decimal) && *p.CustomerPhone == t.CustomerPhone) {
		return t, false, nil
	}
	t, err := scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET network_id = $2, network = $3, customer_phone = $4,
			client_fee = $5, gateway_fee = $6, platform_fee = $7, debited_amount = $8, net_amount = $9, updated_at = now()
		WHERE t.id = $1 RETURNING `+transactionColumns, t.ID, p.NetworkID, p.Network, p.CustomerPhone,
		p.ClientFee, p.GatewayFee, p.PlatformFee, p.DebitedAmount, p.NetAmount))
	if err != nil {
		return t, false, fmt.Errorf("price as the paid attempt: %w", err)
	}
	return t, true, nil
}

func reconcileSuccess(ctx context.Context, tx pgx.Tx, in LateSuccess) (sika.Transaction, ReconcileOutcome, error) {
	// The transaction first, as CompletePayment locks it: the two serialise without deadlock.
	t, err := scanTransaction(tx.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t
		WHERE t.id = (SELECT transaction_id FROM transaction_attempts WHERE id = $1) FOR UPDATE`, in.AttemptID))
	if isNoRows(err) {
		return t, "", sika.NotFound("Transaction attempt")
	}
	if err != nil {
		return t, "", fmt.Errorf("reconcile: lock transaction: %w", err)
	}
	attempt, err := scanAttempt(tx.QueryRow(ctx, `SELECT `+attemptColumns+` FROM transaction_attempts a WHERE a.id = $1 FOR UPDATE`, in.AttemptID))
	if err != nil {
		return t, "", fmt.Errorf("reconcile: lock attempt: %w", err)
	}
	if in.Gateway != "" && attempt.Gateway != in.Gateway {
		return t, "", ErrAnotherGatewaysAttempt
	}
	switch {
	case attempt.Status == sika.AttemptSuccess:
		return t, ReconcileAlready, nil
	case t.Status == sika.StatusPending && t.Run == attempt.Run:
		return t, ReconcileInFlight, nil
	}
	ref := in.GatewayReference
	if ref == "" {
		ref = attempt.GatewayReference
	}
	if err := markAttemptPaid(ctx, tx, attempt.ID, ref); err != nil {
		return t, "", err
	}
	if t.FlowDirection != sika.DirectionInbound {
		return reconcilePayout(ctx, tx, t, attempt, in.Source)
	}
	if t.Status == sika.StatusSuccess {
		// Paid twice: the money is with the merchant's operator account, so it is credited (the
		// ledger must match what was received, at the price of the attempt paid) and a person
		// refunds the customer.
		paid := t
		var price attemptPrice
		if err := tx.QueryRow(ctx, `SELECT debited_amount, net_amount FROM transaction_attempts WHERE id = $1`, attempt.ID).
			Scan(&price.DebitedAmount, &price.NetAmount); err != nil {
			return t, "", fmt.Errorf("read attempt price: %w", err)
		}
		if price.NetAmount != nil {
			paid.DebitedAmount, paid.NetAmount = sika.NewAmount(*price.DebitedAmount), sika.NewAmount(*price.NetAmount)
		}
		p, _ := completionPosting(paid)
		p.Attempt, p.Description = &attempt.ID, "Second collection "+t.Reference+" (refund due)"
		if _, err := postLedgerEntry(ctx, tx, p); err != nil {
			return t, "", err
		}
		reason := fmt.Sprintf("Second success: %s reported attempt %s paid (%s) after the payment had already succeeded; credited and flagged for refund.",
			attempt.Gateway, attempt.ID, in.Source)
		from := sika.StatusSuccess
		if err := insertStatusLog(ctx, tx, t, &from, sika.StatusSuccess, reason, sika.TriggerSystem); err != nil {
			return t, "", err
		}
		return t, ReconcileRefundDue, flagMoney(ctx, tx, FlagRefundDue, t, attempt.ID, paid.DebitedAmount.Decimal, reason)
	}
	from := t.Status
	was := string(t.Status)
	if t.FailureCode != "" {
		was += " " + t.FailureCode
	}
	t, repriced, err := pricedAs(ctx, tx, t, attempt.ID)
	if err != nil {
		return t, "", err
	}
	t, err = scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET status = 'SUCCESS', failure_code = '', failure_message = '',
			gateway = $2, gateway_reference = $3, pending_reason = '', otp = NULL, updated_at = now(), completed_at = now()
		WHERE t.id = $1 RETURNING `+transactionColumns, t.ID, attempt.Gateway, ref))
	if err != nil {
		return t, "", fmt.Errorf("reconcile: complete transaction: %w", err)
	}
	reason := fmt.Sprintf("Reconciled: %s reported attempt %s paid (%s) after the payment was recorded %s.", attempt.Gateway, attempt.ID, in.Source, was)
	if repriced {
		reason += fmt.Sprintf(" Credited at the price of that attempt (run %d, %s, %s %s debited).", attempt.Run, t.Network,
			sika.FormatAmount(t.DebitedAmount.Decimal), t.Currency)
	}
	if err := insertStatusLog(ctx, tx, t, &from, sika.StatusSuccess, reason, sika.TriggerSystem); err != nil {
		return t, "", err
	}
	if p, ok := completionPosting(t); ok {
		p.Attempt = &attempt.ID
		if _, err := postLedgerEntry(ctx, tx, p); err != nil {
			return t, "", err
		}
	}
	if err := transactionEvents(ctx, tx, t); err != nil {
		return t, "", err
	}
	paid, err := payCheckoutSession(ctx, tx, t)
	if err != nil || paid {
		return t, ReconcileCredited, err
	}
	reason = fmt.Sprintf("Checkout session %s was already paid by another payment: this one (%s) is credited and due for refund.", *t.CheckoutSession, in.Source)
	return t, ReconcileRefundDue, flagMoney(ctx, tx, FlagRefundDue, t, attempt.ID, t.DebitedAmount.Decimal, reason)
}

// reconcilePayout flags a payout the operator reports paid through an attempt the run did not
// settle on. Paid twice (SUCCESS through another attempt): flagged PAYOUT_PAID_TWICE. Paid after
// its hold was released (FAILED): what the wallet still has of the amount is held again at once,
// so that the merchant cannot spend it twice before support acts, and the flag and the status
// log say how much. The wallet is never debited behind a person's back.
func reconcilePayout(ctx context.Context, tx pgx.Tx, t sika.Transaction, attempt sika.TransactionAttempt, source string) (sika.Transaction, ReconcileOutcome, error) {
	sent := t.DebitedAmount.Sub(t.ClientFee.Decimal)
	if t.Status == sika.StatusSuccess {
		reason := fmt.Sprintf("%s reported attempt %s paid (%s) while the payout had already been paid through another attempt.", attempt.Gateway, attempt.ID, source)
		return t, ReconcilePayoutFlagged, flagMoney(ctx, tx, FlagPayoutPaidTwice, t, attempt.ID, sent, reason)
	}
	held := t.DebitedAmount.Decimal
	if t.RefundedTransaction != nil {
		// A refund paid after its release counts against its collection from this flag on
		// (refundsTaken): the collection is locked first, as reserveRefund locks it before the
		// wallet, so that a refund of it reserved at this moment waits and then sees the flag.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM transactions WHERE id = $1 FOR NO KEY UPDATE`, *t.RefundedTransaction); err != nil {
			return t, "", fmt.Errorf("lock the refunded collection: %w", err)
		}
	}
	var available decimal.Decimal
	if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT available_amount FROM wallets WHERE merchant_id = $1 AND environment = $2 AND country = $3 FOR UPDATE), 0)`,
		t.Merchant, t.Environment, t.Country).Scan(&available); err != nil {
		return t, "", fmt.Errorf("read wallet: %w", err)
	}
	rehold := decimal.Min(held, decimal.Max(available, decimal.Zero))
	reason := fmt.Sprintf("%s reported attempt %s paid (%s) after the payout was recorded %s and its hold released.", attempt.Gateway, attempt.ID, source, t.Status)
	if rehold.IsPositive() {
		if _, err := postLedgerEntry(ctx, tx, ledgerPosting{Merchant: t.Merchant, Environment: t.Environment, Country: t.Country, Currency: t.Currency,
			Type: sika.LedgerPayoutHold, Direction: sika.Debit, Amount: rehold, AvailableDelta: rehold.Neg(), PendingDelta: rehold,
			Transaction: &t.ID, Attempt: &attempt.ID, Again: true, Description: "Payout " + t.Reference + " paid after its release: held again"}); err != nil {
			return t, "", err
		}
	}
	reason += fmt.Sprintf(" %s of %s %s held again pending support", sika.FormatAmount(rehold), sika.FormatAmount(held), t.Currency)
	if short := held.Sub(rehold); short.IsPositive() {
		reason += fmt.Sprintf("; %s %s had already been spent", sika.FormatAmount(short), t.Currency)
	}
	reason += "."
	if err := insertStatusLog(ctx, tx, t, &t.Status, t.Status, reason, sika.TriggerSystem); err != nil {
		return t, "", err
	}
	return t, ReconcilePayoutFlagged, flagMoney(ctx, tx, FlagPayoutPaidAfterRelease, t, attempt.ID, sent, reason)
}

// ReconcileFailure records a FAILED the operator gave, after the run ended, about an attempt
// recorded SUCCESS (support ended an unclear run SUCCESS): nothing is rewritten behind a
// person's back; the attempt is flagged FAILED_AFTER_SUCCESS and its re-reads end. It answers
// whether a flag was raised.
func (s *Store) ReconcileFailure(ctx context.Context, attemptID uuid.UUID, source string) (bool, error) {
	flagged := false
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		attempt, err := scanAttempt(tx.QueryRow(ctx, `SELECT `+attemptColumns+` FROM transaction_attempts a WHERE a.id = $1 FOR UPDATE`, attemptID))
		if err != nil {
			return fmt.Errorf("reconcile failure: lock attempt: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE transaction_attempts SET recheck_until = NULL, rechecked_at = now(), last_answer = 'FAILED', last_answer_at = now()
			WHERE id = $1`, attemptID); err != nil {
			return fmt.Errorf("reconcile failure: %w", err)
		}
		if attempt.Status != sika.AttemptSuccess {
			return nil
		}
		t, err := scanTransaction(tx.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t WHERE t.id = $1`, attempt.Transaction))
		if err != nil {
			return fmt.Errorf("reconcile failure: read transaction: %w", err)
		}
		amount := t.NetAmount.Decimal
		if t.FlowDirection == sika.DirectionOutbound {
			amount = t.DebitedAmount.Decimal
		}
		reason := fmt.Sprintf("%s reported attempt %s FAILED (%s) after it was recorded SUCCESS: the wallet moved for money the operator did not move.",
			attempt.Gateway, attempt.ID, source)
		flagged = true
		return flagMoney(ctx, tx, FlagFailedAfterSuccess, t, attempt.ID, amount, reason)
	})
	return flagged, err
}

// payCheckoutSession marks the checkout session of a successful payment PAID (markCheckoutSessionPaid)
// and reports false only when another payment had already paid it: the customer paid the
// session twice.
func payCheckoutSession(ctx context.Context, tx pgx.Tx, t sika.Transaction) (bool, error) {
	if err := markCheckoutSessionPaid(ctx, tx, t); err != nil || t.CheckoutSession == nil || t.Type != sika.TypePayment {
		return true, err
	}
	var status sika.CheckoutStatus
	var paidBy *uuid.UUID
	if err := tx.QueryRow(ctx, `SELECT status, transaction_id FROM checkout_sessions WHERE id = $1`, *t.CheckoutSession).Scan(&status, &paidBy); err != nil {
		return false, fmt.Errorf("read checkout session: %w", err)
	}
	return status != sika.CheckoutPaid || paidBy == nil || *paidBy == t.ID, nil
}

// flagMoney records a money flag for support (once per kind and attempt).
func flagMoney(ctx context.Context, tx pgx.Tx, kind FlagKind, t sika.Transaction, attempt uuid.UUID, amount decimal.Decimal, reason string) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO money_flags (id, kind, transaction_id, attempt_id, merchant_id, environment, amount, currency, reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (kind, attempt_id) DO NOTHING`,
		id, kind, t.ID, attempt, t.Merchant, t.Environment, amount, t.Currency, reason); err != nil {
		return fmt.Errorf("flag %s: %w", kind, err)
	}
	return nil
}

// MoneyFlag is money that needs a person (see the kinds above).
type MoneyFlag struct {
	ID             uuid.UUID        `json:"id"`
	Kind           FlagKind         `json:"kind"`
	Transaction    uuid.UUID        `json:"transaction"`
	Attempt        *uuid.UUID       `json:"attempt"`
	Merchant       uuid.UUID        `json:"merchant"`
	Environment    sika.Environment `json:"environment"`
	Amount         sika.Amount      `json:"amount"`
	Currency       string           `json:"currency"`
	Reason         string           `json:"reason"`
	CreatedAt      time.Time        `json:"created_at"`
	ResolvedAt     *time.Time       `json:"resolved_at"`
	ResolvedBy     *uuid.UUID       `json:"resolved_by"`
	ResolutionNote string           `json:"resolution_note"`
	// Refund is the latest refund issued for a REFUND_DUE flag (a two-person decision), with its
	// status: the flag closes when it succeeds; FAILED leaves the flag open for another.
	Refund       *uuid.UUID              `json:"refund"`
	RefundStatus *sika.TransactionStatus `json:"refund_status"`
	// RefundReheld: that refund FAILED but its operator reported it paid afterwards, and its
	// PAYOUT_PAID_AFTER_RELEASE flag, which holds the money again, is still open.
	RefundReheld bool `json:"refund_reheld"`
}

const flagColumns = `f.id, f.kind, f.transaction_id, f.attempt_id, f.merchant_id, f.environment, f.amount, f.currency, f.reason,
	f.created_at, f.resolved_at, f.resolved_by, f.resolution_note, f.refund_id, r.status, coalesce(` + reheldRefund + `, false)`

const flagFrom = ` FROM money_flags f LEFT JOIN transactions r ON r.id = f.refund_id`

func scanFlag(row pgx.Row) (MoneyFlag, error) {
	var f MoneyFlag
	var amount decimal.Decimal
	err := row.Scan(&f.ID, &f.Kind, &f.Transaction, &f.Attempt, &f.Merchant, &f.Environment, &amount, &f.Currency, &f.Reason,
		&f.CreatedAt, &f.ResolvedAt, &f.ResolvedBy, &f.ResolutionNote, &f.Refund, &f.RefundStatus, &f.RefundReheld)
	f.Amount = sika.NewAmount(amount)
	return f, err
}

// MoneyFlags lists the flags across merchants, oldest first; open only unless all.
func (s *Store) MoneyFlags(ctx context.Context, all bool, limit int) ([]MoneyFlag, error) {
	return collect(ctx, s.pool, "money flags", scanFlag, `SELECT `+flagColumns+flagFrom+`
		WHERE $1 OR f.resolved_at IS NULL ORDER BY f.created_at, f.id LIMIT $2`, all, limit)
}

// NoteAttemptAnswer records what the operator last said about an undecided attempt; for a
// payout, pendingReason (when not empty) tells the merchant that it awaits the operator.
func (s *Store) NoteAttemptAnswer(ctx context.Context, attemptID uuid.UUID, answer, pendingReason string) error {
	_, err := s.pool.Exec(ctx, `WITH a AS (
			UPDATE transaction_attempts SET last_answer = $2, last_answer_at = now() WHERE id = $1 RETURNING transaction_id, run)
		UPDATE transactions t SET pending_reason = $3 FROM a
		WHERE $3 <> '' AND t.id = a.transaction_id AND t.run = a.run AND t.status = 'PENDING' AND t.pending_reason <> $3`,
		attemptID, answer, pendingReason)
	if err != nil {
		return fmt.Errorf("note attempt answer: %w", err)
	}
	return nil
}

// DueRechecks returns the attempts whose run ended on our side without the operator's final
// word (recheck_until still ahead) and that were not read in the last interval, oldest first.
func (s *Store) DueRechecks(ctx context.Context, interval time.Duration, limit int) ([]sika.TransactionAttempt, error) {
	return s.attempts(ctx, `WHERE a.recheck_until > now() AND (a.rechecked_at IS NULL OR a.rechecked_at <= now() - $1 * interval '1 millisecond')
		ORDER BY a.rechecked_at NULLS FIRST, a.id LIMIT $2`, interval.Milliseconds(), limit)
}

// NoteRecheck records one re-read of an ended attempt; final ends its re-reads (the operator
// gave its final word).
func (s *Store) NoteRecheck(ctx context.Context, attemptID uuid.UUID, answer string, final bool) error {
	_, err := s.pool.Exec(ctx, `UPDATE transaction_attempts SET rechecked_at = now(), last_answer = $2, last_answer_at = now(),
			recheck_until = CASE WHEN $3 THEN NULL ELSE recheck_until END
		WHERE id = $1`, attemptID, answer, final)
	if err != nil {
		return fmt.Errorf("note recheck: %w", err)
	}
	return nil
}

// unresolvedAttempt returns the gateway and re-read deadline of the attempt of a transaction's
// current run that ended without the operator's final word and is still re-read ("" when none):
// a retry must wait for it, or the customer could be charged twice.
func unresolvedAttempt(ctx context.Context, tx pgx.Tx, t sika.Transaction) (string, time.Time, error) {
	var gw string
	var until time.Time
	err := tx.QueryRow(ctx, `SELECT gateway, recheck_until FROM transaction_attempts
		WHERE transaction_id = $1 AND run = $2 AND recheck_until > now() AND failure_code <> $3 ORDER BY sequence DESC LIMIT 1`,
		t.ID, t.Run, gateway.FailureGatewayUnavailable).Scan(&gw, &until)
	if isNoRows(err) {
		return "", until, nil
	}
	if err != nil {
		return "", until, fmt.Errorf("read unresolved attempt: %w", err)
	}
	return gw, until, nil
}

// StaffAction is one audited action of a staff member on money.
type StaffAction struct {
	Staff       uuid.UUID
	Action      string
	Transaction *uuid.UUID
	Reason      string
	Detail      any
}

// recordStaffAction appends a staff action in the caller's Postgres transaction.
func recordStaffAction(ctx context.Context, tx pgx.Tx, a StaffAction) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	detail, err := json.Marshal(a.Detail)
	if err != nil {
		return fmt.Errorf("encode staff action: %w", err)
	}
	if a.Detail == nil {
		detail = []byte("{}")
	}
	if _, err := tx.Exec(ctx, `INSERT INTO staff_actions (id, staff_id, action, transaction_id, reason, detail) VALUES ($1, $2, $3, $4, $5, $6)`,
		id, a.Staff, a.Action, a.Transaction, a.Reason, detail); err != nil {
		return fmt.Errorf("record staff action: %w", err)
	}
	return nil
}

// StaffActionRecord is a recorded staff action.
type StaffActionRecord struct {
	ID          uuid.UUID       `json:"id"`
	Staff       uuid.UUID       `json:"staff"`
	StaffEmail  string          `json:"staff_email"`
	Action      string          `json:"action"`
	Transaction *uuid.UUID      `json:"transaction"`
	Reason      string          `json:"reason"`
	Detail      json.RawMessage `json:"detail"`
	CreatedAt   time.Time       `json:"created_at"`
}

// StaffActions lists the staff actions on a transaction (uuid.Nil: every transaction), newest first.
func (s *Store) StaffActions(ctx context.Context, transaction uuid.UUID, limit int) ([]StaffActionRecord, error) {
	return s.staffActions(ctx, "staff actions",
		`$1 = '00000000-0000-0000-0000-000000000000'::uuid OR a.transaction_id = $1`, transaction, limit)
}

// staffActions lists the staff actions that match where, newest first; $2 is the limit.
func (s *Store) staffActions(ctx context.Context, what, where string, args ...any) ([]StaffActionRecord, error) {
	return collect(ctx, s.pool, what, func(r pgx.Row) (StaffActionRecord, error) {
		var a StaffActionRecord
		err := r.Scan(&a.ID, &a.Staff, &a.StaffEmail, &a.Action, &a.Transaction, &a.Reason, &a.Detail, &a.CreatedAt)
		return a, err
	}, `SELECT a.id, a.staff_id, m.email, a.action, a.transaction_id, a.reason, a.detail, a.created_at
		FROM staff_actions a JOIN members m ON m.id = a.staff_id
		WHERE `+where+` ORDER BY a.created_at DESC, a.id DESC LIMIT $2`, args...)
}

// UnclearPayouts lists, across merchants, the payouts PENDING for longer than olderThan that
// await the operator (pending_reason set), oldest first, with their attempts: support's queue.
func (s *Store) UnclearPayouts(ctx context.Context, olderThan time.Duration, limit int) ([]sika.TransactionDetail, error) {
	txs, err := collect(ctx, s.pool, "unclear payouts", scanTransaction, `SELECT `+transactionColumns+` FROM transactions t
		WHERE t.status = 'PENDING' AND t.flow_direction = 'OUTBOUND' AND t.pending_reason <> ''
		  AND t.created_at < now() - $1 * interval '1 millisecond'
		ORDER BY t.created_at, t.id LIMIT $2`, olderThan.Milliseconds(), limit)
	if err != nil {
		return nil, err
	}
	out := make([]sika.TransactionDetail, len(txs))
	for i, t := range txs {
		out[i].Transaction = t
		if out[i].Attempts, err = s.attempts(ctx, `WHERE a.transaction_id = $1 ORDER BY a.run, a.sequence`, t.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}
