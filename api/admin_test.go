package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

func TestSupportTooling(t *testing.T) {
	ps := payments(t)
	ps.cfg.TemporalUIURL, ps.cfg.TemporalNamespace = "http://temporal-ui.test", "default"
	acct := ps.newAccount(t, true)
	staff := ps.staff(t)
	p := ps.pay(t, acct, benin("97000004")) // never approved by itself
	// The attempt is recorded before it is sent: wait for the sandbox to have the push.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NotEmpty(c, ps.operations(ps.detail(t, acct, p.ID)))
	}, settle, 20*time.Millisecond)

	r := ps.call(t, "GET", "/api/v1/admin/transactions/stuck/?older_than=0s", nil, bearer(acct.Token)...)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "admin_only", r.code())
	r = ps.call(t, "GET", "/api/v1/admin/transactions/stuck/?older_than=0s", nil, acct.key(sika.EnvironmentTest, sika.ScopeBoth)...)
	assert.Equal(t, 403, r.Status)
	r = ps.call(t, "GET", "/api/v1/admin/transactions/stuck/?older_than=soon", nil, staff...)
	assert.Equal(t, 400, r.Status)

	var stuck []stuckTransaction
	ps.call(t, "GET", "/api/v1/admin/transactions/stuck/?older_than=0s&limit=500", nil, staff...).data(t, &stuck)
	var found *stuckTransaction
	for i := range stuck {
		if stuck[i].Transaction.ID == p.ID {
			found = &stuck[i]
		}
	}
	require.NotNil(t, found, "the pending payment is listed")
	assert.Equal(t, "payment:"+p.ID.String(), found.WorkflowID)
	assert.Equal(t, "http://temporal-ui.test/namespaces/default/workflows/payment:"+p.ID.String(), found.WorkflowURL)

	// The customer approved at the operator but nothing told us: staff re-verify.
	attempt := ps.detail(t, acct, p.ID).Attempts[0]
	resp, err := http.Post(ps.sandboxURL()+"/sandbox/pushes/"+attempt.ID.String()+"/approve", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	r = ps.call(t, "POST", "/api/v1/admin/transactions/"+p.ID.String()+"/reverify/", nil, staff...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var rv reverification
	r.data(t, &rv)
	assert.Equal(t, "SUCCESS", rv.GatewayStatus)
	assert.True(t, rv.SentToGateway)
	assert.False(t, rv.Disagreement)
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, p.ID, 5*time.Second).Status)
	actions, err := testStore.StaffActions(t.Context(), p.ID, 10)
	require.NoError(t, err)
	require.Len(t, actions, 1, "the re-verification is audited")
	assert.Equal(t, store.StaffActionReverified, actions[0].Action)
	assert.Equal(t, 404, ps.call(t, "POST", "/api/v1/admin/transactions/7b1c3f2e-0000-4000-8000-000000000000/reverify/", nil, staff...).Status)

	var queue struct{ Count int }
	ps.call(t, "GET", "/api/v1/admin/merchant-kyc/", nil, staff...).data(t, &queue)
	r = ps.call(t, "GET", "/api/v1/admin/merchant-kyc/?status=MAYBE", nil, staff...)
	assert.Equal(t, 400, r.Status)
}
