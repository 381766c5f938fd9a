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

// staffSession is a staff member of a role with the headers of its API session.
func (ts *testServer) staffSession(t *testing.T, role sika.StaffRole) (sika.Member, []string) {
	t.Helper()
	m := newStaffWithRole(t, role)
	tok, _, err := ts.issueToken(m)
	require.NoError(t, err)
	return m, bearer(tok)
}

// TestStaffRoleBoundaries: every staff write of the API needs its least role; below it the
// answer is 403 role_forbidden, at or above it the route goes on (here to 404: the ids are
// unknown). Every role reads.
func TestStaffRoleBoundaries(t *testing.T) {
	ts := newTestServer(t)
	unknown := uuid.NewString()
	writes := []struct {
		method, path string
		body         any
		least        sika.StaffRole
	}{
		{"POST", "/api/v1/admin/transactions/" + unknown + "/reverify/", nil, sika.StaffSupportAgent},
		{"POST", "/api/v1/admin/transactions/" + unknown + "/resolve/", map[string]string{"status": "FAILED", "reason": "r"}, sika.StaffSupportAgent},
		{"POST", "/api/v1/admin/merchant-kyc/" + unknown + "/approve/", map[string]string{"review_note": "ok"}, sika.StaffSupportAgent},
		{"POST", "/api/v1/admin/merchant-kyc/" + unknown + "/reject/", map[string]string{"review_note": "no"}, sika.StaffSupportAgent},
		{"POST", "/api/v1/admin/merchants/" + unknown + "/suspend/", nil, sika.StaffSupportAgent},
		{"POST", "/api/v1/admin/merchants/" + unknown + "/unsuspend/", nil, sika.StaffMoneyApprover},
		{"PATCH", "/api/v1/admin/merchant-payout-methods/" + unknown + "/", map[string]bool{"is_verified": true}, sika.StaffMoneyApprover},
		{"POST", "/api/v1/admin/money-flags/" + unknown + "/refund/", map[string]string{"reason": "r"}, sika.StaffSupportAgent},
		{"POST", "/api/v1/admin/money-flags/" + unknown + "/settle/", map[string]string{"status": "FAILED", "reason": "r"}, sika.StaffSupportAgent},
		{"POST", "/api/v1/admin/money-decisions/" + unknown + "/approve/", nil, sika.StaffMoneyApprover},
		{"POST", "/api/v1/admin/money-decisions/" + unknown + "/reject/", map[string]string{"note": "no"}, sika.StaffMoneyApprover},
	}
	reads := []string{"/api/v1/admin/transactions/stuck/", "/api/v1/admin/payouts/unclear/", "/api/v1/admin/money-flags/",
		"/api/v1/admin/merchant-kyc/", "/api/v1/admin/money-decisions/?status=ALL"}
	for _, role := range sika.StaffRoles {
		_, h := ts.staffSession(t, role)
		for _, w := range writes {
			r := ts.call(t, w.method, w.path, w.body, h...)
			if role.Can(sika.PermRead) && roleAtLeast(role, w.least) {
				assert.Equal(t, http.StatusNotFound, r.Status, "%s: %s %s: %s", role, w.method, w.path, r.Body)
			} else {
				assert.Equal(t, http.StatusForbidden, r.Status, "%s: %s %s: %s", role, w.method, w.path, r.Body)
				assert.Equal(t, "role_forbidden", r.code(), "%s: %s %s", role, w.method, w.path)
			}
		}
		for _, path := range reads {
			assert.Equal(t, http.StatusOK, ts.call(t, "GET", path, nil, h...).Status, "%s reads %s", role, path)
		}
	}
}

func roleAtLeast(r, least sika.StaffRole) bool {
	for _, s := range sika.StaffRoles {
		if s == least {
			return true
		}
		if s == r {
			return false
		}
	}
	return false
}

// TestTwoPersonRule: a money decision is proposed by one staff member and decided by another.
// An agent proposes but cannot approve; nobody approves or rejects their own proposal, even an
// admin; one proposal waits per payout; a decided proposal cannot be decided again, even by two
// approvers at once; each step is a staff action naming its author. (The approval that applies
// a resolution runs against Temporal in TestUnclearPayoutSupport.)
func TestTwoPersonRule(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	payout := historyRow{Merchant: acct.Merchant.ID, Type: sika.TypePayout, Status: sika.StatusPending, CreatedAt: time.Now().UTC()}
	insertHistoryRow(t, &payout)
	agent, agentH := ts.staffSession(t, sika.StaffSupportAgent)
	admin, adminH := ts.staffSession(t, sika.StaffAdmin)
	approver, approverH := ts.staffSession(t, sika.StaffMoneyApprover)
	_, readOnlyH := ts.staffSession(t, sika.StaffSupportReadOnly)
	resolve := "/api/v1/admin/transactions/" + payout.ID.String() + "/resolve/"
	body := map[string]string{"status": "FAILED", "reason": "The operator's statement shows no transfer."}

	r := ts.call(t, "POST", resolve, body, readOnlyH...)
	assert.Equal(t, "role_forbidden", r.code(), "read-only proposes nothing")

	r = ts.call(t, "POST", resolve, body, agentH...)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	var d store.MoneyDecision
	r.data(t, &d)
	assert.Equal(t, store.DecisionPending, d.Status)
	assert.Equal(t, agent.ID, d.ProposedBy)
	assert.Equal(t, agent.Email, d.ProposedByEmail)
	assert.Equal(t, sika.StatusFailed, d.RequestedStatus)
	tx, err := testStore.Transaction(t.Context(), payout.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.StatusPending, tx.Status, "a proposal changes nothing")

	r = ts.call(t, "POST", resolve, body, adminH...)
	assert.Equal(t, http.StatusBadRequest, r.Status, "one proposal waits per payout: %s", r.Body)
	assert.Contains(t, r.fields(), "non_field_errors")

	approve := "/api/v1/admin/money-decisions/" + d.ID.String() + "/approve/"
	reject := "/api/v1/admin/money-decisions/" + d.ID.String() + "/reject/"
	assert.Equal(t, "role_forbidden", ts.call(t, "POST", approve, nil, agentH...).code(), "an agent cannot approve, not even another's")

	var list []store.MoneyDecision
	ts.call(t, "GET", "/api/v1/admin/money-decisions/", nil, readOnlyH...).data(t, &list)
	assert.True(t, containsDecision(list, d.ID), "waiting, listed for everyone")

	// An admin's own proposal: neither approved nor rejected by that admin.
	other := historyRow{Merchant: acct.Merchant.ID, Type: sika.TypePayout, Status: sika.StatusPending, CreatedAt: time.Now().UTC()}
	insertHistoryRow(t, &other)
	r = ts.call(t, "POST", "/api/v1/admin/transactions/"+other.ID.String()+"/resolve/", body, adminH...)
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	var own store.MoneyDecision
	r.data(t, &own)
	r = ts.call(t, "POST", "/api/v1/admin/money-decisions/"+own.ID.String()+"/approve/", nil, adminH...)
	assert.Equal(t, http.StatusForbidden, r.Status)
	assert.Equal(t, "self_approval_forbidden", r.code())
	r = ts.call(t, "POST", "/api/v1/admin/money-decisions/"+own.ID.String()+"/reject/", map[string]string{"note": "mine"}, adminH...)
	assert.Equal(t, "self_approval_forbidden", r.code())

	// The approver rejects the agent's proposal, with a note (required).
	r = ts.call(t, "POST", reject, map[string]string{"note": "  "}, approverH...)
	assert.Equal(t, http.StatusBadRequest, r.Status)
	assert.Contains(t, r.fields(), "note")
	r = ts.call(t, "POST", reject, map[string]string{"note": "Ask the operator for the statement first."}, approverH...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.data(t, &d)
	assert.Equal(t, store.DecisionRejected, d.Status)
	require.NotNil(t, d.DecidedBy)
	assert.Equal(t, approver.ID, *d.DecidedBy)
	r = ts.call(t, "POST", approve, nil, adminH...)
	assert.Equal(t, http.StatusConflict, r.Status)
	assert.Equal(t, "not_awaiting_approval", r.code())
	tx, err = testStore.Transaction(t.Context(), payout.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.StatusPending, tx.Status, "a rejection changes nothing")

	var actions []store.StaffActionRecord
	ts.call(t, "GET", "/api/v1/admin/transactions/"+payout.ID.String()+"/staff-actions/", nil, readOnlyH...).data(t, &actions)
	byAction := map[string]string{}
	for _, a := range actions {
		byAction[a.Action] = a.StaffEmail
	}
	assert.Equal(t, agent.Email, byAction[store.ActionDecisionProposed])
	assert.Equal(t, approver.Email, byAction[store.ActionDecisionRejected])

	// Two approvers deciding the admin's proposal at once: one decision is recorded.
	_, approver2H := ts.staffSession(t, sika.StaffMoneyApprover)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, h := range [][]string{approverH, approver2H} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = ts.call(t, "POST", "/api/v1/admin/money-decisions/"+own.ID.String()+"/reject/", map[string]string{"note": "both at once"}, h...).Status
		}()
	}
	wg.Wait()
	assert.ElementsMatch(t, []int{http.StatusOK, http.StatusConflict}, codes)
	ts.call(t, "GET", "/api/v1/admin/transactions/"+other.ID.String()+"/staff-actions/", nil, readOnlyH...).data(t, &actions)
	assert.Len(t, actionsNamed(actions, store.ActionDecisionRejected), 1)
	_ = admin
}

func containsDecision(list []store.MoneyDecision, id uuid.UUID) bool {
	for _, d := range list {
		if d.ID == id {
			return true
		}
	}
	return false
}

// TestConsoleRoles: the console shows each role only the actions it allows and refuses the others
// (403, in the page's language); only an admin manages the staff, audited, and the last admin
// keeps the role.
func TestConsoleRoles(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	login := func(role sika.StaffRole) (*dashClient, sika.Member) {
		m := newStaffWithRole(t, role)
		c := newDashClient(t, ts.url)
		require.Equal(t, http.StatusSeeOther, c.consoleLogin(t, m.Email, "correct horse battery").Status)
		return c, m
	}
	merchantPage := "/console/merchants/" + acct.Merchant.ID.String() + "/"

	ro, _ := login(sika.StaffSupportReadOnly)
	page := ro.Get(t, merchantPage)
	require.Equal(t, http.StatusOK, page.Status)
	assert.Contains(t, page.Body, "Support (lecture seule)", "the role is shown")
	assert.NotContains(t, page.Body, `id="suspend"`, "no action a read-only role cannot take")
	assert.NotContains(t, ro.Get(t, "/console/").Body, `id="nav-staff"`)
	r := ro.Do(t, http.MethodPost, merchantPage+"suspend/", url.Values{"csrf_token": {ro.consoleCSRF(t)}})
	assert.Equal(t, http.StatusForbidden, r.Status)
	assert.Contains(t, r.Body, "Votre rôle ne permet pas cette action.")
	r = ro.Get(t, "/console/staff/", "Accept-Language", "en")
	assert.Equal(t, http.StatusForbidden, r.Status)
	assert.Contains(t, r.Body, "Your role does not allow this action.")

	agent, _ := login(sika.StaffSupportAgent)
	page = agent.Get(t, merchantPage)
	assert.Contains(t, page.Body, `id="suspend"`)
	assert.Contains(t, page.Body, `id="suspend-reason"`, "a suspension says why")
	r = agent.Do(t, http.MethodPost, merchantPage+"suspend/", url.Values{"csrf_token": {agent.consoleCSRF(t)}, "reason": {"Chargebacks reported by the operator"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	logged, err := testStore.StaffActions(t.Context(), uuid.Nil, 500)
	require.NoError(t, err)
	found := false
	for _, a := range logged {
		found = found || (a.Action == store.StaffActionMerchantSuspended && a.Reason == "Chargebacks reported by the operator")
	}
	assert.True(t, found, "the support log keeps the reason")
	page = agent.Get(t, merchantPage)
	assert.NotContains(t, page.Body, `id="unsuspend"`, "reinstating is for a money approver")
	r = agent.Do(t, http.MethodPost, merchantPage+"unsuspend/", url.Values{"csrf_token": {agent.consoleCSRF(t)}})
	assert.Equal(t, http.StatusForbidden, r.Status)

	approver, _ := login(sika.StaffMoneyApprover)
	assert.Contains(t, approver.Get(t, merchantPage).Body, `id="unsuspend"`)
	r = approver.Do(t, http.MethodPost, merchantPage+"unsuspend/", url.Values{"csrf_token": {approver.consoleCSRF(t)}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)

	// Staff management: admins only, audited; the last admin stays.
	admin, adminMember := login(sika.StaffAdmin)
	page = admin.Get(t, "/console/staff/")
	require.Equal(t, http.StatusOK, page.Status, page.Body)
	assert.Contains(t, page.Body, adminMember.Email)
	csrf := admin.consoleCSRF(t)
	// A member of a merchant's team gets no staff role: staff decide on merchants.
	r = admin.Do(t, http.MethodPost, "/console/staff/role/", url.Values{"csrf_token": {csrf}, "email": {acct.Member.Email}, "role": {"SUPPORT_READONLY"}}, "Accept-Language", "en")
	assert.Equal(t, http.StatusBadRequest, r.Status, r.Body)
	assert.Contains(t, r.Body, "email: This person belongs to a merchant&#39;s team.", "the page says why")
	m, _, err := testStore.MemberByEmail(t.Context(), acct.Member.Email)
	require.NoError(t, err)
	assert.False(t, m.IsStaff, "the merchant's member is still no staff")
	hash, err := sika.HashPassword("correct horse battery")
	require.NoError(t, err)
	person, _, err := testStore.RegisterMember(t.Context(), "person-"+uuid.NewString()[:8]+"@sika.example", hash, "Person", "", nil)
	require.NoError(t, err)
	r = admin.Do(t, http.MethodPost, "/console/staff/role/", url.Values{"csrf_token": {csrf}, "email": {person.Email}, "role": {"SUPPORT_READONLY"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	m, _, err = testStore.MemberByEmail(t.Context(), person.Email)
	require.NoError(t, err)
	assert.Equal(t, sika.StaffSupportReadOnly, m.StaffRole)
	r = admin.Do(t, http.MethodPost, "/console/staff/role/", url.Values{"csrf_token": {csrf}, "email": {person.Email}, "role": {"NONE"}})
	require.Equal(t, http.StatusSeeOther, r.Status, r.Body)
	m, _, err = testStore.MemberByEmail(t.Context(), person.Email)
	require.NoError(t, err)
	assert.False(t, m.IsStaff)
	actions, err := testStore.StaffActions(t.Context(), uuid.Nil, 500)
	require.NoError(t, err)
	changes := 0
	for _, a := range actions {
		if a.Action == store.ActionStaffRoleChanged && a.Staff == adminMember.ID {
			changes++
		}
	}
	assert.Equal(t, 2, changes, "each change is audited")
	r = ro.Do(t, http.MethodPost, "/console/staff/role/", url.Values{"csrf_token": {ro.consoleCSRF(t)}, "email": {person.Email}, "role": {"ADMIN"}})
	assert.Equal(t, http.StatusForbidden, r.Status, "only an admin gives roles")

	// The last admin cannot be demoted (store.SetStaffRole counts the admins under lock).
	admins, err := testStore.StaffMembers(t.Context())
	require.NoError(t, err)
	for _, a := range admins {
		if a.StaffRole == sika.StaffAdmin && a.ID != adminMember.ID {
			_, err := testStore.SetStaffRole(t.Context(), a.Email, sika.StaffSupportReadOnly, adminMember)
			require.NoError(t, err)
		}
	}
	_, err = testStore.SetStaffRole(t.Context(), adminMember.Email, sika.StaffSupportAgent, adminMember)
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "the last admin: %v", err)
}
