package api

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// pageProblems collects what the browser reports as wrong with the pages: console errors (a
// Content-Security-Policy violation is one), uncaught exceptions.
type pageProblems struct {
	mu   sync.Mutex
	list []string
}

func watchPageProblems(t *testing.T, ctx context.Context) *pageProblems {
	t.Helper()
	p := &pageProblems{}
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				p.list = append(p.list, fmt.Sprintf("%s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *runtime.EventExceptionThrown:
			p.list = append(p.list, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				p.list = append(p.list, "console.error")
			}
		}
	}))
	return p
}

func (p *pageProblems) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

// TestDashboardInBrowser drives the merchant dashboard in headless Chromium against the whole
// collection path (sandbox operator, Temporal, worker): log in, see a balance and a transaction
// appear after a sandbox payment, filter and search the list (htmx swaps the results in place),
// export what is filtered, open a transaction with its timeline, switch language and log out.
// A screenshot is saved at each step ($SIKA_TEST_ARTIFACTS, or a test directory; the log says
// where).
func TestDashboardInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	base := ps.url + "/dashboard/"

	// 1. Log in (French: the browser prefers it).
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
	))
	assert.Contains(t, innerText(t, ctx, "h1"), "Connexion")
	screenshot(t, ctx, dir, "01-login")
	require.NoError(t, chromedp.Do(ctx,
		fillDashboardLogin(acct),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge`)),
	))
	assert.Equal(t, "LIVE", innerText(t, ctx, "#env-badge"), "an active merchant lands in LIVE")
	assert.Contains(t, innerText(t, ctx, "#merchant-name"), acct.Merchant.Name)

	// 2. Switch to TEST: no balance, no transaction yet.
	require.NoError(t, chromedp.Do(ctx,
		press(`#env-switch`),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge.env-test`)),
		chromedp.WaitVisible(chromedp.CSS(`#no-balance`)),
	))
	assert.Contains(t, innerText(t, ctx, "#test-banner"), "Mode TEST")
	screenshot(t, ctx, dir, "02-home-test-empty")

	// 3. Sandbox payments through the API: one paid, one declined, one paid by another customer.
	paid := ps.pay(t, acct, benin("97000123"))
	declined := ps.pay(t, acct, benin("97000001"))
	other := benin("97100123")
	other["customer_name"], other["amount"] = "Awa Diop", "2500"
	paidByAwa := ps.pay(t, acct, other)
	d := ps.final(t, acct, paid.ID, 30*time.Second)
	require.Equal(t, sika.StatusSuccess, d.Status)
	require.Equal(t, sika.StatusFailed, ps.final(t, acct, declined.ID, 30*time.Second).Status)
	require.Equal(t, sika.StatusSuccess, ps.final(t, acct, paidByAwa.ID, 30*time.Second).Status)
	var wallet sika.Wallet
	for _, w := range ps.balances(t, acct) {
		if w.Country == "BJ" {
			wallet = w
		}
	}
	require.True(t, wallet.AvailableAmount.IsPositive(), "the payments were credited")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#balances`)),
		chromedp.WaitVisible(chromedp.CSS(`#latest tr[data-id="`+paid.ID.String()+`"]`)),
	))
	assert.Equal(t, sika.FormatMoney(wallet.AvailableAmount.Decimal, "XOF", "fr"), innerText(t, ctx, "#available-BJ"),
		"the balance, as people in the region read it")
	assert.Contains(t, innerText(t, ctx, "#available-BJ"), "FCFA")
	assert.Contains(t, innerText(t, ctx, `#latest tr[data-id="`+paid.ID.String()+`"]`), paid.Reference)
	screenshot(t, ctx, dir, "03-home-after-payment")

	// 4. The list, filtered by status: htmx swaps the results without reloading the page.
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-transactions`),
		chromedp.WaitVisible(chromedp.CSS(`#filters`)),
		chromedp.WaitVisible(chromedp.CSS(`#results tr[data-id="`+declined.ID.String()+`"]`)),
		chromedp.Evaluate[chromedp.Void](`window.sikaSamePage = true`),
		chromedp.SetValue(chromedp.CSS(`#status`), "FAILED"),
		press(`#apply-filters`),
		chromedp.WaitNotPresent(chromedp.CSS(`#results tr[data-id="`+paid.ID.String()+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#results tr[data-id="`+declined.ID.String()+`"]`)),
	))
	samePage, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sikaSamePage === true`))
	require.NoError(t, err)
	assert.True(t, samePage, "the results were swapped in by htmx, not by a page load")
	location, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
	require.NoError(t, err)
	assert.Contains(t, location, "status=FAILED", "the filtered list has its own URL")
	screenshot(t, ctx, dir, "04-filter-failed")

	// 5. The free search, and the CSV of what is filtered.
	require.NoError(t, chromedp.Do(ctx,
		press(`#clear-filters`),
		chromedp.WaitVisible(chromedp.CSS(`#results tr[data-id="`+paid.ID.String()+`"]`)),
		chromedp.SendKeys(chromedp.CSS(`#search`), "Awa Diop"),
		press(`#apply-filters`),
		chromedp.WaitNotPresent(chromedp.CSS(`#results tr[data-id="`+declined.ID.String()+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#results tr[data-id="`+paidByAwa.ID.String()+`"]`)),
	))
	assert.NotContains(t, innerText(t, ctx, "#results"), paid.Reference)
	assert.Contains(t, innerText(t, ctx, "#export-csv"), "Exporter ces transactions")
	screenshot(t, ctx, dir, "05-search")
	csv, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`fetch(document.querySelector('#export-csv').href).then(r => r.text())`,
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	require.Len(t, lines, 2, "the header and Awa's payment: %s", csv)
	assert.Contains(t, lines[1], paidByAwa.Reference)

	// 6. The detail of the paid transaction: its attempts and its status log as a timeline.
	require.NoError(t, chromedp.Do(ctx,
		press(`#results tr[data-id="`+paidByAwa.ID.String()+`"] a.tx-link`),
		chromedp.WaitVisible(chromedp.CSS(`#timeline`)),
	))
	assert.Equal(t, "2\u00a0500\u00a0FCFA", innerText(t, ctx, "#tx-amount"))
	assert.Equal(t, "Réussie", innerText(t, ctx, "#tx-status"))
	steps, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#timeline .step').length`))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, steps, 2, "created PENDING, then SUCCESS")
	assert.Contains(t, innerText(t, ctx, "#timeline .step:last-child"), "Réussie")
	assert.Contains(t, innerText(t, ctx, "#attempts"), "sandbox")
	screenshot(t, ctx, dir, "06-detail")

	// 7. English, by the switch; the choice stays on the next page.
	require.NoError(t, chromedp.Do(ctx,
		press(`#switch-lang`),
		chromedp.WaitVisible(chromedp.CSS(`html[lang="en"] #timeline`)),
	))
	assert.Equal(t, "XOF\u00a02,500", innerText(t, ctx, "#tx-amount"))
	assert.Equal(t, "Succeeded", innerText(t, ctx, "#tx-status"))
	assert.Contains(t, innerText(t, ctx, "#timeline-heading"), "Status history")
	screenshot(t, ctx, dir, "07-detail-english")
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-home`),
		chromedp.WaitVisible(chromedp.CSS(`#balances`)),
	))
	assert.Contains(t, innerText(t, ctx, "#balances-heading"), "Balances by country")
	assert.Equal(t, sika.FormatMoney(wallet.AvailableAmount.Decimal, "XOF", "en"), innerText(t, ctx, "#available-BJ"))
	screenshot(t, ctx, dir, "08-home-english")

	// 8. Log out: the session is gone.
	require.NoError(t, chromedp.Do(ctx,
		press(`#logout`),
		chromedp.WaitVisible(chromedp.CSS(`#login-notice`)),
		chromedp.Navigate(base+"transactions/"),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
	))
	screenshot(t, ctx, dir, "09-logged-out")

	assert.Empty(t, problems.get(), "the browser reported no error (a CSP violation would be one)")
}

// fillDashboardLogin fills the login form on the page and sends it, as acct's member.
func fillDashboardLogin(acct *account) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.SendKeys(chromedp.CSS(`#email`), acct.Member.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "correct horse battery"),
		press(`#login-button`),
	)
}

// innerText is the text a person sees in the element sel, read from the live DOM (after htmx
// swapped a part of the page in).
func innerText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).innerText`))
	require.NoError(t, err, sel)
	return strings.TrimSpace(s)
}

// TestDashboardMerchantPickerInBrowser: a member of two merchants picks one after login, sees
// its name and environment, and can reach the page by keyboard from the skip link.
func TestDashboardMerchantPickerInBrowser(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	second, err := testStore.CreateMerchant(t.Context(), acct.Member.ID, store.NewMerchant{Name: "Boutique Awa " + uuid.NewString()[:4], Country: "SN"})
	require.NoError(t, err)
	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ts.url+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), acct.Member.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "correct horse battery"),
		press(`#login-button`),
		chromedp.WaitVisible(chromedp.CSS(`#merchants-heading`)),
	))
	assert.Contains(t, innerText(t, ctx, "main"), acct.Merchant.Name)
	assert.Contains(t, innerText(t, ctx, "main"), second.Name)
	screenshot(t, ctx, dir, "01-picker")

	require.NoError(t, chromedp.Do(ctx,
		press(`button[value="`+second.ID.String()+`"]`),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge.env-test`)),
	))
	assert.Equal(t, second.Name, innerText(t, ctx, "#merchant-name"))
	assert.Contains(t, innerText(t, ctx, "#test-banner"), "Mode TEST", "a merchant without KYC is shown in TEST")
	screenshot(t, ctx, dir, "02-second-merchant")

	// Keyboard: the first Tab reaches the skip link, Enter moves to the content.
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent("\t")))
	focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.className`))
	require.NoError(t, err)
	assert.Equal(t, "skip", focused)
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-merchants`),
		chromedp.WaitVisible(chromedp.CSS(`#merchants-heading`)),
	))
	current, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[aria-current="true"]').value`))
	require.NoError(t, err)
	assert.Equal(t, second.ID.String(), current, "the picker marks the merchant acted for")
	assert.Empty(t, problems.get())
}
