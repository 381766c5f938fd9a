package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/webhook"
	"github.com/sikahq/sika/workflows"
)

// unclearOperator is an operator whose payouts stay unclear: the first send of a reference is
// accepted, every status read answers NOT_FOUND (within a settle window of an hour, so never
// final) and every re-send is unavailable, until the test settles the reference or makes its
// status reads fail.
type unclearOperator struct {
	name string

	mu          sync.Mutex
	sends       map[string]int
	reads       map[string]int
	settled     map[string]gateway.OperationStatus
	unreachable map[string]bool
	// paused holds the status reads of a reference made outside a workflow's activity (support's
	// read at a resolution) until the test closes the channel; entered hears of each one.
	paused  map[string]chan struct{}
	entered chan string
}

var (
	_ gateway.Gateway  = (*unclearOperator)(nil)
	_ gateway.Windowed = (*unclearOperator)(nil)
)

func newUnclearOperator(name string) *unclearOperator {
	return &unclearOperator{name: name, sends: map[string]int{}, reads: map[string]int{},
		settled: map[string]gateway.OperationStatus{}, unreachable: map[string]bool{},
		paused: map[string]chan struct{}{}, entered: make(chan string, 16)}
}

func (g *unclearOperator) Name() string { return g.name }

func (g *unclearOperator) Windows() gateway.Windows {
	return gateway.Windows{NotFoundSettle: time.Hour, LateSuccess: time.Hour}
}

var errNotScripted = gateway.Unavailable(errors.New("collections are not scripted"))

func (g *unclearOperator) Collect(context.Context, gateway.CollectRequest) (gateway.CollectResult, error) {
	return gateway.CollectResult{}, errNotScripted
}

func (g *unclearOperator) ConfirmOTP(context.Context, string, string) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, errNotScripted
}

func (g *unclearOperator) CollectionStatus(context.Context, string) (gateway.OperationStatus, error) {
	return gateway.OperationStatus{}, errNotScripted
}

func (g *unclearOperator) ParseCallback(context.Context, http.Header, []byte) (gateway.Callback, error) {
	return gateway.Callback{}, errors.New("no callbacks")
}

// Disburse accepts the first send of a reference; a re-send meets a 503.
func (g *unclearOperator) Disburse(_ context.Context, req gateway.DisburseRequest) (gateway.OperationStatus, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sends[req.Reference]++
	if g.sends[req.Reference] > 1 {
		return gateway.OperationStatus{}, gateway.Unavailable(errors.New("503: try again later"))
	}
	return gateway.OperationStatus{Reference: req.Reference, Status: gateway.StatusPending}, nil
}

// DisbursementStatus answers NOT_FOUND, or what the test settled, or fails when unreachable.
func (g *unclearOperator) DisbursementStatus(ctx context.Context, reference string) (gateway.OperationStatus, error) {
	g.mu.Lock()
	gate := g.paused[reference]
	g.mu.Unlock()
	if gate != nil && !activity.IsActivity(ctx) {
		g.entered <- reference
		<-gate
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads[reference]++
	if st, ok := g.settled[reference]; ok {
		return st, nil
	}
	if g.unreachable[reference] {
		return gateway.OperationStatus{}, gateway.Unavailable(errors.New("connection refused"))
	}
	return gateway.OperationStatus{Reference: reference, Status: gateway.StatusNotFound}, nil
}

func (g *unclearOperator) settle(reference string, st gateway.Status) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.settled[reference] = gateway.OperationStatus{Reference: reference, GatewayReference: "UNCLEAR-" + reference[:8], Status: st}
}

// pauseReads holds support's status reads of reference until release is called.
func (g *unclearOperator) pauseReads(reference string) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gate := make(chan struct{})
	g.paused[reference] = gate
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

func (g *unclearOperator) cutOff(reference string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.unreachable[reference] = true
}

func (g *unclearOperator) counts(reference string) (sends, reads int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sends[reference], g.reads[reference]
}

// queueClient starts every workflow on its own task queue, where the money stack's worker
// (with the unclear operator) polls; updates and reads go to the shared Temporal client.
type queueClient struct {
	client.Client
	queue string
}

func (c queueClient) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	o.TaskQueue = c.queue
	return c.Client.ExecuteWorkflow(ctx, o, wf, args...)
}

// moneyStack is the API and a worker of their own, in front of the unclear operator (named
// sandbox-a, so that the TEST routing of MTN_BJ reaches it), on the package's Postgres and
// Temporal: the payouts it starts run the real workflows and activities on a task queue of
// their own, away from the shared stack's sandbox.
type moneyStack struct {
	*testServer
	op       *unclearOperator
	temporal client.Client
}

func newMoneyStack(t *testing.T) *moneyStack {
	t.Helper()
	ps := payments(t)
	op := newUnclearOperator("sandbox-a")
	router := gateway.NewRouter(gateway.HealthPolicy{}, op)
	tc := queueClient{Client: ps.temporal, queue: workflows.TaskQueue + "-unclear-payouts"}

	hs := httptest.NewUnstartedServer(nil)
	srv := NewServer(Config{
		PublicURL: "http://" + hs.Listener.Addr().String(), JWTSecret: []byte("test secret of at least thirty-two bytes"),
		RateLimitPerMinute: 100000, Logger: testLogger(), Temporal: tc, Gateways: router,
		WebhookGuard: webhook.Guard{AllowPrivate: true}, TemporalUIURL: "http://temporal-ui.test", TemporalNamespace: "default",
	}, testStore)
	hs.Config.Handler = validatedHandler(srv, serverReport(t))
	hs.Start()
	t.Cleanup(hs.Close)

	acts := &activities.Activities{Store: testStore, Gateways: router, CallbackBaseURL: hs.URL, PushLifetime: stackPushLifetime,
		WebhookGuard: webhook.Guard{AllowPrivate: true}, WebhookTimeout: 300 * time.Millisecond}
	w := worker.New(ps.temporal, tc.queue, worker.Options{})
	workflows.Register(w, acts)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return &moneyStack{testServer: &testServer{Server: srv, url: hs.URL, validator: newOpenAPIValidator(t)}, op: op, temporal: tc}
}

// staffMember registers a staff member and returns it with the headers of its session.
func (ms *moneyStack) staffMember(t *testing.T) (sika.Member, []string) {
	t.Helper()
	return ms.staffAs(t, sika.StaffAdmin)
}

// staffAs registers a staff member of a role and returns it with the headers of its session.
func (ms *moneyStack) staffAs(t *testing.T, role sika.StaffRole) (sika.Member, []string) {
	t.Helper()
	m := newStaffWithRole(t, role)
	tok, _, err := ms.issueToken(m)
	require.NoError(t, err)
	return m, bearer(tok)
}

// resolveByTwo proposes a resolution as proposer (202) and approves it as approver, and returns
// the approval's answer.
func (ms *moneyStack) resolveByTwo(t *testing.T, id uuid.UUID, body any, proposer, approver []string) *response {
	t.Helper()
	r := ms.resolve(t, id, body, proposer)
	require.Equal(t, 202, r.Status, "%s", r.Body)
	var d store.MoneyDecision
	r.data(t, &d)
	assert.Equal(t, store.DecisionPending, d.Status)
	return ms.call(t, "POST", "/api/v1/admin/money-decisions/"+d.ID.String()+"/approve/", nil, approver...)
}

// actionsNamed keeps the staff actions of one kind.
func actionsNamed(actions []store.StaffActionRecord, name string) []store.StaffActionRecord {
	var out []store.StaffActionRecord
	for _, a := range actions {
		if a.Action == name {
			out = append(out, a)
		}
	}
	return out
}

// payout creates a TEST payout of 1000 XOF (10 of fee) from acct's BJ wallet, with its hold,
// and starts its workflow on the money stack's queue. The outbox row is deleted at once, so
// that the shared stack's sweeper never starts it on the sandbox.
func (ms *moneyStack) payout(t *testing.T, acct *account) sika.Transaction {
	t.Helper()
	ctx := t.Context()
	n, err := testStore.NetworkByCode(ctx, "MTN_BJ")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("OUT", time.Now())
	require.NoError(t, err)
	in := activities.PaymentInput{TransactionID: id, Run: 1}
	p, outbox, created, err := testStore.CreatePayout(ctx, store.NewTransaction{Transaction: sika.Transaction{
		ID: id, Reference: ref, Merchant: acct.Merchant.ID, Environment: sika.EnvironmentTest, Type: sika.TypePayout,
		RequestedAmount: sika.NewAmount(dec("1000")), ClientFee: sika.NewAmount(dec("10")), PlatformFee: sika.NewAmount(dec("10")),
		DebitedAmount: sika.NewAmount(dec("1000")), NetAmount: sika.NewAmount(dec("990")), Currency: "XOF", Country: "BJ",
		NetworkID: n.ID, Network: n.Code, Recipient: "+22997000123", CustomerName: "Ama Beneficiary", Description: "Salary",
		FeeChargeMode: sika.FeeDeducted,
	}, Reason: "Payout requested"}, workflows.PayoutStart(in))
	require.NoError(t, err)
	require.True(t, created)
	require.NoError(t, testStore.DeleteOutbox(ctx, outbox))
	require.NoError(t, workflows.StartPayout(ctx, ms.temporal, in))
	t.Cleanup(func() {
		// A payout a failed test left waiting: its worker is gone with the test.
		_ = ms.temporal.TerminateWorkflow(context.Background(), workflows.PayoutWorkflowID(id), "", "test over")
	})
	return p
}

// unclear waits until the payout is in support's queue and returns its entry.
func (ms *moneyStack) unclear(t *testing.T, staff []string, id uuid.UUID) unclearPayout {
	t.Helper()
	var found *unclearPayout
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var list []unclearPayout
		ms.call(t, "GET", "/api/v1/admin/payouts/unclear/?older_than=0s&limit=500", nil, staff...).data(t, &list)
		found = nil
		for i := range list {
			if list[i].Transaction.ID == id {
				found = &list[i]
			}
		}
		if assert.NotNil(c, found, "payout %s is not listed as unclear", id) && assert.Len(c, found.Attempts, 1) {
			// The first poll read NOT_FOUND and the re-send met a 503.
			assert.Equal(c, "UNAVAILABLE", found.Attempts[0].LastAnswer)
		}
	}, 30*time.Second, 200*time.Millisecond)
	return *found
}

func (ms *moneyStack) transaction(t *testing.T, acct *account, id uuid.UUID) sika.TransactionDetail {
	t.Helper()
	var d sika.TransactionDetail
	ms.call(t, "GET", "/api/v1/transactions/"+id.String()+"/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayout)...).data(t, &d)
	return d
}

// money returns acct's BJ TEST wallet and its ledger entries, newest first.
func (ms *moneyStack) money(t *testing.T, acct *account) (sika.Wallet, []sika.LedgerEntry) {
	t.Helper()
	key := acct.key(sika.EnvironmentTest, sika.ScopePayout)
	var wallets struct{ Results []sika.Wallet }
	ms.call(t, "GET", "/api/v1/merchant-balances/", nil, key...).data(t, &wallets)
	require.Len(t, wallets.Results, 1)
	var entries struct{ Results []sika.LedgerEntry }
	ms.call(t, "GET", "/api/v1/merchant-ledger-entries/", nil, key...).data(t, &entries)
	return wallets.Results[0], entries.Results
}

func (ms *moneyStack) resolve(t *testing.T, id uuid.UUID, body any, headers []string) *response {
	t.Helper()
	return ms.call(t, "POST", "/api/v1/admin/transactions/"+id.String()+"/resolve/", body, headers...)
}

func amountOf(a sika.Amount) string { return sika.FormatAmount(a.Decimal) }

// TestResolutionApprovalRacesARejection: a rejection by another approver that comes while an
// approval is being applied (its status read at the operator under way) waits for that approval
// and is refused; the decision recorded is the one applied, and the payout's money moved once.
func TestResolutionApprovalRacesARejection(t *testing.T) {
	ms := newMoneyStack(t)
	_, agent := ms.staffAs(t, sika.StaffSupportAgent)
	_, approver := ms.staffAs(t, sika.StaffMoneyApprover)
	_, rejecter := ms.staffAs(t, sika.StaffMoneyApprover)
	acct := ms.newAccount(t, true)
	fund(t, acct, "BJ", "MTN_BJ", "5000")
	p := ms.payout(t, acct)
	ref := activities.AttemptID(p.ID, 1, 1).String()
	ms.unclear(t, agent, p.ID)

	r := ms.resolve(t, p.ID, map[string]string{"status": "FAILED", "reason": "The operator has no trace of it (ticket 5120)."}, agent)
	require.Equal(t, 202, r.Status, "%s", r.Body)
	var proposal store.MoneyDecision
	r.data(t, &proposal)
	path := "/api/v1/admin/money-decisions/" + proposal.ID.String()

	release := ms.op.pauseReads(ref)
	defer release()
	approved, rejected := make(chan *response, 1), make(chan *response, 1)
	go func() { approved <- ms.call(t, "POST", path+"/approve/", nil, approver...) }()
	select {
	case <-ms.op.entered: // the approval is reading the payout's status at the operator
	case r := <-approved:
		t.Fatalf("the approval answered before its status read: %d %s", r.Status, r.Body)
	case <-time.After(60 * time.Second):
		t.Fatal("the approval never read the payout's status")
	}
	go func() {
		rejected <- ms.call(t, "POST", path+"/reject/", map[string]string{"note": "Wait for the operator's answer."}, rejecter...)
	}()
	select {
	case r := <-rejected:
		// Answered while the approval is still being applied: it must not have been recorded.
		assert.Equal(t, 409, r.Status, "a rejection during an approval: %s", r.Body)
		rejected <- r
	case <-time.After(300 * time.Millisecond): // waiting for the approval, as it should
	}
	release()
	var ra, rr *response
	for ra == nil || rr == nil {
		select {
		case ra = <-approved:
		case rr = <-rejected:
		case <-time.After(90 * time.Second):
			t.Fatal("the approval or the rejection never answered")
		}
	}

	require.Equal(t, 200, ra.Status, "%s", ra.Body)
	var a Approval
	ra.data(t, &a)
	assert.Equal(t, store.DecisionApproved, a.Decision.Status, "the approval answers the decision it applied")
	require.NotNil(t, a.Resolution)
	assert.Equal(t, sika.StatusFailed, a.Resolution.Transaction.Status)
	assert.Equal(t, 409, rr.Status, "%s", rr.Body)
	assert.Equal(t, "not_awaiting_approval", rr.code())

	stored, err := testStore.MoneyDecision(t.Context(), proposal.ID)
	require.NoError(t, err)
	assert.Equal(t, store.DecisionApproved, stored.Status, "what is recorded is what was applied")
	assert.Equal(t, sika.StatusFailed, ms.transaction(t, acct, p.ID).Status)
	w, _ := ms.money(t, acct)
	assert.Equal(t, "5000.00", amountOf(w.AvailableAmount), "the hold released once")
	assert.Equal(t, "0.00", amountOf(w.PendingAmount))
}

// TestUnclearPayoutSupport: a payout whose operator keeps answering NOT_FOUND within its settle
// window, and whose re-sends are unavailable, stays PENDING with its hold and shows up in
// support's queue with its attempt and the operator's last answer; support ends it only with a
// reason, after a status read, audited; an operator's final answer at that read wins over
// support's choice; a success the operator reports after support released the hold is flagged.
func TestUnclearPayoutSupport(t *testing.T) {
	ms := newMoneyStack(t)
	// Two people: an agent proposes, an approver approves (and is named as who ended it).
	_, staff := ms.staffAs(t, sika.StaffSupportAgent)
	member, approver := ms.staffAs(t, sika.StaffMoneyApprover)

	t.Run("ended FAILED by support", func(t *testing.T) {
		t.Parallel()
		acct := ms.newAccount(t, true)
		fund(t, acct, "BJ", "MTN_BJ", "5000")
		p := ms.payout(t, acct)
		ref := activities.AttemptID(p.ID, 1, 1).String()

		entry := ms.unclear(t, staff, p.ID)
		assert.Equal(t, sika.StatusPending, entry.Transaction.Status)
		assert.NotEmpty(t, entry.Transaction.PendingReason, "the merchant reads that it awaits the operator")
		assert.Equal(t, "payout:"+p.ID.String(), entry.WorkflowID)
		assert.Equal(t, "http://temporal-ui.test/namespaces/default/workflows/payout:"+p.ID.String(), entry.WorkflowURL)
		assert.NotEmpty(t, entry.PendingFor)
		a := entry.Attempts[0]
		assert.Equal(t, ref, a.ID.String())
		assert.Equal(t, "sandbox-a", a.Gateway)
		assert.Equal(t, sika.AttemptPending, a.Status)
		assert.NotNil(t, a.LastAnswerAt)
		sends, reads := ms.op.counts(ref)
		assert.GreaterOrEqual(t, sends, 2, "sent, then sent again after the NOT_FOUND read")
		assert.GreaterOrEqual(t, reads, 1)
		w, _ := ms.money(t, acct)
		assert.Equal(t, "4000.00", amountOf(w.AvailableAmount), "the hold is intact")
		assert.Equal(t, "1000.00", amountOf(w.PendingAmount))
		d := ms.transaction(t, acct, p.ID)
		assert.Equal(t, sika.StatusPending, d.Status)
		assert.Equal(t, entry.Transaction.PendingReason, d.PendingReason)

		// The default bound is 15 minutes: a payout unclear for seconds is not in the queue yet.
		var recent []unclearPayout
		ms.call(t, "GET", "/api/v1/admin/payouts/unclear/", nil, staff...).data(t, &recent)
		for _, u := range recent {
			assert.NotEqual(t, p.ID, u.Transaction.ID)
		}

		// Nothing was done by staff yet.
		var actions []store.StaffActionRecord
		ms.call(t, "GET", "/api/v1/admin/transactions/"+p.ID.String()+"/staff-actions/", nil, staff...).data(t, &actions)
		assert.Empty(t, actions)

		// Bodies support may not send: each is 400, and changes nothing.
		long := strings.Repeat("x", 501)
		for _, c := range []struct {
			body  any
			field string
		}{
			{map[string]string{}, "reason"},
			{map[string]string{"status": "FAILED"}, "reason"},
			{map[string]string{"status": "FAILED", "reason": "   "}, "reason"},
			{map[string]string{"status": "FAILED", "reason": long}, "reason"},
			{map[string]string{"reason": "no status"}, "status"},
			{map[string]string{"status": "CANCELLED", "reason": "wrong status"}, "status"},
			{map[string]any{"status": "FAILED", "reason": "ok", "note": "unknown"}, "note"},
			{map[string]any{"status": "FAILED", "reason": 42}, "reason"},
		} {
			r := ms.resolve(t, p.ID, c.body, staff)
			assert.Equal(t, 400, r.Status, "%v: %s", c.body, r.Body)
			assert.Contains(t, r.fields(), c.field, "%v: %s", c.body, r.Body)
		}
		r := ms.resolve(t, p.ID, "not json", staff)
		assert.Equal(t, 400, r.Status)
		assert.Equal(t, "invalid_json", r.code())
		assert.Equal(t, sika.StatusPending, ms.transaction(t, acct, p.ID).Status)

		// Support ends it FAILED: the status read still says NOT_FOUND, so support decides.
		reason := "MTN support confirmed by phone that the transfer was never created (ticket 4411)."
		r = ms.resolveByTwo(t, p.ID, map[string]string{"status": "FAILED", "reason": reason}, staff, approver)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var approval Approval
		r.data(t, &approval)
		res := approval.Resolution
		assert.Equal(t, store.DecisionApproved, approval.Decision.Status)
		assert.Equal(t, DecidedBySupport, res.DecidedBy)
		assert.Equal(t, "NOT_FOUND", res.OperatorAnswer)
		assert.Equal(t, sika.StatusFailed, res.RequestedStatus)
		assert.Equal(t, "payout:"+p.ID.String(), res.WorkflowID)
		assert.Equal(t, sika.StatusFailed, res.Transaction.Status)
		assert.Equal(t, workflows.FailureEndedBySupport, res.Transaction.FailureCode)
		assert.Contains(t, res.Transaction.FailureMessage, reason)
		assert.Empty(t, res.Transaction.PendingReason)
		require.NotEmpty(t, res.Transaction.StatusLogs)
		last := res.Transaction.StatusLogs[len(res.Transaction.StatusLogs)-1]
		require.NotNil(t, last.FromStatus)
		assert.Equal(t, sika.StatusPending, *last.FromStatus)
		assert.Equal(t, sika.StatusFailed, last.ToStatus)
		assert.Equal(t, sika.TriggerAdmin, last.TriggeredBy)
		assert.Contains(t, last.Reason, member.Email, "the status log names the staff member")
		assert.Contains(t, last.Reason, reason)
		assert.Contains(t, last.Reason, "NOT_FOUND")
		assert.Equal(t, sika.AttemptFailed, res.Transaction.Attempts[0].Status)

		w, entries := ms.money(t, acct)
		assert.Equal(t, "5000.00", amountOf(w.AvailableAmount), "the hold is released")
		assert.True(t, w.PendingAmount.IsZero())
		require.NotEmpty(t, entries)
		assert.Equal(t, sika.LedgerPayoutReversal, entries[0].Type)
		assert.Equal(t, "1000.00", amountOf(entries[0].Amount))

		ms.call(t, "GET", "/api/v1/admin/transactions/"+p.ID.String()+"/staff-actions/", nil, staff...).data(t, &actions)
		assert.Len(t, actionsNamed(actions, store.ActionDecisionProposed), 1, "the proposal is audited")
		assert.Len(t, actionsNamed(actions, store.ActionDecisionApproved), 1, "the approval is audited")
		actions = actionsNamed(actions, "end_unclear_run")
		require.Len(t, actions, 1)
		act := actions[0]
		assert.Equal(t, member.ID, act.Staff)
		assert.Equal(t, member.Email, act.StaffEmail)
		assert.Equal(t, "end_unclear_run", act.Action)
		require.NotNil(t, act.Transaction)
		assert.Equal(t, p.ID, *act.Transaction)
		assert.Equal(t, reason, act.Reason)
		var detail map[string]string
		require.NoError(t, json.Unmarshal(act.Detail, &detail))
		assert.Equal(t, "FAILED", detail["status"])
		assert.Equal(t, "NOT_FOUND", detail["operator_answer"])
		assert.Equal(t, ref, detail["attempt"])

		// Ended: out of the queue, and a second resolution is refused.
		var list []unclearPayout
		ms.call(t, "GET", "/api/v1/admin/payouts/unclear/?older_than=0s&limit=500", nil, staff...).data(t, &list)
		for _, u := range list {
			assert.NotEqual(t, p.ID, u.Transaction.ID)
		}
		r = ms.resolve(t, p.ID, map[string]string{"status": "SUCCESS", "reason": "second thoughts"}, staff)
		assert.Equal(t, 409, r.Status, "%s", r.Body)
		assert.Equal(t, "not_pending", r.code())

		// The operator reports it paid after all: a re-verify flags it for support and leaves the
		// wallet alone.
		ms.op.settle(ref, gateway.StatusSuccess)
		r = ms.call(t, "POST", "/api/v1/admin/transactions/"+p.ID.String()+"/reverify/", nil, staff...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var rv reverification
		r.data(t, &rv)
		assert.True(t, rv.Disagreement)
		var flags []store.MoneyFlag
		ms.call(t, "GET", "/api/v1/admin/money-flags/?limit=500", nil, staff...).data(t, &flags)
		var flag *store.MoneyFlag
		for i := range flags {
			if flags[i].Transaction == p.ID {
				flag = &flags[i]
			}
		}
		require.NotNil(t, flag, "the late success is flagged")
		assert.Equal(t, store.FlagPayoutPaidAfterRelease, flag.Kind)
		assert.Equal(t, "990.00", amountOf(flag.Amount), "what the beneficiary received")
		assert.Nil(t, flag.ResolvedAt)
		ms.call(t, "GET", "/api/v1/admin/money-flags/?all=true&limit=500", nil, staff...).data(t, &flags)
		assert.True(t, containsFlag(flags, flag.ID))
		// What the wallet still has of it is held again at once, so that the merchant cannot
		// spend it a second time before support acts; nothing is debited (issue 21).
		w, _ = ms.money(t, acct)
		assert.Equal(t, "4000.00", amountOf(w.AvailableAmount), "held again")
		assert.Equal(t, "1000.00", amountOf(w.PendingAmount), "held, not debited: a flag is for a person")
		assert.Contains(t, flag.Reason, "1000.00 of 1000.00 XOF held again pending support")

		disc, err := testStore.CheckLedger(t.Context())
		require.NoError(t, err)
		assert.Nil(t, disc)
	})

	t.Run("the operator's final answer decides", func(t *testing.T) {
		t.Parallel()
		acct := ms.newAccount(t, true)
		fund(t, acct, "BJ", "MTN_BJ", "5000")
		p := ms.payout(t, acct)
		ref := activities.AttemptID(p.ID, 1, 1).String()
		ms.unclear(t, staff, p.ID)

		// The operator has paid it by the time support looks (the workflow's next read is
		// seconds away): the status read finds SUCCESS and support's FAILED is not applied.
		ms.op.settle(ref, gateway.StatusSuccess)
		r := ms.resolveByTwo(t, p.ID, map[string]string{"status": "FAILED", "reason": "Operator says unknown."}, staff, approver)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var approval Approval
		r.data(t, &approval)
		res := approval.Resolution
		assert.Equal(t, DecidedByOperator, res.DecidedBy)
		assert.Equal(t, "SUCCESS", res.OperatorAnswer)
		assert.Equal(t, sika.StatusFailed, res.RequestedStatus)
		assert.Equal(t, sika.StatusSuccess, res.Transaction.Status)
		last := res.Transaction.StatusLogs[len(res.Transaction.StatusLogs)-1]
		assert.Equal(t, sika.TriggerSystem, last.TriggeredBy)

		w, entries := ms.money(t, acct)
		assert.Equal(t, "4000.00", amountOf(w.AvailableAmount))
		assert.True(t, w.PendingAmount.IsZero(), "the hold is settled")
		assert.Equal(t, sika.LedgerPayout, entries[0].Type)
		var actions []store.StaffActionRecord
		ms.call(t, "GET", "/api/v1/admin/transactions/"+p.ID.String()+"/staff-actions/", nil, staff...).data(t, &actions)
		assert.Empty(t, actionsNamed(actions, "end_unclear_run"), "support's choice was not applied: no end to audit")
	})

	t.Run("operator unreachable: ended SUCCESS by support", func(t *testing.T) {
		t.Parallel()
		acct := ms.newAccount(t, true)
		fund(t, acct, "BJ", "MTN_BJ", "5000")
		p := ms.payout(t, acct)
		ref := activities.AttemptID(p.ID, 1, 1).String()
		ms.unclear(t, staff, p.ID)

		ms.op.cutOff(ref)
		reason := "Beneficiary's statement shows the 990 XOF credit on the day (screenshot in ticket 4412)."
		r := ms.resolveByTwo(t, p.ID, map[string]string{"status": "SUCCESS", "reason": reason}, staff, approver)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var approval Approval
		r.data(t, &approval)
		res := approval.Resolution
		assert.Equal(t, DecidedBySupport, res.DecidedBy)
		assert.Equal(t, OperatorUnreachable, res.OperatorAnswer)
		assert.Equal(t, sika.StatusSuccess, res.Transaction.Status)
		last := res.Transaction.StatusLogs[len(res.Transaction.StatusLogs)-1]
		assert.Equal(t, sika.TriggerAdmin, last.TriggeredBy)
		assert.Contains(t, last.Reason, member.Email)
		assert.Contains(t, last.Reason, OperatorUnreachable)

		w, entries := ms.money(t, acct)
		assert.Equal(t, "4000.00", amountOf(w.AvailableAmount))
		assert.True(t, w.PendingAmount.IsZero(), "the hold is settled")
		assert.Equal(t, sika.LedgerPayout, entries[0].Type)
		var actions []store.StaffActionRecord
		ms.call(t, "GET", "/api/v1/admin/transactions/"+p.ID.String()+"/staff-actions/", nil, staff...).data(t, &actions)
		actions = actionsNamed(actions, "end_unclear_run")
		require.Len(t, actions, 1)
		assert.Equal(t, reason, actions[0].Reason)

		// Support's SUCCESS is not the operator's word: the attempt is still re-read, so that a
		// FAILED the operator gives later is flagged (issue 21).
		var until *time.Time
		require.NoError(t, testStore.Pool().QueryRow(t.Context(), `SELECT recheck_until FROM transaction_attempts WHERE id = $1`, ref).Scan(&until))
		assert.NotNil(t, until, "re-read after support ended it SUCCESS")
	})
}

func containsFlag(flags []store.MoneyFlag, id uuid.UUID) bool {
	for _, f := range flags {
		if f.ID == id {
			return true
		}
	}
	return false
}

// TestSupportMoneyRoutesRefused: the money routes are for staff only, take only payouts that are
// PENDING, and validate their parameters.
func TestSupportMoneyRoutesRefused(t *testing.T) {
	ms := newMoneyStack(t)
	_, staff := ms.staffMember(t)
	acct := ms.newAccount(t, true)

	pending := historyRow{Merchant: acct.Merchant.ID, Type: sika.TypePayment, Status: sika.StatusPending, CreatedAt: time.Now().UTC()}
	insertHistoryRow(t, &pending)
	done := historyRow{Merchant: acct.Merchant.ID, Type: sika.TypePayout, Status: sika.StatusSuccess, CreatedAt: time.Now().UTC()}
	insertHistoryRow(t, &done)
	body := map[string]string{"status": "FAILED", "reason": "test"}

	// Merchants, by key or dashboard session, are refused every money route.
	for _, h := range [][]string{acct.key(sika.EnvironmentTest, sika.ScopeBoth), acct.dashboard(sika.EnvironmentTest)} {
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/api/v1/admin/payouts/unclear/", nil},
			{"POST", "/api/v1/admin/transactions/" + done.ID.String() + "/resolve/", body},
			{"GET", "/api/v1/admin/transactions/" + done.ID.String() + "/staff-actions/", nil},
			{"GET", "/api/v1/admin/money-flags/", nil},
		} {
			r := ms.call(t, c.method, c.path, c.body, h...)
			assert.Equal(t, 403, r.Status, "%s %s: %s", c.method, c.path, r.Body)
			assert.Equal(t, "admin_only", r.code())
		}
	}

	// A collection ends on its own.
	r := ms.resolve(t, pending.ID, body, staff)
	assert.Equal(t, 400, r.Status, "%s", r.Body)
	assert.Contains(t, r.fields(), "non_field_errors")
	// A payout that is over.
	r = ms.resolve(t, done.ID, body, staff)
	assert.Equal(t, 409, r.Status, "%s", r.Body)
	assert.Equal(t, "not_pending", r.code())
	// Unknown transactions.
	missing := uuid.NewString()
	assert.Equal(t, 404, ms.resolve(t, uuid.MustParse(missing), body, staff).Status)
	assert.Equal(t, 404, ms.call(t, "GET", "/api/v1/admin/transactions/"+missing+"/staff-actions/", nil, staff...).Status)
	assert.Equal(t, 404, ms.call(t, "POST", "/api/v1/admin/transactions/not-a-uuid/resolve/", body, staff...).Status)

	// Parameters.
	for _, path := range []string{
		"/api/v1/admin/payouts/unclear/?older_than=soon", "/api/v1/admin/payouts/unclear/?limit=0",
		"/api/v1/admin/money-flags/?all=maybe", "/api/v1/admin/money-flags/?limit=x",
		"/api/v1/admin/transactions/" + done.ID.String() + "/staff-actions/?limit=-1",
	} {
		r := ms.call(t, "GET", path, nil, staff...)
		assert.Equal(t, 400, r.Status, "%s: %s", path, r.Body)
	}
	var flags []store.MoneyFlag
	ms.call(t, "GET", "/api/v1/admin/money-flags/?all=false", nil, staff...).data(t, &flags)
	for _, f := range flags {
		assert.Nil(t, f.ResolvedAt, "open flags only")
	}
}
