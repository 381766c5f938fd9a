package api

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// refundDueFlag collects 1000 XOF from phone through the sandbox, then records a second paid
// attempt of that collection as a signed callback reporting it paid would (store.ReconcileSuccess
// on an attempt the payment had already succeeded without): credited and flagged REFUND_DUE.
func refundDueFlag(t *testing.T, ps *paymentStack, acct *account, phone string) (sika.TransactionDetail, store.MoneyFlag) {
	t.Helper()
	p := ps.paidCollection(t, acct, phone)
	recorded, err := testStore.Transaction(t.Context(), p.ID)
	require.NoError(t, err)
	second, err := testStore.EnsureAttempt(t.Context(), recorded, sika.TransactionAttempt{ID: uuid.New(), Run: 1, Sequence: 2,
		Gateway: "sandbox-b", Priority: 2})
	require.NoError(t, err)
	_, out, err := testStore.ReconcileSuccess(t.Context(), store.LateSuccess{AttemptID: second.ID, GatewayReference: "paid-twice", Source: "signed callback"})
	require.NoError(t, err)
	require.Equal(t, store.ReconcileRefundDue, out)
	flags := openFlags(t, p.ID)
	require.Len(t, flags, 1)
	require.Equal(t, store.FlagRefundDue, flags[0].Kind)
	return p, flags[0]
}

// refundAttempt waits for a refund's attempt to be recorded and sent.
func refundAttempt(t *testing.T, ps *paymentStack, acct *account, id uuid.UUID) sika.TransactionAttempt {
	t.Helper()
	var a sika.TransactionAttempt
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d := ps.detail(t, acct, id)
		if assert.Len(c, d.Attempts, 1) {
			a = d.Attempts[0]
			sent := false
			for _, op := range ps.sandbox.Operations() {
				sent = sent || op.Reference == a.ID.String()
			}
			assert.True(c, sent, "the sandbox has the refund")
		}
	}, settle, 20*time.Millisecond)
	return a
}

// TestFlagRefundTwoPersonRule (issue 24, item 7): refunding the customer of a REFUND_DUE flag is
// a money decision. A support agent proposes it (the flag's amount by default, with the refund's
// quote); nothing is issued until a money approver other than the proposer approves; two
// approvers at once issue one refund. The flag stays open while the refund is in flight and
// when it fails (visible, and refundable again), and closes only when a refund succeeds, naming
// the approver.
func TestFlagRefundTwoPersonRule(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	fund(t, acct, "BJ", "MTN_BJ", "5000") // the refunds' fees
	// 009: the sandbox decides after 20 ticks, which leaves the test time to decline a refund.
	p, flag := refundDueFlag(t, ps, acct, "97105009")
	assert.Equal(t, "1000.00", amountOf(flag.Amount))
	agent, agentH := ps.staffSession(t, sika.StaffSupportAgent)
	_, readOnlyH := ps.staffSession(t, sika.StaffSupportReadOnly)
	approver, approverH := ps.staffSession(t, sika.StaffMoneyApprover)
	approver2, approver2H := ps.staffSession(t, sika.StaffMoneyApprover)
	refund := "/api/v1/admin/money-flags/" + flag.ID.String() + "/refund/"
	reason := map[string]any{"reason": "Paid at both gateways; the customer asked for the second payment back."}

	r := ps.call(t, "POST", refund, reason, readOnlyH...)
	assert.Equal(t, "role_forbidden", r.code(), "read-only proposes nothing")
	r = ps.call(t, "POST", refund, map[string]any{"reason": "too much", "amount": "1001"}, agentH...)
	assert.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
	assert.Equal(t, string(sika.CodeRefundExceedsPayment), r.code())
	r = ps.call(t, "POST", refund, map[string]any{"reason": "  "}, agentH...)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.fields(), "reason")

	propose := func(h []string) store.MoneyDecision {
		t.Helper()
		r := ps.call(t, "POST", refund, reason, h...)
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		var prop FlagRefundProposal
		r.data(t, &prop)
		d := prop.Decision
		assert.Equal(t, store.DecisionRefundFlag, d.Kind)
		assert.Equal(t, store.DecisionPending, d.Status)
		assert.Equal(t, p.ID, d.Transaction)
		require.NotNil(t, d.Flag)
		assert.Equal(t, flag.ID, *d.Flag)
		require.NotNil(t, d.Amount)
		assert.Equal(t, "1000.00", amountOf(*d.Amount), "the flag's amount by default")
		q := prop.Quote
		assert.Equal(t, "1000.00", amountOf(q.Amount))
		assert.True(t, q.Fee.IsPositive(), "the refund's fee, on top")
		assert.Equal(t, amountOf(sika.NewAmount(q.Amount.Add(q.Fee.Decimal))), amountOf(q.Debited))
		assert.Equal(t, "XOF", q.Currency)
		return d
	}
	d := propose(agentH)
	assert.Empty(t, refundsOf(t, p.ID), "a proposal issues nothing")
	r = ps.call(t, "POST", refund, reason, approverH...)
	assert.Equal(t, http.StatusBadRequest, r.Status, "one proposal waits per transaction: %s", r.Body)
	approve := "/api/v1/admin/money-decisions/" + d.ID.String() + "/approve/"
	assert.Equal(t, "role_forbidden", ps.call(t, "POST", approve, nil, agentH...).code(), "an agent approves nothing")

	// Two approvers at once: one refund.
	var wg sync.WaitGroup
	answers := make([]*response, 2)
	for i, h := range [][]string{approverH, approver2H} {
		wg.Go(func() { answers[i] = ps.call(t, "POST", approve, nil, h...) })
	}
	wg.Wait()
	var issued []uuid.UUID
	for _, a := range answers {
		switch a.Status {
		case http.StatusOK:
			var ap Approval
			a.data(t, &ap)
			require.NotNil(t, ap.Refund, "%s", a.Body)
			assert.Equal(t, store.DecisionApproved, ap.Decision.Status)
			assert.Equal(t, sika.TypeRefund, ap.Refund.Type)
			assert.Equal(t, p.ID, *ap.Refund.RefundedTransaction)
			assert.Equal(t, "1000.00", amountOf(ap.Refund.Amount))
			issued = append(issued, ap.Refund.ID)
		case http.StatusConflict:
			assert.Equal(t, "not_awaiting_approval", a.code())
		default:
			t.Errorf("approval answered %d: %s", a.Status, a.Body)
		}
	}
	require.NotEmpty(t, issued)
	refunds := refundsOf(t, p.ID)
	require.Len(t, refunds, 1, "approved twice at once, issued once")
	for _, id := range issued {
		assert.Equal(t, refunds[0], id)
	}
	var actions []store.StaffActionRecord
	ps.call(t, "GET", "/api/v1/admin/transactions/"+p.ID.String()+"/staff-actions/", nil, readOnlyH...).data(t, &actions)
	assert.Len(t, actionsNamed(actions, store.ActionDecisionApproved), 1)
	assert.Len(t, actionsNamed(actions, store.ActionDecisionProposed), 1)

	// In flight: the flag is open, names its refund, and takes no other proposal.
	f, err := testStore.MoneyFlag(t.Context(), flag.ID)
	require.NoError(t, err)
	assert.Nil(t, f.ResolvedAt, "issued is not refunded")
	require.NotNil(t, f.Refund)
	assert.Equal(t, refunds[0], *f.Refund)
	r = ps.call(t, "POST", refund, reason, agentH...)
	assert.Equal(t, http.StatusBadRequest, r.Status, "a refund is in flight: %s", r.Body)

	// The operator refuses the refund: the flag stays open, shows the failure, and can be
	// refunded again.
	a := refundAttempt(t, ps, acct, refunds[0])
	resp, err := http.Post(ps.sandboxURL()+"/sandbox/pushes/"+a.ID.String()+"/decline", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, refunds[0], settleWithin).Status)
	var open []store.MoneyFlag
	ps.call(t, "GET", "/api/v1/admin/money-flags/?limit=500", nil, readOnlyH...).data(t, &open)
	require.True(t, containsFlag(open, flag.ID), "a failed refund leaves the flag open")
	f, err = testStore.MoneyFlag(t.Context(), flag.ID)
	require.NoError(t, err)
	assert.Nil(t, f.ResolvedAt)
	require.NotNil(t, f.RefundStatus)
	assert.Equal(t, sika.StatusFailed, *f.RefundStatus)

	// Refunded again, through the console this time: the flag's page quotes the flag's amount;
	// an approver proposes there (any agent or above proposes) and cannot approve it; another
	// approver does, on the decisions page.
	console := func(m sika.Member) *dashClient {
		c := newDashClient(t, ps.url)
		require.Equal(t, http.StatusSeeOther, c.consoleLogin(t, m.Email, "correct horse battery").Status)
		return c
	}
	proposer, second := console(approver), console(approver2)
	flagPage := "/console/flags/" + flag.ID.String() + "/"
	page := proposer.Get(t, flagPage, "Accept-Language", "en")
	require.Equal(t, http.StatusOK, page.Status, page.Body)
	assert.Contains(t, page.Body, `id="refund-quote"`)
	assert.Contains(t, page.Body, "Refund fee")
	assert.Contains(t, page.Body, `name="amount" value="1000"`, "the flag's amount, prefilled")
	csrf := hiddenField(t, page.Body, "csrf_token")
	c := proposer.Do(t, http.MethodPost, flagPage+"refund/", url.Values{"csrf_token": {csrf}, "amount": {"1000"},
		"reason": {"The first refund was refused; the customer gave another number's consent."}})
	require.Equal(t, http.StatusSeeOther, c.Status, c.Body)
	waiting, err := testStore.MoneyDecisions(t.Context(), store.DecisionPending, p.ID, 10)
	require.NoError(t, err)
	require.Len(t, waiting, 1)
	again := waiting[0]
	assert.Equal(t, store.DecisionRefundFlag, again.Kind)
	assert.Equal(t, approver.ID, again.ProposedBy)
	page = proposer.Get(t, flagPage)
	assert.Contains(t, page.Body, `id="waiting-decision"`)
	assert.Contains(t, page.Body, "own-proposal", "the proposer is shown no approve button")
	list := second.Get(t, "/console/decisions/")
	require.Equal(t, http.StatusOK, list.Status)
	assert.Contains(t, list.Body, p.Reference, "the approver reads what the decision is about: the transaction's reference")
	assert.Contains(t, list.Body, `class="decision-subject"`)
	assert.NotContains(t, list.Body, "decision-stale", "a refund decision is not stale")
	c = proposer.Do(t, http.MethodPost, "/console/decisions/"+again.ID.String()+"/approve/", url.Values{"csrf_token": {csrf}})
	assert.Equal(t, http.StatusForbidden, c.Status, "the proposer cannot approve")
	c = second.Do(t, http.MethodPost, "/console/decisions/"+again.ID.String()+"/approve/", url.Values{"csrf_token": {second.consoleCSRF(t)}})
	require.Equal(t, http.StatusSeeOther, c.Status, c.Body)
	assert.Contains(t, c.Header.Get("Location"), flagPage)
	now := refundsOf(t, p.ID)
	require.Len(t, now, 2)
	var secondRefund uuid.UUID
	for _, id := range now {
		if id != refunds[0] {
			secondRefund = id
		}
	}
	assert.Contains(t, c.Header.Get("Location"), "refund="+secondRefund.String())
	done := ps.final(t, acct, secondRefund, settleWithin)
	assert.Equal(t, sika.StatusSuccess, done.Status)
	f, err = testStore.MoneyFlag(t.Context(), flag.ID)
	require.NoError(t, err)
	require.NotNil(t, f.ResolvedAt, "closed once the refund succeeded")
	require.NotNil(t, f.ResolvedBy)
	assert.Equal(t, approver2.ID, *f.ResolvedBy, "the approver of the refund that succeeded")
	assert.Contains(t, f.ResolutionNote, done.Reference)
	page = second.Get(t, flagPage, "Accept-Language", "en")
	assert.Contains(t, page.Body, "Resolved")
	assert.Equal(t, "1000.00", amountOf(ps.detail(t, acct, p.ID).AmountRefunded))
	ps.call(t, "GET", "/api/v1/admin/money-flags/?limit=500", nil, readOnlyH...).data(t, &open)
	assert.False(t, containsFlag(open, flag.ID), "no longer open")
	r = ps.call(t, "POST", refund, reason, agentH...)
	assert.Equal(t, http.StatusBadRequest, r.Status, "a resolved flag is refunded once: %s", r.Body)
	assert.Equal(t, agent.ID, d.ProposedBy)
	disc, err := testStore.CheckLedger(t.Context())
	require.NoError(t, err)
	assert.Nil(t, disc)
}
