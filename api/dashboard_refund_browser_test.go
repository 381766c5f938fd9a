package api

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// TestDashboardRefundInBrowser drives the refund of a collection from its transaction page in
// headless Chromium against the whole path (sandbox operator, Temporal, worker): the form comes
// prefilled with what the customer paid, a part is refunded after its fee is shown and
// confirmed, the refund's page links back to the collection, which then shows what was refunded
// and offers the rest; in English too. A screenshot is saved at each step.
func TestDashboardRefundInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	fund(t, acct, "BJ", "MTN_BJ", "5000") // the refund's fee on top of what the collection brought
	p := ps.paidCollection(t, acct, "97104123")
	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	base := ps.url + "/dashboard/"

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		fillDashboardLogin(acct),
		chromedp.WaitVisible(chromedp.CSS(`#env-switch`)),
		press(`#env-switch`),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge.env-test`)),
		chromedp.Navigate(base+"transactions/"+p.ID.String()+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#refund-form`)),
	))
	amount, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#refund-amount').value`))
	require.NoError(t, err)
	assert.Equal(t, p.DebitedAmount.StringFixed(0), amount, "prefilled with what the customer paid")
	assert.Equal(t, "Non remboursé", innerText(t, ctx, "#tx-refund-status"))
	screenshot(t, ctx, dir, "01-refund-form")

	// A part, with a reason: the fee and what leaves the wallet are shown before it is sent.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#refund-amount`), "400"),
		chromedp.SendKeys(chromedp.CSS(`#refund-reason`), "Colis abîmé"),
		press(`#refund-button`),
		chromedp.WaitVisible(chromedp.CSS(`#refund-quote`)),
	))
	assert.Equal(t, sika.FormatMoney(dec("400"), "XOF", "fr"), innerText(t, ctx, "#quote-amount"))
	assert.Contains(t, innerText(t, ctx, "#quote-fee"), sika.FormatMoney(dec("4"), "XOF", "fr"), "the payout price, 1 %")
	assert.Equal(t, sika.FormatMoney(dec("404"), "XOF", "fr"), innerText(t, ctx, "#quote-debited"))
	assert.Equal(t, "le remboursement de l'opérateur", innerText(t, ctx, "#quote-via"))
	screenshot(t, ctx, dir, "02-refund-confirm")

	require.NoError(t, chromedp.Do(ctx,
		press(`#confirm-refund`),
		chromedp.WaitVisible(chromedp.CSS(`#tx-refunded-link`)),
	))
	assert.Contains(t, innerText(t, ctx, "#tx-amount"), "400")
	screenshot(t, ctx, dir, "03-refund-sent")
	refunds := refundsOf(t, p.ID)
	require.Len(t, refunds, 1, "one refund, whatever the clicks")
	require.Equal(t, sika.StatusSuccess, ps.final(t, acct, refunds[0], 20*time.Second).Status)

	// Back on the collection: what was refunded, and the rest offered.
	require.NoError(t, chromedp.Do(ctx,
		press(`#tx-refunded-link`),
		chromedp.WaitVisible(chromedp.CSS(`#refund-form`)),
	))
	assert.Equal(t, "Remboursé en partie", innerText(t, ctx, "#tx-refund-status"))
	assert.Contains(t, innerText(t, ctx, "#tx-refunded"), sika.FormatMoney(dec("400"), "XOF", "fr"))
	amount, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#refund-amount').value`))
	require.NoError(t, err)
	assert.Equal(t, p.DebitedAmount.Sub(dec("400")).StringFixed(0), amount, "the rest is offered")

	// More than is left is refused beside the form, in English.
	require.NoError(t, chromedp.Do(ctx,
		press(`#switch-lang`),
		chromedp.WaitVisible(chromedp.CSS(`html[lang="en"] #refund-form`)),
		chromedp.SetValue(chromedp.CSS(`#refund-amount`), "5000"),
		press(`#refund-button`),
		chromedp.WaitVisible(chromedp.CSS(`#action-error`)),
	))
	assert.Equal(t, "Partly refunded", innerText(t, ctx, "#tx-refund-status"))
	assert.Equal(t, "Refund", innerText(t, ctx, "#refund-heading"))
	assert.True(t, strings.TrimSpace(innerText(t, ctx, "#action-error")) != "")
	screenshot(t, ctx, dir, "04-refund-refused-en")
	assert.Len(t, refundsOf(t, p.ID), 1, "nothing sent")
	for _, problem := range problems.get() { // the refused form is answered 422, as the API's refusal
		if !strings.Contains(problem, "422") || !strings.Contains(problem, "/refund/preview/") {
			t.Errorf("the browser reported an error (a CSP violation would be one): %s", problem)
		}
	}
}
