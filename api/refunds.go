package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/dashboard"
	"github.com/sikahq/sika/workflows"
)

type refundRequest struct {
	Transaction string  `json:"transaction"`
	Amount      *string `json:"amount"`
	Reason      string  `json:"reason"`
}

// createRefund gives a customer back part or all of a successful collection: a REMBOURSEMENT
// transaction whose amount (plus its fee) is held on the wallet at once and then paid back by
// the refund's workflow, through the operator's own refund or a payout to the payer's number.
func (s *Server) createRefund(w http.ResponseWriter, r *http.Request, req refundRequest) error {
	var v sika.Validation
	id, err := uuid.Parse(strings.TrimSpace(req.Transaction))
	switch {
	case strings.TrimSpace(req.Transaction) == "":
		v.Add("transaction", sika.MsgRequired)
	case err != nil:
		v.Add("transaction", sika.MsgInvalidUUID)
	}
	maxLength(&v, "reason", req.Reason, 500)
	if req.Amount != nil && strings.TrimSpace(*req.Amount) == "" {
		v.Add("amount", sika.MsgNotBlank)
	}
	if err := v.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	key, fingerprint := idempotencyFrom(r)
	t, _, err := s.IssueRefund(ctx, merchant, env, RefundOrder{Transaction: id, Amount: req.Amount, Reason: req.Reason,
		IdempotencyKey: key, Fingerprint: fingerprint})
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, t)
	return nil
}

// RefundOrder is a refund to issue (IssueRefund).
type RefundOrder struct {
	// Transaction is the collection to refund.
	Transaction uuid.UUID
	// Amount is what to give back, a decimal string in the collection's currency; nil gives back
	// all that is left (what the customer paid less the refunds succeeded and in flight).
	Amount *string
	Reason string
	// IdempotencyKey makes a second order with the same key answer the first refund (created
	// false); Fingerprint identifies the request behind it (see store.NewTransaction).
	IdempotencyKey string
	Fingerprint    []byte
	// Flag is the REFUND_DUE flag the refund is issued for (a two-person decision,
	// ApproveMoneyDecision): the flag closes when the refund succeeds.
	Flag *uuid.UUID
}

// RefundQuote is what a refund would do: what the customer gets back, its fee, what leaves the
// wallet, and what is left to refund of the collection.
type RefundQuote struct {
	Collection sika.Transaction
	Fees       sika.Fees
	Via        store.RefundVia
	// Left is what remains to refund of the collection before this refund.
	Left decimal.Decimal
}

// QuoteRefund prices and routes a refund of the merchant's collection without writing anything:
// the rule IssueRefund applies, and what the dashboard shows before the merchant confirms.
//
// The refund fee is the merchant's effective OUTBOUND pricing of the collection's network (the
// payout price), always charged on top (ADD_ON): the customer gets back exactly the amount, and
// the wallet is debited the amount plus that fee. The collection's own fees are not returned
// (docs/decisions/0012-refund-fees.md).
func (s *Server) QuoteRefund(ctx context.Context, merchant uuid.UUID, env sika.Environment, o RefundOrder) (RefundQuote, error) {
	var q RefundQuote
	p, err := s.store.TransactionByID(ctx, merchant, env, o.Transaction)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return q, sika.FieldError("transaction", "Unknown transaction.")
	}
	if err != nil {
		return q, err
	}
	q.Collection = p
	if err := store.CheckRefundable(p); err != nil {
		return q, err
	}
	taken, err := s.store.RefundInFlight(ctx, p.ID)
	if err != nil {
		return q, err
	}
	q.Left = p.DebitedAmount.Sub(taken)
	amount := q.Left
	if o.Amount != nil {
		if amount, err = parseAmount(*o.Amount, p.Currency); err != nil {
			return q, sika.FieldError("amount", err.Error())
		}
	}
	if !amount.IsPositive() || amount.GreaterThan(q.Left) {
		return q, store.RefundExceeds(p, q.Left)
	}
	paid, err := s.store.PaidAttempt(ctx, p.ID)
	if err != nil {
		return q, err
	}
	routes, err := s.store.GatewayRoutes(ctx, p.NetworkID, env)
	if err != nil {
		return q, err
	}
	via, ok := activities.RefundVia(s.cfg.Gateways, routes, paid, taken.IsZero() && amount.Equal(p.DebitedAmount.Decimal))
	if !ok {
		return q, sika.Errorf(sika.CodeRefundUnavailable,
			"%s can neither refund this collection nor pay out to the payer's number; refund the customer another way.", p.Network)
	}
	q.Via = via
	pricing, err := s.store.EffectivePricing(ctx, merchant, env, p.NetworkID, sika.DirectionOutbound)
	if err != nil {
		return q, err
	}
	q.Fees, err = sika.ComputeFees(sika.DirectionOutbound, amount, p.Currency, pricing, sika.FeeAddOn)
	return q, err
}

// IssueRefund issues a refund of the merchant's collection (POST /refunds/; support's action on
// a REFUND_DUE flag calls it too): priced and routed by QuoteRefund, recorded with its hold by
// store.CreateRefund (which checks again, under the collection's lock, that the refunds never
// exceed what the customer paid), and started. created is false when IdempotencyKey already
// made this refund.
func (s *Server) IssueRefund(ctx context.Context, merchant uuid.UUID, env sika.Environment, o RefundOrder) (sika.Transaction, bool, error) {
	q, err := s.QuoteRefund(ctx, merchant, env, o)
	if err != nil {
		if o.IdempotencyKey != "" && (sika.ErrorCode(err) == sika.CodeRefundExceedsPayment || sika.ErrorCode(err) == sika.CodeNotRefundable) {
			// The key's refund may be the one that took what is left: answer it, not the refusal.
			if t, ferr := s.store.TransactionByKey(ctx, merchant, env, o.IdempotencyKey, o.Fingerprint); ferr == nil {
				return t, false, nil
			}
		}
		return sika.Transaction{}, false, err
	}
	p, fees := q.Collection, q.Fees
	id, ref, err := s.newMoneyRecord("RFD")
	if err != nil {
		return sika.Transaction{}, false, err
	}
	reason := strings.TrimSpace(o.Reason)
	if reason == "" {
		reason = "Refund of " + p.Reference
	}
	t := sika.Transaction{
		ID: id, Reference: ref, Merchant: merchant, Environment: env, Type: sika.TypeRefund, RefundedTransaction: &p.ID,
		Currency: p.Currency, Country: p.Country, NetworkID: p.NetworkID, Network: p.Network,
		Recipient: p.CustomerPhone, CustomerName: p.CustomerName, CustomerEmail: p.CustomerEmail,
		Description: reason,
	}
	// What leaves the wallet, held now (as for a payout): the amount and its fee; net_amount is
	// what the customer gets back (sika.Transaction's amounts).
	setFees(&t, fees)
	t, outboxID, created, err := s.store.CreateRefund(ctx, store.NewTransaction{
		Transaction: t, IdempotencyKey: o.IdempotencyKey, Fingerprint: o.Fingerprint, RefundVia: q.Via, Flag: o.Flag,
		Reason: "Refund of " + p.Reference + " requested",
	}, workflows.RefundStart(activities.PaymentInput{TransactionID: id, Run: 1}))
	if err != nil {
		return t, false, err
	}
	if !created && t.Type != sika.TypeRefund {
		return sika.Transaction{}, false, sika.Errorf(sika.CodeIdempotencyKeyReused,
			"This Idempotency-Key already created transaction %s with another request; use a new key for a new request.", t.Reference)
	}
	if created {
		s.startTransactionWorkflow(ctx, t, outboxID, "refund", workflows.StartRefund)
	}
	return t, created, nil
}

// quoteRefundForDashboard is QuoteRefund for the dashboard's refund form
// (dashboard.Config.QuoteRefund).
func (s *Server) quoteRefundForDashboard(ctx context.Context, merchant uuid.UUID, env sika.Environment, q dashboard.RefundQuoteRequest) (dashboard.RefundQuote, error) {
	o := RefundOrder{Transaction: q.Transaction}
	if q.Amount != "" {
		o.Amount = &q.Amount
	}
	rq, err := s.QuoteRefund(ctx, merchant, env, o)
	return dashboard.RefundQuote{Fees: rq.Fees, Left: rq.Left, ViaOperator: rq.Via == store.RefundViaOperator}, err
}

func (s *Server) listRefunds(w http.ResponseWriter, r *http.Request) error {
	return s.writeTransactionList(w, r, s.store.ListRefunds)
}

func (s *Server) getRefund(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Refund", s.store.RefundByID)
}
