package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// TestDashboardPayoutApprovalInBrowser: a payout over the merchant's threshold shows on its
// page as awaiting approval with Approve and Reject; its creator's approval is refused on the
// page, a second member approves it (it is sent) and rejects another (its hold is released).
func TestDashboardPayoutApprovalInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "50000")
	dir := artifactsDir(t)
	r := ps.call(t, "PATCH", "/api/v1/merchant-settings/", map[string]any{"payout_approval_threshold": "5000"}, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	second := ps.teammateAccount(t, acct, sika.RoleAdmin)
	create := func(headers ...string) sika.Transaction {
		t.Helper()
		body := payoutBody("97000123")
		body["amount"] = "6000"
		r := ps.call(t, "POST", "/api/v1/payouts/initialize/", body, headers...)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		var tx sika.Transaction
		r.data(t, &tx)
		require.Equal(t, sika.StatusAwaitingApproval, tx.Status)
		return tx
	}
	mine := create(acct.dashboard(sika.EnvironmentTest)...)
	byKey := create(acct.key(sika.EnvironmentTest, sika.ScopePayout)...)
	base := ps.url + "/dashboard/"

	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	require.NoError(t, chromedp.Do(ctx,
		signInToTest(base, acct),
		chromedp.Navigate(base+"transactions/"+mine.ID.String()+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#payout-awaiting`)),
	))
	assert.Equal(t, "En attente d'approbation", innerText(t, ctx, "#tx-status"))
	assert.Contains(t, innerText(t, ctx, "#payout-awaiting"), "au plus tard le", "until when it waits")
	assert.Contains(t, innerText(t, ctx, "#payout-awaiting"), "UTC")
	require.NoError(t, chromedp.Do(ctx,
		press(`#approve-payout`),
		chromedp.WaitVisible(chromedp.CSS(`#action-error`)),
	))
	assert.Contains(t, innerText(t, ctx, "#action-error"), "autre membre", "its creator's approval is refused, in French")
	assert.Equal(t, sika.StatusAwaitingApproval, ps.detail(t, acct, mine.ID).Status)
	screenshot(t, ctx, dir, "01-self-approval-refused")

	ctx2 := browserTab(t)
	problems2 := watchPageProblems(t, ctx2)
	require.NoError(t, chromedp.Do(ctx2,
		signInToTest(base, second),
		chromedp.Navigate(base+"transactions/"+mine.ID.String()+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#approve-payout`)),
		press(`#approve-payout`),
		chromedp.WaitVisible(chromedp.CSS(`#action-notice`)),
	))
	assert.NotEqual(t, "En attente d'approbation", innerText(t, ctx2, "#tx-status"))
	screenshot(t, ctx2, dir, "02-approved-by-second-member")
	assert.Equal(t, sika.StatusSuccess, ps.final(t, acct, mine.ID, 30*time.Second).Status)

	require.NoError(t, chromedp.Do(ctx2,
		chromedp.Navigate(base+"transactions/"+byKey.ID.String()+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#reject-payout`)),
		press(`#reject-payout`),
		chromedp.WaitVisible(chromedp.CSS(`#action-notice`)),
	))
	assert.Equal(t, "Échouée", innerText(t, ctx2, "#tx-status"))
	screenshot(t, ctx2, dir, "03-rejected")
	rejected := ps.detail(t, acct, byKey.ID)
	assert.Equal(t, sika.FailureApprovalRejected, rejected.FailureCode)
	_, pending := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "0.00", pending, "nothing is held any more")
	for _, problem := range append(problems.get(), problems2.get()...) { // the refused approval is answered 422
		if !strings.Contains(problem, "422") {
			t.Errorf("the browser reported an error (a CSP violation would be one): %s", problem)
		}
	}
}
