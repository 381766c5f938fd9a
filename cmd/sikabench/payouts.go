package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// partLoad is a load of one kind of request and what became of its transactions.
type partLoad struct {
	plan loadPlan
	load *loadResult
	comp *completions
}

// payoutFunding is what the bench merchant's wallet of Benin receives before the payouts: enough
// for a million payouts of XOF 1000, so that no run runs dry.
const payoutFunding = "1000000000"

// payoutKey readies the bench merchant for the payouts of part ("payouts", "batches"): a
// PAYOUT key, 127.0.0.1 whitelisted and the wallet of Benin funded with payoutFunding.
func payoutKey(ctx context.Context, t *target, part string) (sika.APIKey, error) {
	key, err := t.store.CreateAPIKey(ctx, t.merchant, sika.EnvironmentTest, sika.ScopePayout, "sikabench "+part, nil)
	if err != nil {
		return key, fmt.Errorf("%s: create a PAYOUT key: %w", part, err)
	}
	// The second part to ask finds the address listed by the first: that is what it wants.
	_, err = t.store.AddIPWhitelistEntry(ctx, t.merchant, sika.EnvironmentTest, netip.MustParsePrefix("127.0.0.1/32"), "sikabench "+part)
	if err != nil && !errors.Is(err, store.ErrIPAlreadyListed) {
		return key, fmt.Errorf("%s: whitelist 127.0.0.1: %w", part, err)
	}
	if err := fundWallet(ctx, t.store, t.merchant, payoutFunding); err != nil {
		return key, fmt.Errorf("%s: fund the wallet: %w", part, err)
	}
	return key, nil
}

// runPayouts drives POST /payouts/initialize/ (XOF 1000 on MTN_BJ to a number ending in 123,
// which the sandbox pays after one tick) with -c clients for -payout-d, after funding the
// wallet, giving the merchant a PAYOUT key and whitelisting 127.0.0.1 for it; then it waits
// for the payouts to finish.
func runPayouts(ctx context.Context, t *target, o options, offset time.Duration) (*partLoad, error) {
	key, err := payoutKey(ctx, t, "payouts")
	if err != nil {
		return nil, err
	}
	client := newAPIClient(t, o.clients, "/payouts/initialize/", key.Secret, func(n int64) string {
		return fmt.Sprintf(`{"amount":"1000","currency":"XOF","country":"BJ","method":"MTN_BJ","recipient":"97%03d123","recipient_name":"Bench Beneficiary","description":"sikabench payout %d"}`, n%1000, n)
	})
	if _, err := preflight(ctx, t, client, "payout"); err != nil {
		return nil, err
	}
	p := &partLoad{plan: loadPlan{clients: o.clients, warmup: min(o.warmup, partWarmup), duration: o.payoutDuration}}
	progress("payouts: %d clients, %s warm-up + %s measured", p.plan.clients, p.plan.warmup, p.plan.duration)
	if p.load, err = runLoad(ctx, client, p.plan, loadHooks{}); err != nil {
		return nil, fmt.Errorf("payouts: %w", err)
	}
	progress("payouts: load done (%d requests); waiting for the payouts to finish", len(p.load.samples))
	if p.comp, err = collectCompletions(ctx, t.db, p.load.acceptedIDs(), offset, p.load, 2*o.tick+60*time.Second); err != nil {
		return nil, fmt.Errorf("payouts: %w", err)
	}
	return p, nil
}

// partWarmup is the warm-up of the parts after collections (the stack is warm by then).
const partWarmup = 2 * time.Second

// fundWallet credits the merchant's TEST wallet of Benin the way money really arrives: a
// collection recorded, then completed (status log, ledger entry, wallet), without a workflow.
func fundWallet(ctx context.Context, st *store.Store, merchant uuid.UUID, amount string) error {
	n, err := st.NetworkByCode(ctx, "MTN_BJ")
	if err != nil {
		return err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	ref, err := sika.NewReference("PAY", time.Now())
	if err != nil {
		return err
	}
	a, err := sika.ParseAmount(amount, "XOF")
	if err != nil {
		return err
	}
	money := sika.NewAmount(a)
	tx, _, _, err := st.CreateTransaction(ctx, store.NewTransaction{Reason: "sikabench funding", Transaction: sika.Transaction{
		ID: id, Reference: ref, Merchant: merchant, Environment: sika.EnvironmentTest, Type: sika.TypePayment,
		RequestedAmount: money, DebitedAmount: money, NetAmount: money, Currency: "XOF", Country: "BJ",
		NetworkID: n.ID, Network: n.Code, CustomerName: "sikabench funding", FeeChargeMode: sika.FeeDeducted,
	}}, store.WorkflowStart{}) // no workflow: it is completed here
	if err != nil {
		return err
	}
	_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 1, Status: sika.StatusSuccess,
		Reason: "sikabench funding", TriggeredBy: sika.TriggerSystem})
	if err == nil && !changed {
		err = fmt.Errorf("funding payment %s was not completed", tx.ID)
	}
	return err
}
