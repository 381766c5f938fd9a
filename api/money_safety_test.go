package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// Issue 17, case 2, end to end on the sandbox: a push the customer approves only after the push
// lifetime (suffix 011: the cancel is refused, the success comes later with its signed callback)
// is recorded FAILED expired, cannot be retried while it may still be paid, and is then
// reconciled FAILED -> SUCCESS, credited once, with transaction.succeeded.
func TestLateSuccessIsReconciledEndToEnd(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	p := ps.pay(t, acct, benin("97000011"))

	expired := ps.final(t, acct, p.ID, 15*time.Second)
	require.Equal(t, sika.StatusFailed, expired.Status)
	assert.Equal(t, "expired", expired.FailureCode)
	require.Len(t, expired.Attempts, 1)
	assert.Equal(t, "CANCEL_UNCLEAR", expired.Attempts[0].LastAnswer, "the sandbox refused the cancel")

	r := ps.call(t, "POST", "/api/v1/payments/"+p.ID.String()+"/retry/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
	assert.Equal(t, "outcome_unresolved", r.code(), "a retry could charge the customer twice")

	var d sika.TransactionDetail
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d = ps.detail(t, acct, p.ID)
		assert.Equal(c, sika.StatusSuccess, d.Status)
	}, 20*time.Second, 100*time.Millisecond, "the late success is reconciled")
	logs := triggers(d)
	require.Len(t, logs, 3, "%v", logs)
	assert.Equal(t, "PENDING>FAILED/SYSTEM", logs[1])
	assert.Equal(t, "FAILED>SUCCESS/SYSTEM", logs[2])
	assert.True(t, strings.HasPrefix(d.StatusLogs[2].Reason, "Reconciled: sandbox-a reported attempt"), d.StatusLogs[2].Reason)
	assert.Equal(t, "", d.FailureCode)
	require.Len(t, ps.operations(d), 1)
	assert.Equal(t, 1, ps.operations(d)[0].Pushes, "one push, never a second charge")

	credits := 0
	for _, e := range ps.ledger(t, acct) {
		if e.Type == sika.LedgerCollection {
			credits++
		}
	}
	assert.Equal(t, 1, credits, "credited once")
	var events int
	require.NoError(t, testStore.Pool().QueryRow(t.Context(),
		`SELECT count(*) FROM events WHERE transaction_id = $1 AND type = 'transaction.succeeded'`, p.ID).Scan(&events))
	assert.Equal(t, 1, events, "the merchant's webhook tells them")
}
