package api

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway/sandbox"
)

// browserTab starts a headless Debian chromium with a throw-away profile and returns a tab.
// The hosted pages are the customer's whole experience: these tests fail, never skip, when the
// browser is missing.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed; the hosted-page browser tests need it: run scripts/install-deps.sh as root (apt-get install chromium)")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(412, 915),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		// A customer in Cotonou: French first (pages are French unless English is preferred).
		chromedp.Flag("accept-lang", "fr-FR,fr"),
	)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	// The first action starts the browser, whose lifetime is that call's context: no timeout
	// there, only on the steps after it.
	require.NoError(t, chromedp.Do(tab), "start chromium")
	ctx, cancel := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// artifactsDir is where screenshots go: $SIKA_TEST_ARTIFACTS when set, a test directory
// otherwise.
func artifactsDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("SIKA_TEST_ARTIFACTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

// screenshot saves the page and logs where.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err)
	return s
}

func TestHostedCheckoutPageInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	dir := artifactsDir(t)

	t.Run("pays a session and shows success", func(t *testing.T) {
		ctx := browserTab(t)
		c := ps.newSession(t, acct, map[string]any{"country": "BJ", "description": "Commande 42"})
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(c.CheckoutURL),
			chromedp.WaitVisible(chromedp.CSS("#pay-form")),
		))
		assert.Contains(t, textOf(t, ctx, "#merchant-name"), acct.Merchant.Name)
		// Money as people in the region read it (sika.FormatMoney), never the API's "1000.00 XOF".
		assert.Contains(t, textOf(t, ctx, "#amount-display"), "1\u00a0000\u00a0FCFA")
		assert.Equal(t, "Payer 1\u00a0000\u00a0FCFA", textOf(t, ctx, "#pay-button"))
		screenshot(t, ctx, dir, "form")
		require.NoError(t, chromedp.Do(ctx,
			press(`input[name=network][value=MTN_BJ]`),
			chromedp.SetValue(chromedp.CSS("#customer_phone"), "97000123"),
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#success-screen")),
		))
		assert.Contains(t, textOf(t, ctx, "#success-screen h2"), "Paiement réussi", "French for a French-speaking browser")
		screenshot(t, ctx, dir, "success")
		assert.Equal(t, sika.CheckoutPaid, ps.session(t, acct, c.ID).Status)
	})

	t.Run("a declined number shows the failure and a retry succeeds", func(t *testing.T) {
		ctx := browserTab(t)
		c := ps.newSession(t, acct, map[string]any{"country": "BJ"})
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(c.CheckoutURL),
			chromedp.WaitVisible(chromedp.CSS("#pay-form")),
			press(`input[name=network][value=MTN_BJ]`),
			chromedp.SetValue(chromedp.CSS("#customer_phone"), "97000001"),
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#failure-screen")),
			chromedp.WaitVisible(chromedp.CSS("#retry-button")),
		))
		screenshot(t, ctx, dir, "failure")
		assert.Equal(t, sika.CheckoutPending, ps.session(t, acct, c.ID).Status, "a failed payment leaves the session payable")
		require.NoError(t, chromedp.Do(ctx,
			press("#retry-button"),
			chromedp.WaitVisible(chromedp.CSS("#pay-form")),
			chromedp.SetValue(chromedp.CSS("#customer_phone"), "97000123"),
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#success-screen")),
		))
		screenshot(t, ctx, dir, "retry-success")
		assert.Equal(t, sika.CheckoutPaid, ps.session(t, acct, c.ID).Status)
	})

	t.Run("a pre-payment OTP network shows its instructions (English)", func(t *testing.T) {
		ctx := browserTab(t)
		c := ps.newSession(t, acct, map[string]any{"country": "SN", "customer_phone": "770000123"})
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(c.CheckoutURL+"?lang=en"),
			chromedp.WaitVisible(chromedp.CSS("#pay-form")),
			press(`input[name=network][value=ORANGE_SN]`),
			chromedp.WaitVisible(chromedp.CSS("#otp-field")),
		))
		assert.Contains(t, textOf(t, ctx, "#otp-instructions"), "#144#")
		assert.Equal(t, "Pay XOF\u00a01,000", textOf(t, ctx, "#pay-button"))
		screenshot(t, ctx, dir, "otp-instructions")
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS("#otp"), sandbox.ValidOTP),
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#success-screen")),
		))
		assert.Contains(t, textOf(t, ctx, "#success-screen h2"), "Payment successful")
	})

	t.Run("a post-push OTP network asks the code after the push", func(t *testing.T) {
		ctx := browserTab(t)
		c := ps.newSession(t, acct, map[string]any{"country": "TG"})
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(c.CheckoutURL),
			chromedp.WaitVisible(chromedp.CSS("#pay-form")),
			press(`input[name=network][value=MOOV_TG]`),
			chromedp.SetValue(chromedp.CSS("#customer_phone"), "90000123"),
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#otp-screen")),
		))
		screenshot(t, ctx, dir, "post-push-otp")
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS("#push-otp"), sandbox.ValidOTP),
			press("#otp-button"),
			chromedp.WaitVisible(chromedp.CSS("#success-screen")),
		))
	})

	t.Run("a FREE link below min_amount shows the error", func(t *testing.T) {
		ctx := browserTab(t)
		l := ps.newLink(t, acct, map[string]any{"name": "Dons", "amount_type": "FREE", "min_amount": "500", "currency": "XOF", "country": "BJ"})
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(l.URL),
			chromedp.WaitVisible(chromedp.CSS("#pay-form")),
			chromedp.SetValue(chromedp.CSS("#amount"), "100"),
			chromedp.SetValue(chromedp.CSS("#customer_name"), "Koffi Mensah"),
			press(`input[name=network][value=MTN_BJ]`),
			chromedp.SetValue(chromedp.CSS("#customer_phone"), "97000123"),
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#form-error")),
		))
		assert.Contains(t, textOf(t, ctx, "#amount-help"), "500\u00a0FCFA")
		assert.Contains(t, textOf(t, ctx, "#form-error"), "Le montant doit être d'au moins 500\u00a0FCFA.")
		screenshot(t, ctx, dir, "min-amount")
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS("#amount"), "1 000"), // as people here write it
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#success-screen")),
		))
		screenshot(t, ctx, dir, "link-success")
		var pg struct{ Results []sika.Transaction }
		ps.call(t, "GET", "/api/v1/payment-links/"+l.ID.String()+"/transactions/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...).data(t, &pg)
		require.Len(t, pg.Results, 1)
		assert.Equal(t, "1000.00", pg.Results[0].Amount.StringFixed(2))
	})

	t.Run("a FIXED link whose price changed while the page was open names the new price", func(t *testing.T) {
		ctx := browserTab(t)
		l := ps.newLink(t, acct, map[string]any{"name": "Robe", "amount": "1000", "currency": "XOF", "country": "BJ"})
		fill := []chromedp.Action[chromedp.Void]{
			chromedp.WaitVisible(chromedp.CSS("#pay-form")),
			chromedp.SetValue(chromedp.CSS("#customer_name"), "Koffi Mensah"),
			press(`input[name=network][value=MTN_BJ]`),
			chromedp.SetValue(chromedp.CSS("#customer_phone"), "97000123"),
		}
		require.NoError(t, chromedp.Do(ctx, append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(l.URL)}, fill...)...))
		r := ps.call(t, "PATCH", "/api/v1/payment-links/"+l.ID.String()+"/", map[string]any{"amount": "5000"}, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.NoError(t, chromedp.Do(ctx, press("#pay-button"), chromedp.WaitVisible(chromedp.CSS("#form-error:not(:empty)"))))
		assert.Contains(t, textOf(t, ctx, "#form-error"), "5000.00 XOF")
		require.NoError(t, chromedp.Do(ctx, append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(l.URL)}, fill...)...))
		assert.Equal(t, "Payer 5\u00a0000\u00a0FCFA", textOf(t, ctx, "#pay-button"), "reloaded, the page shows the new price")
		require.NoError(t, chromedp.Do(ctx, press("#pay-button"), chromedp.WaitVisible(chromedp.CSS("#success-screen"))))
	})

	t.Run("a payment in flight on another device is named, in the page's language", func(t *testing.T) {
		ctx := browserTab(t)
		c := ps.newSession(t, acct, map[string]any{"country": "BJ"})
		r := ps.hostedPay(t, c, togo("90000123")) // waits for its post-push code: stays PENDING
		require.Equal(t, 201, r.Status, "%s", r.Body)
		for _, page := range []struct{ lang, query, want string }{
			{"fr", "", "Un paiement de cette commande est déjà en cours"},
			{"en", "?lang=en", "A payment for this order is already in progress"},
		} {
			require.NoError(t, chromedp.Do(ctx,
				chromedp.Navigate(c.CheckoutURL+page.query),
				chromedp.WaitVisible(chromedp.CSS("#pay-form")),
				press(`input[name=network][value=MTN_BJ]`),
				chromedp.SetValue(chromedp.CSS("#customer_phone"), "97000123"),
				press("#pay-button"),
				chromedp.WaitVisible(chromedp.CSS("#form-error:not(:empty)")),
			))
			assert.Contains(t, textOf(t, ctx, "#form-error"), page.want, page.lang)
			screenshot(t, ctx, dir, "in-progress-"+page.lang)
		}
		assert.Equal(t, sika.CheckoutPending, ps.session(t, acct, c.ID).Status)
	})

	t.Run("a session cancelled while its page is open says so in the page's language", func(t *testing.T) {
		ctx := browserTab(t)
		c := ps.newSession(t, acct, map[string]any{"country": "BJ"})
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(c.CheckoutURL), chromedp.WaitVisible(chromedp.CSS("#pay-form"))))
		r := ps.call(t, "POST", "/api/v1/checkout-sessions/"+c.ID.String()+"/cancel/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		require.NoError(t, chromedp.Do(ctx,
			press(`input[name=network][value=MTN_BJ]`),
			chromedp.SetValue(chromedp.CSS("#customer_phone"), "97000123"),
			press("#pay-button"),
			chromedp.WaitVisible(chromedp.CSS("#closed")),
		))
		assert.Equal(t, "Ce paiement a été annulé par le marchand.", textOf(t, ctx, "#closed-message"))
	})

	t.Run("a closed session shows why and no form", func(t *testing.T) {
		ctx := browserTab(t)
		c := ps.newSession(t, acct, nil)
		r := ps.call(t, "POST", "/api/v1/checkout-sessions/"+c.ID.String()+"/cancel/", nil, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
		require.Equal(t, 200, r.Status)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(c.CheckoutURL), chromedp.WaitVisible(chromedp.CSS("#closed"))))
		assert.Contains(t, textOf(t, ctx, "#closed"), "annulé")
		forms, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#pay-form").length`))
		require.NoError(t, err)
		assert.Zero(t, forms)
	})
}
