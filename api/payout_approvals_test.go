package api

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// teammate registers another member and adds it to acct's merchant with role, through
// POST /team-members/ by acct's owner; it answers the teammate's dashboard headers (TEST) for
// acct's merchant.
func (ts *testServer) teammate(t *testing.T, acct *account, role sika.MembershipRole) (sika.Member, []string) {
	t.Helper()
	hash, err := sika.HashPassword("correct horse battery")
	require.NoError(t, err)
	email := "tm-" + uuid.NewString()[:8] + "@example.com"
	member, _, err := testStore.RegisterMember(context.Background(), email, hash, "Team Mate", "", nil)
	require.NoError(t, err)
	r := ts.call(t, "POST", "/api/v1/team-members/", map[string]string{"email": email, "role": string(role)}, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	tok, _, err := ts.issueToken(member)
	require.NoError(t, err)
	return member, append(bearer(tok), "X-Environment", "TEST", "X-Merchant-Id", acct.Merchant.ID.String())
}

// refusesApprovalByOthers checks that what waits at path (a payout or a batch) may not be
// approved by its creator (403 self_approval_forbidden), by an API key (403 dashboard_only) or by
// a viewer (403 role_forbidden).
func (ps *paymentStack) refusesApprovalByOthers(t *testing.T, path string, acct *account, creator, viewer []string) {
	t.Helper()
	for _, c := range []struct {
		headers []string
		code    string
	}{{creator, "self_approval_forbidden"}, {acct.key(sika.EnvironmentTest, sika.ScopeBoth), "dashboard_only"}, {viewer, "role_forbidden"}} {
		r := ps.call(t, "POST", path+"/approve/", nil, c.headers...)
		require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
		assert.Equal(t, c.code, r.code())
	}
}

func TestMerchantRolesAreEnforced(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	_, viewer := ts.teammate(t, acct, sika.RoleViewer)
	_, developer := ts.teammate(t, acct, sika.RoleDeveloper)
	_, admin := ts.teammate(t, acct, sika.RoleAdmin)
	key := map[string]string{"name": "ci", "environment": "TEST", "scope": "BOTH"}
	payout := payoutBody("97000123")
	settings := map[string]any{"allow_client_override": true}
	cases := []struct {
		who     string
		headers []string
		method  string
		path    string
		body    any
		want    int
	}{
		{"viewer reads keys", viewer, "GET", "/api/v1/api-keys/", nil, 200},
		{"viewer creates a key", viewer, "POST", "/api/v1/api-keys/", key, 403},
		{"viewer sends a payout", viewer, "POST", "/api/v1/payouts/initialize/", payout, 403},
		{"viewer changes settings", viewer, "PATCH", "/api/v1/merchant-settings/", settings, 403},
		{"viewer creates a link", viewer, "POST", "/api/v1/payment-links/", map[string]any{"name": "x", "amount": "500", "currency": "XOF"}, 403},
		{"developer creates a key", developer, "POST", "/api/v1/api-keys/", key, 201},
		{"developer sends a payout", developer, "POST", "/api/v1/payouts/initialize/", payout, 403},
		{"developer sends a batch", developer, "POST", "/api/v1/payout-batches/", map[string]any{"items": []any{batchItem("a", "1000", "97000123")}}, 403},
		{"developer changes settings", developer, "PATCH", "/api/v1/merchant-settings/", settings, 403},
		{"developer adds a teammate", developer, "POST", "/api/v1/team-members/", map[string]string{"email": "x@example.com", "role": "ADMIN"}, 403},
		{"admin changes settings", admin, "PATCH", "/api/v1/merchant-settings/", settings, 200},
		{"admin creates a key", admin, "POST", "/api/v1/api-keys/", key, 201},
	}
	for _, c := range cases {
		t.Run(c.who, func(t *testing.T) {
			r := ts.call(t, c.method, c.path, c.body, c.headers...)
			require.Equal(t, c.want, r.Status, "%s", r.Body)
			if c.want == 403 {
				assert.Equal(t, "role_forbidden", r.code())
			}
		})
	}
	r := ts.call(t, "GET", "/api/v1/team-members/", nil, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var team []struct {
		Role sika.MembershipRole `json:"role"`
	}
	r.data(t, &team)
	assert.Len(t, team, 4)
}

// TestPayoutBatchApprovalBySecondMember: over the merchant's threshold a batch waits, its total
// held; its creator may not approve it, an API key may not, a second member may; a rejected
// batch releases its hold.
func TestPayoutBatchApprovalBySecondMember(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "20000")
	_, admin := ps.teammate(t, acct, sika.RoleAdmin)
	_, viewer := ps.teammate(t, acct, sika.RoleViewer)
	r := ps.call(t, "PATCH", "/api/v1/merchant-settings/", map[string]any{"payout_approval_threshold": "5000", "approval_window_hours": 2},
		acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	small := ps.createBatch(t, acct, batchOf(2, "1000", "123"))
	require.Equal(t, http.StatusCreated, small.Status, "%s", small.Body)
	var sb sika.PayoutBatch
	small.data(t, &sb)
	assert.Equal(t, sika.BatchProcessing, sb.Status, "under the threshold: no approval")

	// Created by the owner's dashboard session: 6,000 > 5,000.
	r = ps.call(t, "POST", "/api/v1/payout-batches/", batchOf(3, "2000", "123"), acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var b sika.PayoutBatch
	r.data(t, &b)
	require.Equal(t, sika.BatchAwaitingApproval, b.Status)
	require.NotNil(t, b.ApprovalExpiresAt)
	assert.WithinDuration(t, time.Now().Add(2*time.Hour), *b.ApprovalExpiresAt, time.Minute)
	require.Eventually(t, func() bool { return ps.batch(t, acct, sb.ID).Status.Final() }, 60*time.Second, 200*time.Millisecond)
	available, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "12000.00", available, "what waits holds its money (20,000 − 2,000 paid − 6,000 waiting)")
	assert.Equal(t, "6000.00", pending)

	path := "/api/v1/payout-batches/" + b.ID.String()
	ps.refusesApprovalByOthers(t, path, acct, acct.dashboard(sika.EnvironmentTest), viewer)
	r = ps.call(t, "POST", path+"/approve/", map[string]string{"note": "checked the list"}, admin...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var approved sika.PayoutBatch
	r.data(t, &approved)
	assert.Equal(t, sika.BatchProcessing, approved.Status)
	require.NotNil(t, approved.DecidedBy)
	r = ps.call(t, "POST", path+"/reject/", nil, admin...)
	assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	assert.Equal(t, "not_awaiting_approval", r.code())
	ended := ps.endedBatch(t, acct, b.ID, 90*time.Second)
	assert.Equal(t, sika.BatchCompleted, ended.Status)

	// A batch by API key has no member behind it: any approver may decide it; rejected, it
	// releases its hold.
	r = ps.createBatch(t, acct, batchOf(3, "2000", "123"))
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var byKey sika.PayoutBatch
	r.data(t, &byKey)
	require.Equal(t, sika.BatchAwaitingApproval, byKey.Status)
	r = ps.call(t, "POST", "/api/v1/payout-batches/"+byKey.ID.String()+"/reject/", map[string]string{"note": "wrong list"}, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var rejected sika.PayoutBatch
	r.data(t, &rejected)
	assert.Equal(t, sika.BatchRejected, rejected.Status)
	n, sum := progressOf(rejected, sika.ItemCancelled)
	assert.Equal(t, 3, n)
	assert.Equal(t, "6000.00", sum)
	available, pending = walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "12000.00", available, "20,000 − 2,000 − 6,000 paid; the rejected 6,000 released")
	assert.Equal(t, "0.00", pending)
}

// TestPayoutApprovalBySecondMember: over the merchant's threshold a single payout waits
// AWAITING_APPROVAL, its money held and nothing sent; its creator, an API key and a viewer may
// not approve it, a second member may, and it is then sent. A rejected payout, and one nobody
// approves in time, end FAILED (approval_rejected, approval_expired) with their hold released.
func TestPayoutApprovalBySecondMember(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "50000")
	_, admin := ps.teammate(t, acct, sika.RoleAdmin)
	_, viewer := ps.teammate(t, acct, sika.RoleViewer)
	owner := acct.dashboard(sika.EnvironmentTest)
	r := ps.call(t, "PATCH", "/api/v1/merchant-settings/", map[string]any{"payout_approval_threshold": "5000", "approval_window_hours": 2}, owner...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	create := func(amount string, headers ...string) sika.Transaction {
		t.Helper()
		body := payoutBody("97000123")
		body["amount"] = amount
		r := ps.call(t, "POST", "/api/v1/payouts/initialize/", body, headers...)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var tx sika.Transaction
		r.data(t, &tx)
		return tx
	}
	held := func() string { _, pending := walletFigures(ps.wallet(t, acct)); return pending }

	small := create("1000", acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	assert.Equal(t, sika.StatusPending, small.Status, "under the threshold: no approval")
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, small.ID, 60*time.Second).Status)

	// Requested from the owner's dashboard session: 6,000 > 5,000.
	big := create("6000", owner...)
	require.Equal(t, sika.StatusAwaitingApproval, big.Status)
	assert.Equal(t, sika.FormatAmount(big.DebitedAmount.Decimal), held(), "what waits holds its money")
	time.Sleep(2 * time.Second)
	d := ps.detail(t, acct, big.ID)
	assert.Equal(t, sika.StatusAwaitingApproval, d.Status, "nothing is sent before the approval")
	assert.Empty(t, d.Attempts)
	require.Len(t, d.StatusLogs, 1)
	assert.Contains(t, d.StatusLogs[0].Reason, "approval threshold of 5000.00 XOF")

	path := "/api/v1/payouts/" + big.ID.String()
	ps.refusesApprovalByOthers(t, path, acct, owner, viewer)
	c := dashLoggedIn(t, ps.url, acct)
	require.Equal(t, http.StatusSeeOther, c.Do(t, http.MethodPost, "/dashboard/environment/", url.Values{"csrf_token": {c.csrf(t)}, "environment": {"TEST"}}).Status)
	form := c.Do(t, http.MethodPost, "/dashboard/transactions/"+big.ID.String()+"/approve/", url.Values{"csrf_token": {c.csrf(t)}})
	assert.Equal(t, http.StatusUnprocessableEntity, form.Status, "the dashboard refuses its own requester (a refused form is 422)")
	assert.Contains(t, form.Body, "un autre membre doit l&#39;approuver")
	r = ps.call(t, "POST", "/api/v1/payouts/"+small.ID.String()+"/approve/", nil, admin...)
	require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	assert.Equal(t, "not_awaiting_approval", r.code())
	r = ps.call(t, "POST", path+"/approve/", map[string]string{"note": "checked the invoice"}, admin...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var approved sika.Transaction
	r.data(t, &approved)
	assert.Equal(t, sika.StatusPending, approved.Status)
	r = ps.call(t, "POST", path+"/reject/", nil, admin...)
	assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	assert.Equal(t, "not_awaiting_approval", r.code())
	sent := ps.final(t, acct, big.ID, 60*time.Second)
	assert.Equal(t, sika.StatusSuccess, sent.Status)
	require.GreaterOrEqual(t, len(sent.StatusLogs), 3)
	assert.Equal(t, sika.StatusAwaitingApproval, *sent.StatusLogs[1].FromStatus)
	assert.Contains(t, sent.StatusLogs[1].Reason, "checked the invoice")
	assert.Equal(t, "0.00", held())

	// By API key there is no member behind it: the owner may decide it. Rejected, it fails and
	// its hold is released.
	byKey := create("7000", acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	require.Equal(t, sika.StatusAwaitingApproval, byKey.Status)
	r = ps.call(t, "POST", "/api/v1/payouts/"+byKey.ID.String()+"/reject/", map[string]string{"note": "unknown beneficiary"}, owner...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var rejected sika.Transaction
	r.data(t, &rejected)
	assert.Equal(t, sika.StatusFailed, rejected.Status)
	assert.Equal(t, sika.FailureApprovalRejected, rejected.FailureCode)
	assert.Equal(t, "0.00", held(), "the rejected payout's hold is released")
	assert.Empty(t, ps.detail(t, acct, byKey.ID).Attempts, "a rejected payout never reached an operator")

	// Not approved in time: its workflow ends it at the approval's end.
	late := create("8000", acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	require.Equal(t, sika.StatusAwaitingApproval, late.Status)
	_, err := testStore.Pool().Exec(context.Background(), `UPDATE payout_approvals SET expires_at = now() - interval '1 second' WHERE transaction_id = $1`, late.ID)
	require.NoError(t, err)
	r = ps.call(t, "POST", "/api/v1/payouts/"+late.ID.String()+"/approve/", nil, admin...)
	require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	assert.Equal(t, "not_awaiting_approval", r.code())
	// Wake its workflow (which may have read the past expiry by itself and ended already).
	_ = ps.temporal.SignalWorkflow(context.Background(), "payout:"+late.ID.String(), "", "payout-approval-decided", nil)
	expired := ps.final(t, acct, late.ID, 60*time.Second)
	assert.Equal(t, sika.StatusFailed, expired.Status)
	assert.Equal(t, sika.FailureApprovalExpired, expired.FailureCode)
	assert.Equal(t, sika.TriggerSystem, expired.StatusLogs[len(expired.StatusLogs)-1].TriggeredBy)
	assert.Equal(t, "0.00", held())
	available, _ := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, sika.FormatAmount(decimal.RequireFromString("50000").Sub(small.DebitedAmount.Decimal).Sub(big.DebitedAmount.Decimal)), available,
		"only the two payouts sent left the wallet")
}
