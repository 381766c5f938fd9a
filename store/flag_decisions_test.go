package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

func newStaff(t *testing.T, role sika.StaffRole) sika.Member {
	t.Helper()
	m, _, err := st.RegisterMember(t.Context(), "staff-"+uuid.NewString()[:8]+"@sika.example", "x", "Staff", role, nil)
	require.NoError(t, err)
	return m
}

// reheld makes a payout of 1000 XOF of a merchant funded with fund, ends it FAILED (its hold
// released), and has the operator report it paid afterwards: what the wallet still has of it is
// held again and the payout flagged PAYOUT_PAID_AFTER_RELEASE. spend is paid out meanwhile.
func reheld(t *testing.T, fund, spend string) (sika.Merchant, sika.Transaction, store.MoneyFlag) {
	t.Helper()
	ctx := t.Context()
	m, tx, a := releasedPayout(t, fund)
	if spend != "" {
		newPayout(t, m, spend)
	}
	_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "re-check sweep"})
	require.NoError(t, err)
	require.Equal(t, store.ReconcilePayoutFlagged, out)
	flags := flagsOf(t, tx)
	require.Len(t, flags, 1)
	require.Equal(t, store.FlagPayoutPaidAfterRelease, flags[0].Kind)
	return m, tx, flags[0]
}

// TestSettleReheldPayout (issue 21): support ends a payout held again after a late success, two
// people deciding. Settled, what was held again leaves the wallet and the payout becomes
// SUCCESS (status log by ADMIN, its events); released, it returns to the wallet and the payout
// stays FAILED. Either way the flag closes with the approver's name, in the approval's own
// Postgres transaction; the proposer cannot approve; a second approval changes nothing.
func TestSettleReheldPayout(t *testing.T) {
	ctx := t.Context()
	agent, approver := newStaff(t, sika.StaffSupportAgent), newStaff(t, sika.StaffMoneyApprover)
	propose := func(t *testing.T, f store.MoneyFlag, status sika.TransactionStatus) store.MoneyDecision {
		t.Helper()
		d, err := st.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionSettleReheldPayout, Transaction: f.Transaction,
			RequestedStatus: status, Reason: "The operator's statement shows the transfer.", Staff: agent.ID, Flag: &f.ID})
		require.NoError(t, err)
		return d
	}

	t.Run("settled: the hold leaves the wallet, the payout is SUCCESS", func(t *testing.T) {
		m, tx, f := reheld(t, "5000", "")
		assert.Equal(t, "4000.00", available(t, m))
		assert.Equal(t, "1000.00", pendingOf(t, m))
		d := propose(t, f, sika.StatusSuccess)
		_, _, err := st.SettleReheldPayout(ctx, d.ID, agent.ID, agent.Email)
		assert.Equal(t, sika.CodeSelfApprovalForbidden, sika.ErrorCode(err))
		decided, out, err := st.SettleReheldPayout(ctx, d.ID, approver.ID, approver.Email)
		require.NoError(t, err)
		assert.Equal(t, store.DecisionApproved, decided.Status)
		assert.Equal(t, "1000.00", sika.FormatAmount(out.Settled.Decimal))
		assert.True(t, out.Shortfall.IsZero())
		assert.Equal(t, "4000.00", available(t, m))
		assert.Equal(t, "0.00", pendingOf(t, m), "settled")
		got, err := st.Transaction(ctx, tx.ID)
		require.NoError(t, err)
		assert.Equal(t, sika.StatusSuccess, got.Status)
		assert.Empty(t, got.FailureCode)
		detail, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, tx.ID)
		require.NoError(t, err)
		last := detail.StatusLogs[len(detail.StatusLogs)-1]
		assert.Equal(t, sika.StatusFailed, *last.FromStatus)
		assert.Equal(t, sika.StatusSuccess, last.ToStatus)
		assert.Equal(t, sika.TriggerAdmin, last.TriggeredBy)
		assert.Contains(t, last.Reason, "Settled by support ("+approver.Email)
		assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM events WHERE transaction_id = $1 AND type = 'transaction.succeeded'`, tx.ID))
		flag, err := st.MoneyFlag(ctx, f.ID)
		require.NoError(t, err)
		require.NotNil(t, flag.ResolvedAt)
		assert.Equal(t, approver.ID, *flag.ResolvedBy)
		_, _, err = st.SettleReheldPayout(ctx, d.ID, approver.ID, approver.Email)
		assert.Equal(t, sika.CodeNotAwaitingApproval, sika.ErrorCode(err), "approved once")
		assert.Equal(t, "0.00", pendingOf(t, m))
		ledgerBalances(t)
	})

	t.Run("released after part was spent: what was held returns, the payout stays FAILED", func(t *testing.T) {
		m, tx, f := reheld(t, "1300", "1000")
		assert.Equal(t, "0.00", available(t, m))
		assert.Equal(t, "1300.00", pendingOf(t, m), "the other payout's 1000 and the 300 held again")
		d := propose(t, f, sika.StatusFailed)
		_, out, err := st.SettleReheldPayout(ctx, d.ID, approver.ID, approver.Email)
		require.NoError(t, err)
		assert.Equal(t, "300.00", sika.FormatAmount(out.Released.Decimal))
		assert.Equal(t, "700.00", sika.FormatAmount(out.Shortfall.Decimal))
		assert.Equal(t, "300.00", available(t, m))
		assert.Equal(t, "1000.00", pendingOf(t, m), "the other payout's hold only")
		got, err := st.Transaction(ctx, tx.ID)
		require.NoError(t, err)
		assert.Equal(t, sika.StatusFailed, got.Status)
		flag, err := st.MoneyFlag(ctx, f.ID)
		require.NoError(t, err)
		require.NotNil(t, flag.ResolvedAt)
		assert.Contains(t, flag.ResolutionNote, "Released by support")
		ledgerBalances(t)
	})

	t.Run("a flag of another kind is not settled", func(t *testing.T) {
		_, _, f := reheld(t, "5000", "")
		_, err := st.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionRefundFlag, Transaction: f.Transaction,
			Reason: "wrong kind", Staff: agent.ID, Flag: &f.ID})
		require.Error(t, err, "a refund decision needs its amount (money_decisions_flag_link)")
		assert.Error(t, store.CheckFlagOpen(f, store.FlagRefundDue))
	})
}

// A refund recorded FAILED (its hold released) that its operator then reports paid is held again
// and flagged PAYOUT_PAID_AFTER_RELEASE: until a person decides it, it counts against its
// collection, so that no second refund gives the customer their money back twice, and the
// REFUND_DUE flag it was issued for takes no other refund. Settled, it is the flag's refund: the
// collection shows it refunded and the REFUND_DUE flag closes (found by a support test: the
// flag took a second refund, and then could never close).
func TestARefundPaidAfterItsReleaseStillCounts(t *testing.T) {
	ctx := t.Context()
	agent, approver := newStaff(t, sika.StaffSupportAgent), newStaff(t, sika.StaffMoneyApprover)
	m := fundedMerchant(t, "5000")
	p := paidCollection(t, m, "1000")
	r, err := newRefund(t, p, "1000", "10", "")
	require.NoError(t, err)
	// The REFUND_DUE flag this refund was issued for (as the flag's decision links it).
	flagID := uuid.New()
	_, err = st.Pool().Exec(ctx, `INSERT INTO money_flags (id, kind, transaction_id, merchant_id, environment, amount, currency, reason, refund_id)
		VALUES ($1, 'REFUND_DUE', $2, $3, 'TEST', 1000, 'XOF', 'paid twice', $4)`, flagID, p.ID, m.ID, r.ID)
	require.NoError(t, err)

	a := newAttempt(t, r, 1, 1)
	_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: r.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusFailed,
		Reason: "every gateway unavailable", TriggeredBy: sika.TriggerSystem, RecheckFor: time.Hour,
		Attempt: store.AttemptUpdate{ID: a.ID, Status: sika.AttemptFailed, FailureCode: "unavailable"}})
	require.NoError(t, err)
	require.True(t, changed)
	taken, err := st.RefundInFlight(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, "0.00", sika.FormatAmount(taken), "failed and released: nothing taken")

	_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "operator callback"})
	require.NoError(t, err)
	require.Equal(t, store.ReconcilePayoutFlagged, out)
	reheldFlags := flagsOf(t, r)
	require.Len(t, reheldFlags, 1)
	require.Equal(t, store.FlagPayoutPaidAfterRelease, reheldFlags[0].Kind)

	taken, err = st.RefundInFlight(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, "1000.00", sika.FormatAmount(taken), "reported paid: taken again")
	_, err = newRefund(t, p, "1", "0", "")
	assert.Equal(t, sika.CodeRefundExceedsPayment, sika.ErrorCode(err), "no second refund: %v", err)
	f, err := st.MoneyFlag(ctx, flagID)
	require.NoError(t, err)
	assert.True(t, f.RefundReheld)
	err = store.CheckNoRefundInFlight(f)
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "the REFUND_DUE flag takes no new refund: %v", err)

	d, err := st.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionSettleReheldPayout, Transaction: r.ID,
		RequestedStatus: sika.StatusSuccess, Reason: "The operator's statement shows the refund.", Staff: agent.ID, Flag: &reheldFlags[0].ID})
	require.NoError(t, err)
	_, _, err = st.SettleReheldPayout(ctx, d.ID, approver.ID, approver.Email)
	require.NoError(t, err)
	got, err := st.Transaction(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, "1000.00", sika.FormatAmount(got.AmountRefunded.Decimal), "the collection shows it refunded")
	f, err = st.MoneyFlag(ctx, flagID)
	require.NoError(t, err)
	assert.NotNil(t, f.ResolvedAt, "the REFUND_DUE flag closes with its refund's success")
	assert.False(t, f.RefundReheld)
	ledgerBalances(t)
}

// A refund of a collection asked while the operator's late "paid" for its earlier, failed refund
// is being recorded: the late answer locks the collection before the wallet, as a new refund
// does, so the two never deadlock and end as one order or the other. Refund first: it is
// accepted (nothing was taken yet) and the late answer is held again and flagged anyway. Late
// answer first: the new refund is refused, what the customer may have got counted.
func TestARefundRacingALatePaidAnswerOfAnEarlierOne(t *testing.T) {
	ctx := t.Context()
	for i := range 8 {
		m := fundedMerchant(t, "5000")
		p := paidCollection(t, m, "1000")
		first, err := newRefund(t, p, "1000", "10", "")
		require.NoError(t, err)
		a := newAttempt(t, first, 1, 1)
		_, _, err = st.CompletePayment(ctx, store.Completion{TransactionID: first.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusFailed,
			Reason: "every gateway unavailable", TriggeredBy: sika.TriggerSystem, RecheckFor: time.Hour,
			Attempt: store.AttemptUpdate{ID: a.ID, Status: sika.AttemptFailed, FailureCode: "unavailable"}})
		require.NoError(t, err)

		var wg sync.WaitGroup
		var lateErr, refundErr error
		var out store.ReconcileOutcome
		wg.Go(func() {
			_, out, lateErr = st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "operator callback"})
		})
		wg.Go(func() { _, refundErr = newRefund(t, p, "1000", "10", "") })
		wg.Wait()
		require.NoError(t, lateErr, "round %d", i)
		assert.Equal(t, store.ReconcilePayoutFlagged, out, "round %d: the late answer is held again and flagged either way", i)
		if refundErr != nil {
			assert.Equal(t, sika.CodeRefundExceedsPayment, sika.ErrorCode(refundErr), "round %d: %v", i, refundErr)
		}
		taken, err := st.RefundInFlight(ctx, p.ID)
		require.NoError(t, err)
		want := "1000.00"
		if refundErr == nil {
			want = "2000.00" // the new refund came first: both are counted, the re-held one flagged for support
		}
		assert.Equal(t, want, sika.FormatAmount(taken), "round %d", i)
	}
	ledgerBalances(t)
}

// TestApprovalHoldsTheProposalWhileApplied: an approval applies its proposal while holding the
// proposal's row; a rejection by another approver that comes meanwhile waits for it and finds the
// proposal approved, so that a rejected proposal is never applied. An apply that fails records
// nothing: the proposal still waits, and may then be rejected.
func TestApprovalHoldsTheProposalWhileApplied(t *testing.T) {
	ctx := t.Context()
	agent := newStaff(t, sika.StaffSupportAgent)
	approver, rejecter := newStaff(t, sika.StaffMoneyApprover), newStaff(t, sika.StaffMoneyApprover)
	m := fundedMerchant(t, "5000")
	p := newPayout(t, m, "1000")
	d, err := st.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionResolveUnclearPayout, Transaction: p.ID,
		RequestedStatus: sika.StatusFailed, Reason: "The operator has no trace of it.", Staff: agent.ID})
	require.NoError(t, err)

	applying, applied := make(chan struct{}), make(chan struct{})
	rejected := make(chan error, 1)
	var approved store.MoneyDecision
	var approveErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		approved, approveErr = st.ApproveMoneyDecision(ctx, d.ID, approver.ID, func(got store.MoneyDecision) (any, error) {
			close(applying)
			<-applied // what an approval applies outside Postgres: a status read, a workflow update
			return map[string]string{"status": "FAILED"}, nil
		})
	})
	<-applying
	wg.Go(func() {
		_, err := st.DecideMoneyDecision(ctx, d.ID, rejecter.ID, store.DecisionRejected, "Wait for the operator.", nil)
		rejected <- err
	})
	select {
	case err := <-rejected:
		t.Errorf("the rejection was answered while the approval was applied: %v", err)
		rejected <- err
	case <-time.After(300 * time.Millisecond): // it waits for the approval
	}
	close(applied)
	wg.Wait()
	require.NoError(t, approveErr)
	assert.Equal(t, store.DecisionApproved, approved.Status)
	assert.JSONEq(t, `{"status":"FAILED"}`, string(approved.Outcome))
	err = <-rejected
	assert.Equal(t, sika.CodeNotAwaitingApproval, sika.ErrorCode(err), "%v", err)
	got, err := st.MoneyDecision(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, store.DecisionApproved, got.Status)
	require.NotNil(t, got.DecidedBy)
	assert.Equal(t, approver.ID, *got.DecidedBy)

	// An apply that fails records nothing.
	q := newPayout(t, m, "1000")
	d, err = st.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionResolveUnclearPayout, Transaction: q.ID,
		RequestedStatus: sika.StatusFailed, Reason: "The operator has no trace of it.", Staff: agent.ID})
	require.NoError(t, err)
	_, err = st.ApproveMoneyDecision(ctx, d.ID, approver.ID, func(store.MoneyDecision) (any, error) {
		return nil, sika.Errorf(sika.CodeServiceUnavailable, "The operator did not answer.")
	})
	assert.Equal(t, sika.CodeServiceUnavailable, sika.ErrorCode(err))
	got, err = st.MoneyDecision(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, store.DecisionPending, got.Status, "still waiting")
	_, err = st.ApproveMoneyDecision(ctx, d.ID, agent.ID, func(store.MoneyDecision) (any, error) {
		t.Error("applied for the one who proposed it")
		return nil, nil
	})
	assert.Equal(t, sika.CodeSelfApprovalForbidden, sika.ErrorCode(err))
	got, err = st.DecideMoneyDecision(ctx, d.ID, rejecter.ID, store.DecisionRejected, "Wait for the operator.", nil)
	require.NoError(t, err)
	assert.Equal(t, store.DecisionRejected, got.Status)
}
