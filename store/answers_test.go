package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// Issue 21: an operator's answer is never acknowledged and forgotten, an attempt that may
// still be paid is re-read whatever happened to its payment, and a new payment waits for an
// earlier one that may still succeed.

// closedThenPending records attempt 1 at sandbox-a closed FAILED gateway_unavailable (the
// operator answered 503) and attempt 2 at sandbox-b waiting: the run went on at the next
// gateway.
func closedThenPending(t *testing.T, tx sika.Transaction) (first, second sika.TransactionAttempt) {
	t.Helper()
	first = newAttempt(t, tx, 1, 1)
	require.NoError(t, st.UpdateAttempt(t.Context(), store.AttemptUpdate{ID: first.ID, Status: sika.AttemptFailed,
		FailureCode: gateway.FailureGatewayUnavailable, FailureMessage: "The gateway did not accept the request."}))
	second, err := st.EnsureAttempt(t.Context(), tx, sika.TransactionAttempt{ID: uuid.New(), Run: 1, Sequence: 2, Gateway: "sandbox-b", Priority: 2})
	require.NoError(t, err)
	return first, second
}

func keptAnswers(t *testing.T, tx sika.Transaction) (pending, processed int) {
	t.Helper()
	return countRows(t, `SELECT count(*) FROM operator_answers WHERE transaction_id = $1 AND processed_at IS NULL`, tx.ID),
		countRows(t, `SELECT count(*) FROM operator_answers WHERE transaction_id = $1 AND processed_at IS NOT NULL`, tx.ID)
}

func flagsOf(t *testing.T, tx sika.Transaction) []store.MoneyFlag {
	t.Helper()
	flags, err := st.MoneyFlags(t.Context(), true, 100000)
	require.NoError(t, err)
	var mine []store.MoneyFlag
	for _, f := range flags {
		if f.Transaction == tx.ID {
			mine = append(mine, f)
		}
	}
	return mine
}

func ledgerBalances(t *testing.T) {
	t.Helper()
	disc, err := st.CheckLedger(t.Context())
	require.NoError(t, err)
	assert.Nil(t, disc)
}

// TestASuccessOfAClosedAttemptIsKeptForTheRunsEnd: gateway A answered 503 (attempt 1 closed),
// the run went on at gateway B, then A reports attempt 1 paid. The answer is kept, not
// dropped, and the run's end settles it whichever way attempt 2 goes.
func TestASuccessOfAClosedAttemptIsKeptForTheRunsEnd(t *testing.T) {
	ctx := t.Context()
	endOn := func(tx sika.Transaction, a sika.TransactionAttempt, status sika.TransactionStatus) {
		t.Helper()
		c := store.Completion{TransactionID: tx.ID, Run: 1, Gateway: a.Gateway, Status: status, Reason: "Confirmed by sandbox-b",
			TriggeredBy: sika.TriggerSystem, Attempt: store.AttemptUpdate{ID: a.ID, Status: sika.AttemptSuccess}}
		if status == sika.StatusFailed {
			c.Reason, c.RecheckFor = "Refused by sandbox-b: expired", time.Hour
			c.Attempt = store.AttemptUpdate{ID: a.ID, Status: sika.AttemptFailed, FailureCode: gateway.FailureExpired, FailureMessage: "not approved"}
		}
		_, changed, err := st.CompletePayment(ctx, c)
		require.NoError(t, err)
		require.True(t, changed)
	}
	keep := func(tx sika.Transaction, a sika.TransactionAttempt) {
		t.Helper()
		_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, GatewayReference: "op-a", Source: "signed callback"})
		require.NoError(t, err)
		assert.Equal(t, store.ReconcileInFlight, out, "the run is still deciding")
		pending, _ := keptAnswers(t, tx)
		assert.Equal(t, 1, pending, "kept before the operator is answered")
		// The sweep leaves an answer of a run in flight to it.
		_, err = st.ProcessOperatorAnswers(ctx, 0, 1000)
		require.NoError(t, err)
		pending, _ = keptAnswers(t, tx)
		assert.Equal(t, 1, pending)
	}

	t.Run("collection: attempt 2 paid too: refund due", func(t *testing.T) {
		m := newMerchant(t)
		tx := newPayment(t, m, "500")
		first, second := closedThenPending(t, tx)
		keep(tx, first)
		endOn(tx, second, sika.StatusSuccess)
		assert.Equal(t, "1000.00", available(t, m), "both successes are in the wallet")
		flags := flagsOf(t, tx)
		require.Len(t, flags, 1)
		assert.Equal(t, store.FlagRefundDue, flags[0].Kind)
		assert.Equal(t, first.ID, *flags[0].Attempt)
		pending, processed := keptAnswers(t, tx)
		assert.Equal(t, [2]int{0, 1}, [2]int{pending, processed})
		ledgerBalances(t)
	})
	t.Run("collection: attempt 2 expired: the payment succeeds on attempt 1", func(t *testing.T) {
		m := newMerchant(t)
		tx := newPayment(t, m, "500")
		first, second := closedThenPending(t, tx)
		keep(tx, first)
		endOn(tx, second, sika.StatusFailed)
		assert.Equal(t, "500.00", available(t, m), "credited once")
		d, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, tx.ID)
		require.NoError(t, err)
		assert.Equal(t, sika.StatusSuccess, d.Status)
		assert.Equal(t, "op-a", d.GatewayReference)
		assert.Contains(t, d.StatusLogs[len(d.StatusLogs)-1].Reason, "Confirmed by sandbox-a for attempt "+first.ID.String())
		assert.Equal(t, 0, countRows(t, `SELECT count(*) FROM events WHERE transaction_id = $1 AND type = 'transaction.failed'`, tx.ID),
			"the merchant is never told FAILED")
		assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM events WHERE transaction_id = $1 AND type = 'transaction.succeeded'`, tx.ID))
		due, err := st.DueRechecks(ctx, 0, 100000)
		require.NoError(t, err)
		assert.Contains(t, attemptIDs(due), second.ID, "attempt 2 expired with its cancel unclear: still re-read")
		_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: second.ID, Source: "re-check sweep"})
		require.NoError(t, err)
		assert.Equal(t, store.ReconcileRefundDue, out, "and if the customer approves it too, a refund is due")
		pending, processed := keptAnswers(t, tx)
		assert.Equal(t, [2]int{0, 1}, [2]int{pending, processed})
		ledgerBalances(t)
	})
	t.Run("payout: attempt 2 paid too: paid twice", func(t *testing.T) {
		m := fundedMerchant(t, "5000")
		tx := newPayout(t, m, "1000")
		first, second := closedThenPending(t, tx)
		keep(tx, first)
		endOn(tx, second, sika.StatusSuccess)
		flags := flagsOf(t, tx)
		require.Len(t, flags, 1, "the schema accepts the flag (it refused PAYOUT_PAID_TWICE)")
		assert.Equal(t, store.FlagPayoutPaidTwice, flags[0].Kind)
		assert.Equal(t, "4000.00", available(t, m), "debited once; support decides the rest")
		ledgerBalances(t)
	})
	t.Run("payout: attempt 2 failed: the payout succeeds on attempt 1, its hold settled", func(t *testing.T) {
		m := fundedMerchant(t, "5000")
		tx := newPayout(t, m, "1000")
		first, second := closedThenPending(t, tx)
		keep(tx, first)
		endOn(tx, second, sika.StatusFailed)
		got, err := st.Transaction(ctx, tx.ID)
		require.NoError(t, err)
		assert.Equal(t, sika.StatusSuccess, got.Status, "never released: the operator paid it")
		assert.Equal(t, "4000.00", available(t, m))
		assert.Empty(t, flagsOf(t, tx))
		assert.Equal(t, 0, countRows(t, `SELECT count(*) FROM ledger_entries WHERE transaction_id = $1 AND type = 'PAYOUT_REVERSAL'`, tx.ID))
		ledgerBalances(t)
	})
}

// newPayout creates a PENDING payout of amount from the merchant's CI wallet, its amount held.
func newPayout(t *testing.T, m sika.Merchant, amount string) sika.Transaction {
	t.Helper()
	p := outbound(t, m, sika.TypePayout, amount)
	created, _, ok, err := st.CreatePayout(t.Context(), store.NewTransaction{Transaction: p}, payoutStart(p))
	require.NoError(t, err)
	require.True(t, ok)
	return created
}

// TestAnExpiredAttemptOfADecidedPaymentIsStillReRead (issue item 4): run 1 failed, the retry's
// run 2 pushed the customer again, a late success of run 1 decided the payment; run 2 then
// expires with its cancel unclear. Its attempt is re-read all the same, and a success of it is
// credited and flagged.
func TestAnExpiredAttemptOfADecidedPaymentIsStillReRead(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "250")
	a1 := newAttempt(t, tx, 1, 1)
	_, _, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusFailed,
		Reason: "refused", TriggeredBy: sika.TriggerSystem, Attempt: store.AttemptUpdate{ID: a1.ID, Status: sika.AttemptFailed, FailureCode: "declined"}})
	require.NoError(t, err)
	_, _, err = st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, nil, "", nil, func(sika.Transaction) store.WorkflowStart {
		return store.WorkflowStart{ID: "payment:" + tx.ID.String(), Type: "Payment", Input: 2}
	})
	require.NoError(t, err)
	r2, err := st.Transaction(ctx, tx.ID)
	require.NoError(t, err)
	a2 := newAttempt(t, r2, 2, 1)
	_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a1.ID, Source: "signed callback"})
	require.NoError(t, err)
	require.Equal(t, store.ReconcileCredited, out)

	// Run 2's workflow now reaches the push lifetime; its cancel is unclear.
	got, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 2, Gateway: a2.Gateway, Status: sika.StatusFailed,
		Reason: "Refused by sandbox-a: expired", TriggeredBy: sika.TriggerSystem, RecheckFor: time.Hour,
		Attempt: store.AttemptUpdate{ID: a2.ID, Status: sika.AttemptFailed, FailureCode: gateway.FailureExpired, FailureMessage: "not approved in time"}})
	require.NoError(t, err)
	assert.False(t, changed, "the payment stays SUCCESS")
	assert.Equal(t, sika.StatusSuccess, got.Status)
	due, err := st.DueRechecks(ctx, 0, 100000)
	require.NoError(t, err)
	assert.Contains(t, attemptIDs(due), a2.ID, "the second push may still be approved: re-read")
	ended, err := st.Attempt(ctx, a2.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.AttemptFailed, ended.Status)

	_, out, err = st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a2.ID, Source: "re-check sweep"})
	require.NoError(t, err)
	assert.Equal(t, store.ReconcileRefundDue, out, "the customer approved both pushes: credited and flagged")
	assert.Equal(t, "500.00", available(t, m))
	ledgerBalances(t)
}

// TestANewPaymentWaitsForAnEarlierOneThatMayStillBePaid (issue item 5): a checkout session or
// a payment link customer whose earlier payment expired with its cancel unclear is refused 409
// outcome_unresolved, naming the time it can pay again; once the operator has given its final
// word, the new payment goes through.
func TestANewPaymentWaitsForAnEarlierOneThatMayStillBePaid(t *testing.T) {
	ctx := t.Context()
	t.Run("checkout session", func(t *testing.T) {
		m := newMerchant(t)
		c := newCheckoutSession(t, st, m)
		nt, start := checkoutPayment(t, st, c)
		first, _, err := st.CreateCheckoutPayment(ctx, nt, start, time.Now())
		require.NoError(t, err)
		a := newAttempt(t, first, 1, 1)
		expire(t, first, a, 1)

		nt, start = checkoutPayment(t, st, c)
		_, _, err = st.CreateCheckoutPayment(ctx, nt, start, time.Now())
		require.Equal(t, sika.CodeOutcomeUnresolved, sika.ErrorCode(err), "%v", err)
		assert.Contains(t, err.Error(), "re-reads it until "+time.Now().Add(time.Hour).UTC().Format("2006-01-02T15"))
		assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM transactions WHERE checkout_session_id = $1`, c.ID), "nothing created")

		require.NoError(t, st.NoteRecheck(ctx, a.ID, "FAILED", true))
		nt, start = checkoutPayment(t, st, c)
		_, _, err = st.CreateCheckoutPayment(ctx, nt, start, time.Now())
		require.NoError(t, err, "the operator said FAILED: the session can be paid again")
	})
	t.Run("payment link, same customer; another customer is not held up", func(t *testing.T) {
		m := newMerchant(t)
		n, err := st.NetworkByCode(ctx, "MTN_CI")
		require.NoError(t, err)
		id := uuid.New()
		amount := sika.NewAmount(decimal.NewFromInt(700))
		l, err := st.CreatePaymentLink(ctx, sika.PaymentLink{ID: id, Merchant: m.ID, Environment: sika.EnvironmentTest, Name: "Tee",
			Slug: "pl_" + id.String(), URL: "https://pay.example.com/l/" + id.String(), AmountType: sika.AmountFixed, Amount: &amount,
			Currency: "XOF", Country: "CI", IsActive: true})
		require.NoError(t, err)
		pay := func(phone string) (sika.Transaction, error) {
			p := outbound(t, m, sika.TypePayment, "700")
			p.Recipient, p.CustomerPhone, p.PaymentLink, p.NetworkID, p.Network = "", phone, &l.ID, n.ID, n.Code
			got, _, err := st.CreateLinkPayment(ctx, store.NewTransaction{Transaction: p},
				store.WorkflowStart{ID: "payment:" + p.ID.String(), Type: "Payment", Input: 1})
			return got, err
		}
		first, err := pay("+2250707000111")
		require.NoError(t, err)
		a := newAttempt(t, first, 1, 1)
		expire(t, first, a, 1)
		_, err = pay("+2250707000111")
		assert.Equal(t, sika.CodeOutcomeUnresolved, sika.ErrorCode(err), "%v", err)
		_, err = pay("+2250707000222")
		assert.NoError(t, err, "another customer of the link pays")
	})
}

// The "also look at" cases of issue 21, each settled both ways.

// TestALateSuccessAfterARepricedRetryIsCreditedAtThePricePaid: run 1 asked 1000 on MTN_CI,
// the retry moved the payment to ORANGE_CI at 1200 (debited) / 1150 (net). A late success of
// run 1's attempt is credited at run 1's price, and the record says what was paid; the retry's
// own success, when it comes too, is credited at its price and flagged.
func TestALateSuccessAfterARepricedRetryIsCreditedAtThePricePaid(t *testing.T) {
	ctx := t.Context()
	retried := func(t *testing.T) (sika.Merchant, sika.Transaction, sika.TransactionAttempt, sika.TransactionAttempt) {
		m := newMerchant(t)
		tx := newPayment(t, m, "1000")
		a1 := newAttempt(t, tx, 1, 1)
		_, _, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusFailed,
			Reason: "cancelled", TriggeredBy: sika.TriggerSystem, Attempt: store.AttemptUpdate{ID: a1.ID, Status: sika.AttemptFailed, FailureCode: "cancelled"}})
		require.NoError(t, err)
		orange, err := st.NetworkByCode(ctx, "ORANGE_CI")
		require.NoError(t, err)
		r2, _, err := st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, &orange, "", &sika.Fees{RequestedAmount: decimal.NewFromInt(1000),
			ClientFee: decimal.NewFromInt(200), GatewayFee: decimal.NewFromInt(150), PlatformFee: decimal.NewFromInt(50),
			DebitedAmount: decimal.NewFromInt(1200), NetAmount: decimal.NewFromInt(1150)}, func(sika.Transaction) store.WorkflowStart {
			return store.WorkflowStart{ID: "payment:" + tx.ID.String(), Type: "Payment", Input: 2}
		})
		require.NoError(t, err)
		a2 := newAttempt(t, r2, 2, 1)
		return m, tx, a1, a2
	}

	t.Run("run 1 paid late: its price", func(t *testing.T) {
		m, tx, a1, _ := retried(t)
		got, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a1.ID, Source: "signed callback"})
		require.NoError(t, err)
		require.Equal(t, store.ReconcileCredited, out)
		assert.Equal(t, "1000.00", available(t, m), "credited what run 1 asked, not the retry's 1150")
		assert.Equal(t, "MTN_CI", got.Network)
		assert.Equal(t, "1000.00", sika.FormatAmount(got.DebitedAmount.Decimal))
		d, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, tx.ID)
		require.NoError(t, err)
		assert.Contains(t, d.StatusLogs[len(d.StatusLogs)-1].Reason, "Credited at the price of that attempt (run 1, MTN_CI, 1000.00 XOF debited)")
		ledgerBalances(t)
	})
	t.Run("both runs paid: each at its own price, the second flagged", func(t *testing.T) {
		m, tx, a1, a2 := retried(t)
		_, _, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a1.ID, Source: "signed callback"})
		require.NoError(t, err)
		_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 2, Gateway: "sandbox-a", Status: sika.StatusSuccess,
			Reason: "Confirmed", TriggeredBy: sika.TriggerSystem, Attempt: store.AttemptUpdate{ID: a2.ID, Status: sika.AttemptSuccess}})
		require.NoError(t, err)
		assert.False(t, changed)
		assert.Equal(t, "2150.00", available(t, m), "1000 from run 1, 1150 from run 2")
		flags := flagsOf(t, tx)
		require.Len(t, flags, 1)
		assert.Equal(t, store.FlagRefundDue, flags[0].Kind)
		assert.Equal(t, "1200.00", sika.FormatAmount(flags[0].Amount.Decimal), "the customer paid 1200 the second time")
		ledgerBalances(t)
	})
}

// TestSupportsSuccessOfAnUnclearPayoutIsStillReRead: support ended an unclear payout SUCCESS;
// the operator's final word is still read. A FAILED is flagged (the wallet was debited for a
// payment that did not happen); a SUCCESS ends the re-reads without a flag.
func TestSupportsSuccessOfAnUnclearPayoutIsStillReRead(t *testing.T) {
	ctx := t.Context()
	ended := func(t *testing.T) (sika.Transaction, sika.TransactionAttempt) {
		m := fundedMerchant(t, "5000")
		staff := newMerchant(t) // any member id will do for the audit row
		var member uuid.UUID
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT member_id FROM memberships WHERE merchant_id = $1`, staff.ID).Scan(&member))
		tx := newPayout(t, m, "1000")
		a := newAttempt(t, tx, 1, 1)
		_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusSuccess,
			Reason: "Ended SUCCESS by support", TriggeredBy: sika.TriggerAdmin, RecheckFor: time.Hour,
			Attempt: store.AttemptUpdate{ID: a.ID, Status: sika.AttemptSuccess},
			Staff:   &store.StaffAction{Staff: member, Action: "end_unclear_run", Transaction: &tx.ID, Reason: "bank statement shows it"}})
		require.NoError(t, err)
		require.True(t, changed)
		due, err := st.DueRechecks(ctx, 0, 100000)
		require.NoError(t, err)
		require.Contains(t, attemptIDs(due), a.ID, "support's word is not the operator's: still re-read")
		return tx, a
	}
	t.Run("the operator fails it later: flagged", func(t *testing.T) {
		tx, a := ended(t)
		flagged, err := st.ReconcileFailure(ctx, a.ID, "re-check sweep")
		require.NoError(t, err)
		assert.True(t, flagged)
		flags := flagsOf(t, tx)
		require.Len(t, flags, 1)
		assert.Equal(t, store.FlagFailedAfterSuccess, flags[0].Kind)
		due, err := st.DueRechecks(ctx, 0, 100000)
		require.NoError(t, err)
		assert.NotContains(t, attemptIDs(due), a.ID, "the operator's final word ends the re-reads")
	})
	t.Run("the operator confirms it: nothing to flag", func(t *testing.T) {
		tx, a := ended(t)
		_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "re-check sweep"})
		require.NoError(t, err)
		assert.Equal(t, store.ReconcileAlready, out)
		require.NoError(t, st.NoteRecheck(ctx, a.ID, "SUCCESS", true))
		assert.Empty(t, flagsOf(t, tx))
		due, err := st.DueRechecks(ctx, 0, 100000)
		require.NoError(t, err)
		assert.NotContains(t, attemptIDs(due), a.ID)
	})
}

// releasedPayout makes a payout of 1000 XOF of a merchant funded with fund and ends it FAILED as
// support would (its hold released, its attempt re-read for an hour).
func releasedPayout(t *testing.T, fund string) (sika.Merchant, sika.Transaction, sika.TransactionAttempt) {
	t.Helper()
	m := fundedMerchant(t, fund)
	tx := newPayout(t, m, "1000")
	a := newAttempt(t, tx, 1, 1)
	_, changed, err := st.CompletePayment(t.Context(), store.Completion{TransactionID: tx.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusFailed,
		Reason: "Ended FAILED by support", TriggeredBy: sika.TriggerSystem, RecheckFor: time.Hour,
		Attempt: store.AttemptUpdate{ID: a.ID, Status: sika.AttemptFailed, FailureCode: "ended_by_support"}})
	require.NoError(t, err)
	require.True(t, changed)
	return m, tx, a
}

func pendingOf(t *testing.T, m sika.Merchant) string {
	t.Helper()
	wallets, _, err := st.ListWallets(t.Context(), m.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	return sika.FormatAmount(wallets[0].PendingAmount.Decimal)
}

// TestAPayoutPaidAfterItsReleaseIsHeldAgain: support ended an unclear payout FAILED (its hold
// released), then the operator pays it. What the wallet still has of the amount is held again
// at once, and the flag and the status log say how much; when the merchant has already spent
// part of it, the rest is held and the shortfall said.
func TestAPayoutPaidAfterItsReleaseIsHeldAgain(t *testing.T) {
	ctx := t.Context()
	t.Run("still there: held again in full", func(t *testing.T) {
		m, tx, a := releasedPayout(t, "5000")
		assert.Equal(t, "5000.00", available(t, m))
		_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "re-check sweep"})
		require.NoError(t, err)
		assert.Equal(t, store.ReconcilePayoutFlagged, out)
		assert.Equal(t, "4000.00", available(t, m), "the merchant cannot spend it twice")
		assert.Equal(t, "1000.00", pendingOf(t, m))
		flags := flagsOf(t, tx)
		require.Len(t, flags, 1)
		assert.Equal(t, store.FlagPayoutPaidAfterRelease, flags[0].Kind)
		assert.Contains(t, flags[0].Reason, "1000.00 of 1000.00 XOF held again pending support")
		_, out, err = st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "signed callback"})
		require.NoError(t, err)
		assert.Equal(t, store.ReconcileAlready, out)
		assert.Equal(t, "4000.00", available(t, m), "held once")
		ledgerBalances(t)
	})
	t.Run("partly spent: the rest held, the shortfall said", func(t *testing.T) {
		m, tx, a := releasedPayout(t, "1300")
		newPayout(t, m, "1000") // the merchant spent the released money on another payout
		assert.Equal(t, "300.00", available(t, m))
		_, _, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "re-check sweep"})
		require.NoError(t, err)
		assert.Equal(t, "0.00", available(t, m))
		flags := flagsOf(t, tx)
		require.Len(t, flags, 1)
		assert.Contains(t, flags[0].Reason, "300.00 of 1000.00 XOF held again pending support; 700.00 XOF had already been spent")
		d, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, tx.ID)
		require.NoError(t, err)
		last := d.StatusLogs[len(d.StatusLogs)-1]
		assert.Equal(t, sika.StatusFailed, last.ToStatus)
		assert.Contains(t, last.Reason, "held again", "the merchant's history says so")
		ledgerBalances(t)
	})
}

// TestALateSuccessAfterTheSessionClosed: a checkout payment expired with its cancel unclear,
// then the session was cancelled by the merchant (or expired); the customer's late success is
// credited and the merchant gets transaction.succeeded, never checkout_session.paid: the session
// keeps its status.
func TestALateSuccessAfterTheSessionClosed(t *testing.T) {
	ctx := t.Context()
	for _, closeAs := range []sika.CheckoutStatus{sika.CheckoutCancelled, sika.CheckoutExpired} {
		t.Run(string(closeAs), func(t *testing.T) {
			m := newMerchant(t)
			c := newCheckoutSession(t, st, m)
			nt, start := checkoutPayment(t, st, c)
			p, _, err := st.CreateCheckoutPayment(ctx, nt, start, time.Now())
			require.NoError(t, err)
			a := newAttempt(t, p, 1, 1)
			expire(t, p, a, 1)
			if closeAs == sika.CheckoutCancelled {
				_, err = st.CancelCheckoutSession(ctx, m.ID, sika.EnvironmentTest, c.ID)
			} else {
				_, _, err = st.ExpireCheckoutSession(ctx, c.ID)
			}
			require.NoError(t, err)
			_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "signed callback"})
			require.NoError(t, err)
			assert.Equal(t, store.ReconcileCredited, out)
			assert.Equal(t, "1000.00", available(t, m), "the customer paid: the merchant has the money")
			got, err := st.CheckoutSession(ctx, c.ID)
			require.NoError(t, err)
			assert.Equal(t, closeAs, got.Status)
			events := func(typ string) int {
				return countRows(t, `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = $2`, m.ID, typ)
			}
			assert.Equal(t, 1, events("transaction.failed"), "the expiry was told")
			assert.Equal(t, 1, events("transaction.succeeded"), "then the late success")
			assert.Equal(t, 0, events("checkout_session.paid"), "the session stays "+string(closeAs))
		})
	}
}
