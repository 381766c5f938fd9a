package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/dashboard"
	"github.com/sikahq/sika/workflows"
)

type payoutRequest struct {
	Amount        string          `json:"amount"`
	Currency      string          `json:"currency"`
	Country       string          `json:"country"`
	Method        string          `json:"method"`
	Recipient     string          `json:"recipient"`
	RecipientName string          `json:"recipient_name"`
	Description   string          `json:"description"`
	FeeChargeMode *string         `json:"fee_charge_mode"`
	Metadata      json.RawMessage `json:"metadata"`
}

// initializePayout sends money from the merchant's wallet of the country to a mobile-money
// number. The record and the hold on the wallet are written in one Postgres transaction; a
// wallet that cannot cover it is refused before anything is written.
func (s *Server) initializePayout(w http.ResponseWriter, r *http.Request) error {
	var req payoutRequest
	if err := s.decodeMoneyRequest(w, r, &req); err != nil {
		return err
	}
	ctx := r.Context()
	merchant, env := tenant(ctx)
	p, err := s.pricePayout(ctx, merchant, env, req)
	if err != nil {
		return err
	}
	id, ref, err := s.newMoneyRecord("OUT")
	if err != nil {
		return err
	}
	t := sika.Transaction{
		ID: id, Reference: ref, Merchant: merchant, Environment: env, Type: sika.TypePayout,
		Currency: p.country.DefaultCurrency, Country: p.country.ISOCode, NetworkID: p.network.ID, Network: p.network.Code,
		Recipient: p.recipient, CustomerName: strings.TrimSpace(req.RecipientName), Description: strings.TrimSpace(req.Description),
		Metadata: p.metadata,
	}
	// debited_amount leaves the wallet (held now); net_amount is what the beneficiary receives,
	// the amount the operator is sent (sika.Fees).
	setFees(&t, p.fees)
	nt := transactionOrder(r, t, "Payout requested")
	if nt.Approval = s.payoutApproval(ctx, p); nt.Approval != nil {
		nt.Reason = fmt.Sprintf("Payout requested over the approval threshold of %s %s: waits for a second member's approval until %s",
			sika.FormatAmount(nt.Approval.Threshold), p.country.DefaultCurrency, nt.Approval.ExpiresAt.Format(time.RFC3339))
	}
	t, outboxID, created, err := s.store.CreatePayout(ctx, nt, workflows.PayoutStart(activities.PaymentInput{TransactionID: id, Run: 1}))
	if err != nil {
		return err
	}
	if created {
		s.startPayout(ctx, t, outboxID)
	}
	writeData(w, http.StatusCreated, t)
	return nil
}

// payoutPlan is a validated, priced payout request.
type payoutPlan struct {
	country   sika.Country
	network   sika.Network
	recipient string
	metadata  json.RawMessage
	fees      sika.Fees
	settings  sika.MerchantSettings
}

// payoutApproval is the approval a payout must wait for, or nil: the merchant's settings have a
// threshold and what leaves the wallet (fees included, the rule of batches) is over it. The
// caller asking (a member, who may then not approve it, or an API key) is recorded.
func (s *Server) payoutApproval(ctx context.Context, p payoutPlan) *store.NewPayoutApproval {
	threshold := p.settings.PayoutApprovalThreshold
	if threshold == nil || !p.fees.DebitedAmount.GreaterThan(threshold.Decimal) {
		return nil
	}
	a := &store.NewPayoutApproval{Threshold: threshold.Decimal,
		ExpiresAt: s.cfg.Now().UTC().Add(time.Duration(p.settings.ApprovalWindowHours) * time.Hour)}
	if by := principalFrom(ctx); by != nil && by.Member != nil {
		a.CreatedByMember = &by.Member.ID
	} else if by != nil {
		a.CreatedByAPIKey = &by.APIKeyID
	}
	return a
}

// pricePayout is the one rule of what a payout costs: it validates the request (amount,
// currency, country, network, recipient), checks that the network pays out in the country and
// is open, prices it with the merchant's effective pricing and fee mode (sika.ComputeFees) and
// checks the network's limits. POST /payouts/initialize/ sends what it returns; the dashboard
// shows it before the merchant confirms (QuotePayout), so the fee shown is the fee charged.
func (s *Server) pricePayout(ctx context.Context, merchant uuid.UUID, env sika.Environment, req payoutRequest) (payoutPlan, error) {
	var p payoutPlan
	var v sika.Validation
	target, err := s.readMoneyTarget(ctx, &v, req.Amount, req.Currency, req.Country, req.Method, "method")
	if err != nil {
		return p, err
	}
	amount, country, network := target.amount, target.country, target.network
	req.Currency = target.currency
	recipient := readPhone(&v, country, "recipient", req.Recipient, true)
	maxLength(&v, "recipient_name", req.RecipientName, 200)
	metadata, mode := readMoneyExtras(&v, req.Description, req.Metadata, req.FeeChargeMode)
	if err := v.Err(); err != nil {
		return p, err
	}
	if req.Currency != country.DefaultCurrency {
		return p, sika.Errorf(sika.CodeCurrencyCountry, "Payouts in %s are made in %s, not %s; no conversion is made.", country.ISOCode, country.DefaultCurrency, req.Currency)
	}
	if network.Country != country.ID {
		return p, sika.Errorf(sika.CodeNetworkCountry, "Network %s does not operate in %s.", network.Code, country.ISOCode)
	}
	if _, err := s.checkNetworkOpen(ctx, network, env, sika.DirectionOutbound); err != nil {
		return p, err
	}
	settings, err := s.store.MerchantSettings(ctx, merchant, env)
	if err != nil {
		return p, err
	}
	pricing, err := s.store.EffectivePricing(ctx, merchant, env, network.ID, sika.DirectionOutbound)
	if err != nil {
		return p, err
	}
	fees, err := sika.ComputeFees(sika.DirectionOutbound, amount, country.DefaultCurrency, pricing, settings.EffectiveFeeChargeMode(mode))
	if err != nil {
		return p, err
	}
	if amount.LessThan(network.MinAmount) || fees.NetAmount.GreaterThan(network.MaxAmount) {
		return p, sika.Errorf(sika.CodeAmountOutOfRange, "%s pays out from %s to %s %s.", network.Code,
			sika.FormatAmount(network.MinAmount), sika.FormatAmount(network.MaxAmount), country.DefaultCurrency)
	}
	return payoutPlan{country: country, network: network, recipient: recipient, metadata: metadata, fees: fees, settings: settings}, nil
}

// quotePayout prices a payout the dashboard is about to send (dashboard.Config.QuotePayout),
// by pricePayout, the rule POST /payouts/initialize/ applies.
func (s *Server) quotePayout(ctx context.Context, merchant uuid.UUID, env sika.Environment, q dashboard.PayoutQuoteRequest) (sika.Fees, error) {
	mode := q.FeeChargeMode
	p, err := s.pricePayout(ctx, merchant, env, payoutRequest{Amount: q.Amount, Currency: q.Currency, Country: q.Country,
		Method: q.Method, Recipient: q.Recipient, RecipientName: q.RecipientName, Description: q.Description, FeeChargeMode: &mode})
	return p.fees, err
}

// startPayout starts the workflow of a committed payout (see startPayment).
func (s *Server) startPayout(ctx context.Context, t sika.Transaction, outboxID int64) {
	s.startTransactionWorkflow(ctx, t, outboxID, "payout", workflows.StartPayout)
}

// startTransactionWorkflow starts the workflow of a committed transaction (a payment, a payout, a refund)
// with start and clears its outbox row, batched with other starts' (store.DeleteOutboxSoon);
// when Temporal cannot be reached the row stays and the sweeper starts it.
func (s *Server) startTransactionWorkflow(ctx context.Context, t sika.Transaction, outboxID int64, what string,
	start func(context.Context, client.Client, activities.PaymentInput) error) {
	ctx = context.WithoutCancel(ctx)
	if err := start(ctx, s.cfg.Temporal, activities.PaymentInput{TransactionID: t.ID, Run: t.Run}); err != nil {
		logFrom(ctx).Warn(what+" workflow not started; the outbox sweeper will", "transaction", t.ID, "err", err)
		return
	}
	s.store.DeleteOutboxSoon(outboxID)
}

// verifyPayout re-checks a PENDING payout at its gateway and hands a final answer to the
// payout's workflow; a payout already final is answered as recorded.
func (s *Server) verifyPayout(w http.ResponseWriter, r *http.Request) error {
	t, err := s.transactionOf(r, "Payout", func(t sika.Transaction) bool { return t.Type == sika.TypePayout })
	if err != nil {
		return err
	}
	if t.Status == sika.StatusPending {
		if _, err := s.recheckAtGateway(r.Context(), t); err != nil {
			return err
		}
	}
	return s.writeTransaction(w, r, t.ID, http.StatusOK)
}
