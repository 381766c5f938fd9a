package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// RefundVia is how a refund reaches the customer, fixed when the refund is accepted.
type RefundVia string

// Ways of refunding.
const (
	// RefundViaOperator is the operator's own refund of the collection, at the gateway that
	// collected it (MTN MoMo's disbursement refund, Wave's checkout session refund).
	RefundViaOperator RefundVia = "OPERATOR_REFUND"
	// RefundViaPayout is a payout to the payer's number on the collection's network.
	RefundViaPayout RefundVia = "PAYOUT"
)

// CreateRefund records a PENDING refund of a collection and holds its debited amount on the
// merchant's wallet (as CreatePayout), with its status log, its events and the outbox row of
// its workflow, in one Postgres transaction. The collection's row is locked while its refunds
// are summed: refunds succeeded and in flight, this one included, never exceed what the
// customer paid (422 refund_exceeds_payment), however many are asked at once; a collection that
// is not a successful PAIEMENT of the merchant answers 409 not_refundable. Nothing is written
// when it is refused. An idempotency key already used answers as CreateTransaction does. With
// nt.Flag, the refund is that REFUND_DUE flag's (linkFlagRefund, same Postgres transaction).
func (s *Store) CreateRefund(ctx context.Context, nt NewTransaction, start WorkflowStart) (sika.Transaction, int64, bool, error) {
	if nt.RefundedTransaction == nil {
		return sika.Transaction{}, 0, false, fmt.Errorf("create refund: no refunded transaction")
	}
	return s.createTransaction(ctx, nt, start, func(tx pgx.Tx, t sika.Transaction) error {
		if err := reserveRefund(ctx, tx, t); err != nil {
			return err
		}
		if err := hold(ctx, tx, t, nil); err != nil {
			return err
		}
		if nt.Flag == nil {
			return nil
		}
		return linkFlagRefund(ctx, tx, *nt.Flag, t)
	})
}

// reserveRefund locks the refunded collection (FOR NO KEY UPDATE: the refund's own row already
// holds a key-share lock on it through its foreign key, which FOR UPDATE would wait for between
// two refunds asked at once) and checks that refund r fits in what is left to refund.
func reserveRefund(ctx context.Context, tx pgx.Tx, r sika.Transaction) error {
	p, err := scanTransaction(tx.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t
		WHERE t.id = $1 AND t.merchant_id = $2 AND t.environment = $3 FOR NO KEY UPDATE`, *r.RefundedTransaction, r.Merchant, r.Environment))
	if isNoRows(err) {
		return sika.FieldError("transaction", "Unknown transaction.")
	}
	if err != nil {
		return fmt.Errorf("lock refunded transaction: %w", err)
	}
	if err := CheckRefundable(p); err != nil {
		return err
	}
	taken, err := refundsTaken(ctx, tx, p.ID, r.ID)
	if err != nil {
		return err
	}
	if left := p.DebitedAmount.Sub(taken); r.RequestedAmount.GreaterThan(left) {
		return RefundExceeds(p, left)
	}
	return nil
}

// CheckRefundable answers not_refundable unless p is a successful collection.
func CheckRefundable(p sika.Transaction) error {
	if p.Type != sika.TypePayment {
		return sika.Errorf(sika.CodeNotRefundable, "Transaction %s is a %s; only a successful collection (PAIEMENT) can be refunded.", p.Reference, p.Type)
	}
	if p.Status != sika.StatusSuccess {
		return sika.Errorf(sika.CodeNotRefundable, "Transaction %s is %s; only a successful collection can be refunded.", p.Reference, p.Status)
	}
	return nil
}

// RefundExceeds is the refusal of a refund larger than what is left of collection p to refund.
func RefundExceeds(p sika.Transaction, left decimal.Decimal) error {
	return sika.Errorf(sika.CodeRefundExceedsPayment,
		"The customer paid %s %s for %s; %s %s is left to refund once the refunds succeeded and in flight are counted.",
		sika.FormatAmount(p.DebitedAmount.Decimal), p.Currency, p.Reference, sika.FormatAmount(decimal.Max(left, decimal.Zero)), p.Currency)
}

// reheldRefund is the condition, on a refund's transactions row r, that it FAILED but its
// operator reported it paid afterwards, its PAYOUT_PAID_AFTER_RELEASE flag (which holds the money
// again while two people decide) still open.
const reheldRefund = `(r.status = 'FAILED' AND EXISTS (SELECT 1 FROM money_flags h
	WHERE h.transaction_id = r.id AND h.kind = 'PAYOUT_PAID_AFTER_RELEASE' AND h.resolved_at IS NULL))`

// refundsTaken sums the refunds of a collection, but except, that took or may have taken its
// money: succeeded, in flight, or re-held (reheldRefund; reconcilePayout locks the collection
// before it flags, as reserveRefund does). Without the last, a second refund could be issued
// while the operator says the first was paid.
func refundsTaken(ctx context.Context, q rowQueryer, paymentID, except uuid.UUID) (decimal.Decimal, error) {
	var taken decimal.Decimal
	if err := q.QueryRow(ctx, `SELECT coalesce(sum(r.requested_amount), 0) FROM transactions r
		WHERE r.refunded_transaction_id = $1 AND r.id <> $2 AND (r.status IN ('PENDING', 'SUCCESS') OR `+reheldRefund+`)`,
		paymentID, except).Scan(&taken); err != nil {
		return taken, fmt.Errorf("sum refunds: %w", err)
	}
	return taken, nil
}

// RefundInFlight sums the refunds of a collection that are succeeded, in flight, or reported
// paid after their release (refundsTaken).
func (s *Store) RefundInFlight(ctx context.Context, paymentID uuid.UUID) (decimal.Decimal, error) {
	return refundsTaken(ctx, s.pool, paymentID, uuid.Nil)
}

// settleRefund adds a refund that succeeded to its collection's amount_refunded (and closes the
// REFUND_DUE flag it was issued for), in the
// completion's Postgres transaction and before its wallet movement (the collection, then the
// wallet: the order CreateRefund locks them in).
func settleRefund(ctx context.Context, tx pgx.Tx, r sika.Transaction) error {
	if r.Type != sika.TypeRefund || r.Status != sika.StatusSuccess || r.RefundedTransaction == nil {
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE transactions SET amount_refunded = amount_refunded + $2, updated_at = now() WHERE id = $1`,
		*r.RefundedTransaction, r.RequestedAmount.Decimal); err != nil {
		return fmt.Errorf("record amount refunded: %w", err)
	}
	return closeRefundedFlag(ctx, tx, r)
}

// RefundRoute is what a refund's workflow needs to reach the customer: how, and the collection
// it gives back with the attempt the operator paid.
type RefundRoute struct {
	Via        RefundVia
	Collection sika.Transaction
	// Paid is the collection's attempt the operator reported paid (its reference and gateway
	// are what an operator refund names).
	Paid sika.TransactionAttempt
}

// RefundRouteOf returns the route of a refund (not_found for a transaction that is no refund).
func (s *Store) RefundRouteOf(ctx context.Context, refundID uuid.UUID) (RefundRoute, error) {
	var rt RefundRoute
	var collection *uuid.UUID
	var via *string
	err := s.pool.QueryRow(ctx, `SELECT refunded_transaction_id, refund_via FROM transactions WHERE id = $1`, refundID).Scan(&collection, &via)
	if isNoRows(err) || err == nil && (collection == nil || via == nil) {
		return rt, sika.NotFound("Refund")
	}
	if err != nil {
		return rt, fmt.Errorf("read refund route: %w", err)
	}
	rt.Via = RefundVia(*via)
	if rt.Collection, err = s.Transaction(ctx, *collection); err != nil {
		return rt, err
	}
	rt.Paid, err = s.PaidAttempt(ctx, *collection)
	return rt, err
}

// PaidAttempt returns the attempt of a collection that the operator reported paid (the first,
// should a customer have paid twice), or not_found.
func (s *Store) PaidAttempt(ctx context.Context, txID uuid.UUID) (sika.TransactionAttempt, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+attemptColumns+` FROM transaction_attempts a
		WHERE a.transaction_id = $1 AND a.status = 'SUCCESS' ORDER BY a.completed_at, a.id LIMIT 1`, txID), scanAttempt, "Paid attempt", "select paid attempt")
}

// RefundByID returns a refund of the merchant and environment with its attempts and status
// logs, or not_found (also for a transaction that is no refund).
func (s *Store) RefundByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.TransactionDetail, error) {
	d, err := s.TransactionDetail(ctx, merchantID, env, id)
	if sika.ErrorCode(err) == sika.CodeNotFound || err == nil && d.Type != sika.TypeRefund {
		return sika.TransactionDetail{}, sika.NotFound("Refund")
	}
	return d, err
}

// ListRefunds returns a cursor page of the merchant's refunds, newest first, with the filters
// of the transaction list (its transaction_type is REMBOURSEMENT whatever f says).
func (s *Store) ListRefunds(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f TransactionFilter, req KeysetRequest) ([]sika.Transaction, bool, error) {
	f.Type = sika.TypeRefund
	return s.ListTransactions(ctx, merchantID, env, f, req)
}

// holdLabel names an outbound transaction that holds funds in its ledger descriptions.
func holdLabel(t sika.Transaction) string {
	if t.Type == sika.TypeRefund {
		return "Refund"
	}
	return "Payout"
}

// TransactionByKey returns the transaction an idempotency key of the merchant created, as a
// second creation with the key would (see NewTransaction.Fingerprint).
func (s *Store) TransactionByKey(ctx context.Context, merchantID uuid.UUID, env sika.Environment, key string, fingerprint []byte) (sika.Transaction, error) {
	return s.transactionOfKey(ctx, NewTransaction{Transaction: sika.Transaction{Merchant: merchantID, Environment: env},
		IdempotencyKey: key, Fingerprint: fingerprint})
}
