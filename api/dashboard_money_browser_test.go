package api

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// TestDashboardMoneyInBrowser drives the dashboard's money pages in headless Chromium against
// the whole path (sandbox operator, Temporal, worker): create a payment link, pay it on its
// hosted page as a customer would, see the balance move and the day's volume drawn on the home
// page, send a payout after its fee is shown, and find its hold in the wallet's ledger. A
// screenshot is saved at each step ($SIKA_TEST_ARTIFACTS, or a test directory).
func TestDashboardMoneyInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	base := ps.url + "/dashboard/"

	// 1. Log in and act in TEST.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		fillDashboardLogin(acct),
		chromedp.WaitVisible(chromedp.CSS(`#env-switch`)),
		press(`#env-switch`),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge.env-test`)),
	))

	// 2. A payment link, created from its form; the copy button appears (the script runs).
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-payment-links`),
		chromedp.WaitVisible(chromedp.CSS(`#new-link`)),
		press(`#new-link`),
		chromedp.WaitVisible(chromedp.CSS(`#link-form`)),
		chromedp.SendKeys(chromedp.CSS(`#name`), "Tissu wax"),
		chromedp.SendKeys(chromedp.CSS(`#amount`), "5000"),
		press(`#save-link`),
		chromedp.WaitVisible(chromedp.CSS(`#copy-link`)),
	))
	assert.Equal(t, "Tissu wax", innerText(t, ctx, "#link-heading"))
	linkURL, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#link-url').value`))
	require.NoError(t, err)
	require.Contains(t, linkURL, "/l/")
	require.NoError(t, chromedp.Do(ctx,
		press(`#copy-link`),
		chromedp.WaitVisible(chromedp.CSS(`#link-copied:not(:empty)`)),
	))
	screenshot(t, ctx, dir, "01-payment-link")

	// 3. The customer pays it on the hosted page (in a tab of its own: the hosted page is not
	// the dashboard, whose pages alone are watched for problems here).
	customer, closeCustomer := chromedp.NewContext(ctx)
	defer closeCustomer()
	require.NoError(t, chromedp.Do(customer,
		chromedp.Navigate(linkURL),
		chromedp.WaitVisible(chromedp.CSS(`#pay-form`)),
		chromedp.SetValue(chromedp.CSS(`#customer_name`), "Koffi Mensah"),
		press(`input[name=network][value=MTN_BJ]`),
		chromedp.SetValue(chromedp.CSS(`#customer_phone`), "97000123"),
		press(`#pay-button`),
		chromedp.WaitVisible(chromedp.CSS(`#success-screen`)),
	))
	screenshot(t, customer, dir, "02-link-paid")
	wallet := ps.wallet(t, acct)
	require.True(t, wallet.AvailableAmount.IsPositive(), "the payment was credited")

	// 4. Home: the balance moved, the day's volume is drawn, the success rate is 100 %.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#available-BJ`)),
		chromedp.WaitVisible(chromedp.CSS(`#volume .chart-canvas[data-drawn] canvas`)),
	))
	assert.Equal(t, sika.FormatMoney(wallet.AvailableAmount.Decimal, "XOF", "fr"), innerText(t, ctx, "#available-BJ"))
	assert.Equal(t, "5\u00a0000\u00a0FCFA", innerText(t, ctx, "#collected-XOF"))
	assert.Contains(t, innerText(t, ctx, "#success-rate"), "100,0\u00a0%")
	screenshot(t, ctx, dir, "03-home-balance-chart")

	// 5. A payout: its fee is shown before it is sent.
	fees := ps.quoteFor(t, acct, "1000")
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-payouts`),
		chromedp.WaitVisible(chromedp.CSS(`#payout-form`)),
		chromedp.SetValue(chromedp.CSS(`#method`), "MTN_BJ"),
		chromedp.SendKeys(chromedp.CSS(`#recipient`), "97000123"),
		chromedp.SendKeys(chromedp.CSS(`#amount`), "1000"),
		press(`#preview-payout`),
		chromedp.WaitVisible(chromedp.CSS(`#payout-quote`)),
	))
	assert.Equal(t, sika.FormatMoney(fees.DebitedAmount, "XOF", "fr"), innerText(t, ctx, "#quote-debited"))
	assert.Contains(t, innerText(t, ctx, "#quote-fee"), sika.FormatMoney(fees.ClientFee, "XOF", "fr"))
	screenshot(t, ctx, dir, "04-payout-fee")
	require.NoError(t, chromedp.Do(ctx,
		press(`#confirm-payout`),
		chromedp.WaitVisible(chromedp.CSS(`#tx-status`)),
	))
	assert.Contains(t, innerText(t, ctx, "#tx-amount"), "1\u00a0000\u00a0FCFA")
	screenshot(t, ctx, dir, "05-payout-sent")

	// 6. The wallet's ledger shows the hold, with the balance before and after it.
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-payouts`),
		chromedp.WaitVisible(chromedp.CSS(`#ledger-BJ`)),
		press(`#ledger-BJ`),
		chromedp.WaitVisible(chromedp.CSS(`#ledger tr[data-type="PAYOUT_HOLD"]`)),
	))
	hold := innerText(t, ctx, `#ledger tr[data-type="PAYOUT_HOLD"]`)
	assert.Contains(t, hold, "Réservation pour un décaissement")
	assert.Contains(t, hold, sika.FormatMoney(fees.DebitedAmount.Neg(), "XOF", "fr"))
	assert.Contains(t, hold, sika.FormatMoney(wallet.AvailableAmount.Decimal, "XOF", "fr"), "the balance before the hold")
	screenshot(t, ctx, dir, "06-ledger-hold")

	assert.Empty(t, problems.get(), "the browser reported no error (a CSP violation would be one)")
}
