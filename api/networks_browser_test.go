package api

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/store"
)

// TestDashboardNetworksInBrowser: the dashboard's networks page shows each network's
// availability as GET /networks/ computes it (a LIVE network without a gateway is down; in
// TEST, a network one of whose gateways refused three requests in a row is degraded; networks
// no other test of the package pays on), in
// French and English, and predicts the network of a number typed in its form.
func TestDashboardNetworksInBrowser(t *testing.T) {
	ts := availabilityServer(t)
	acct := ts.newAccount(t, true)
	moov, err := testStore.NetworkByCode(t.Context(), "MOOV_GA")
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		recordAnswer(t, acct, moov, sandbox.GatewayA, store.AttemptUpdate{Status: sika.AttemptFailed,
			FailureCode: gateway.FailureGatewayUnavailable, FailureMessage: "The gateway did not accept the request."})
	}
	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)

	status := func(code string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#network-`+code+`").dataset.status`))
		require.NoError(t, err)
		return s
	}

	// LIVE: the test deployment has no operator gateway.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ts.url+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		fillDashboardLogin(acct),
		chromedp.WaitVisible(chromedp.CSS(`#nav-networks`)),
		press(`#nav-networks`),
		chromedp.WaitVisible(chromedp.CSS(`#network-table`)),
	))
	assert.Equal(t, "Réseaux", innerText(t, ctx, "h1"))
	assert.Equal(t, "down", status("MTN_BJ"))
	assert.Contains(t, innerText(t, ctx, "#network-MTN_BJ"), "Hors service")
	assert.Contains(t, innerText(t, ctx, "#network-MTN_BJ"), "aucune passerelle")
	screenshot(t, ctx, dir, "01-live")

	// TEST: the sandbox's two gateways; sandbox-a refused Moov Gabon's last three requests.
	require.NoError(t, chromedp.Do(ctx,
		press(`#env-switch`),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge.env-test`)),
		chromedp.WaitVisible(chromedp.CSS(`#network-table`)),
	))
	assert.Equal(t, "operational", status("EXPRESSO_SN"))
	assert.Contains(t, innerText(t, ctx, "#network-EXPRESSO_SN"), "Opérationnel")
	assert.Equal(t, "degraded", status("MOOV_GA"))
	assert.Contains(t, innerText(t, ctx, "#network-MOOV_GA"), "Dégradé")
	assert.Contains(t, innerText(t, ctx, "#network-MOOV_GA"), "une passerelle en panne")
	screenshot(t, ctx, dir, "02-test")

	// Which network is this number?
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#predict-country`), "CI"),
		chromedp.SendKeys(chromedp.CSS(`#predict-phone`), "07 07 12 34 56"),
		press(`#predict-submit`),
		chromedp.WaitVisible(chromedp.CSS(`#prediction`)),
	))
	assert.Contains(t, innerText(t, ctx, "#predicted-network"), "ORANGE_CI")
	assert.Contains(t, innerText(t, ctx, "#predicted-confidence"), "moyenne")
	assert.Contains(t, innerText(t, ctx, "#predicted-alternatives"), "WAVE_CI")
	screenshot(t, ctx, dir, "03-prediction")

	// A number the plans cannot read is said beside the field.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#predict-phone`), "07 07 12 34 5x"),
		press(`#predict-submit`),
		chromedp.WaitVisible(chromedp.CSS(`#predict-phone-error`)),
	))
	assert.NotEmpty(t, innerText(t, ctx, "#predict-phone-error"))

	// In English.
	require.NoError(t, chromedp.Do(ctx,
		press(`#switch-lang`),
		chromedp.WaitVisible(chromedp.CSS(`#network-table`)),
	))
	assert.Equal(t, "Networks", innerText(t, ctx, "h1"))
	assert.Contains(t, innerText(t, ctx, "#network-MOOV_GA"), "Degraded")
	assert.Contains(t, innerText(t, ctx, "#network-EXPRESSO_SN"), "Operational")
	screenshot(t, ctx, dir, "04-english")

	assert.Empty(t, problems.get(), "the browser reported no error (a CSP violation would be one)")
}

// TestHostedPagePreselectsNetworkInBrowser: on the hosted checkout page the network is
// preselected from the number the customer types (its country too, from a calling code), until
// the customer picks one; the payment then goes through on it.
func TestHostedPagePreselectsNetworkInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	checked := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("input[name=network]:checked") || {}).value || ""`))
		require.NoError(t, err)
		return s
	}

	c := ps.newSession(t, acct, map[string]any{"country": "CI"})
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(c.CheckoutURL),
		chromedp.WaitVisible(chromedp.CSS("#pay-form")),
		chromedp.SendKeys(chromedp.CSS("#customer_phone"), "05 05 12 34 56"),
		chromedp.WaitVisible(chromedp.CSS(`#network-hint`)),
	))
	assert.Equal(t, "MTN_CI", checked())
	assert.Contains(t, textOf(t, ctx, "#network-hint"), "MTN")
	screenshot(t, ctx, dir, "preselected")

	// A number with another country's calling code moves the country too.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(wait,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("customer_phone").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#customer_phone"), "+229 01 97 00 01 23"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=network][value=MTN_BJ]:checked`)),
	))
	country, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("country").value`))
	require.NoError(t, err)
	assert.Equal(t, "BJ", country)

	// The customer's own choice is kept whatever is typed next.
	require.NoError(t, chromedp.Do(ctx,
		press(`input[name=network][value=MOOV_BJ]`),
		chromedp.SendKeys(chromedp.CSS("#customer_phone"), "4"),
		chromedp.Sleep(time.Second),
	))
	assert.Equal(t, "MOOV_BJ", checked())
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("network-hint").hidden`))
	require.NoError(t, err)
	assert.True(t, hidden, "the hint goes with the customer's own choice")

	// Back to the predicted network, and pay on it.
	require.NoError(t, chromedp.Do(ctx,
		press(`input[name=network][value=MTN_BJ]`),
		chromedp.SetValue(chromedp.CSS("#customer_phone"), "+2290197000123"),
		press("#pay-button"),
		chromedp.WaitVisible(chromedp.CSS("#success-screen")),
	))
	assert.Equal(t, sika.CheckoutPaid, ps.session(t, acct, c.ID).Status)
	// The hosted pages have no icon: the browser's own request for one is not the page's.
	reported := slices.DeleteFunc(problems.get(), func(p string) bool { return strings.HasSuffix(p, "/favicon.ico") })
	assert.Empty(t, reported, "the browser reported no error (a CSP violation would be one)")
}
