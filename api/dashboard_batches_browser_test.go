package api

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// TestDashboardPayoutBatchInBrowser drives payout batches in headless Chromium against the
// whole path (sandbox operator, Temporal, worker): a CSV file with bad rows is refused whole
// with its errors by line; a good one is sent and its page shows the progress until it
// completes, and its link gives the results file, one row per item with its status; over the
// merchant's approval threshold a batch waits, its creator's approval is refused, and a second
// member approves it from their own session.
func TestDashboardPayoutBatchInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	fund(t, acct, "BJ", "MTN_BJ", "50000")
	dir := artifactsDir(t)
	files := t.TempDir()
	csvFile := func(name string, lines ...string) string {
		path := filepath.Join(files, name)
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		return path
	}
	header := "amount,currency,country,phone,network,reference,description"
	bad := csvFile("bad.csv", header,
		"1000,XOF,BJ,97000123,MTN_BJ,r1,Salaire",
		"12.5,XOF,BJ,97000123,MTN_BJ,r2,Salaire", // line 3: not a whole XOF amount
		"1000,XOF,BJ,97000123,MTN_BJ,r1,Salaire", // line 4: r1 again
		"1000,XOF,BJ,97000123,,r4,Salaire")       // line 5: no network
	good := csvFile("good.csv", header,
		"1000,XOF,BJ,97000123,MTN_BJ,r1,Salaire",
		"2000,XOF,BJ,97001123,MTN_BJ,r2,Salaire",
		"3000,XOF,BJ,97002123,MTN_BJ,r3,Salaire")

	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	base := ps.url + "/dashboard/"
	require.NoError(t, chromedp.Do(ctx,
		signInToTest(base, acct),
		chromedp.Navigate(base+"payout-batches/"),
		chromedp.WaitVisible(chromedp.CSS(`#batch-form`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{bad}),
		press(`#upload-batch`),
		chromedp.WaitVisible(chromedp.CSS(`#batch-errors`)),
	))
	errorsText := innerText(t, ctx, "#batch-errors")
	for _, line := range []string{"Ligne 3", "Ligne 4", "Ligne 5"} {
		assert.Contains(t, errorsText, line)
	}
	assert.NotContains(t, errorsText, "Ligne 2", "the first row is fine")
	screenshot(t, ctx, dir, "01-batch-refused")
	available, _ := walletFigures(ps.wallet(t, acct))
	assert.Equal(t, "50000.00", available, "nothing moved")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{good}),
		press(`#upload-batch`),
		chromedp.WaitVisible(chromedp.CSS(`#batch-progress`)),
	))
	screenshot(t, ctx, dir, "02-batch-sent")
	require.Eventually(t, func() bool {
		require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#batch-status`))))
		return attrOf(t, ctx, "#batch-status", "data-status") == string(sika.BatchCompleted)
	}, 90*time.Second, time.Second, "the batch page shows it completed")
	assert.Equal(t, "3", innerText(t, ctx, `tr.progress[data-status="SUCCESS"] .count`))
	screenshot(t, ctx, dir, "03-batch-completed")

	// The results file, through the dashboard session: one row per item, in the file's order,
	// with its status and its payout.
	assert.Equal(t, "Télécharger les résultats (CSV)", innerText(t, ctx, "#batch-results"))
	results, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`fetch(document.querySelector('#batch-results').href).then(r => r.ok ? r.text() : "HTTP " + r.status)`,
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(results)).ReadAll()
	require.NoError(t, err, results)
	require.Len(t, rows, 4, "the header and one row per item: %s", results)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for i, ref := range []string{"r1", "r2", "r3"} {
		row := rows[i+1]
		assert.Equal(t, ref, row[col["reference"]])
		assert.Equal(t, string(sika.ItemSucceeded), row[col["status"]], "item %s", ref)
		assert.NotEmpty(t, row[col["transaction"]], "item %s has its payout", ref)
	}

	// Over the threshold: the creator may not approve; a second member does.
	r := ps.call(t, "PATCH", "/api/v1/merchant-settings/", map[string]any{"payout_approval_threshold": "5000"}, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	second := ps.teammateAccount(t, acct, sika.RoleAdmin)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"payout-batches/"),
		chromedp.WaitVisible(chromedp.CSS(`#batch-form`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#file`), []string{good}),
		press(`#upload-batch`),
		chromedp.WaitVisible(chromedp.CSS(`#approve-batch`)),
	))
	assert.Equal(t, string(sika.BatchAwaitingApproval), attrOf(t, ctx, "#batch-status", "data-status"))
	batchURL, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		press(`#approve-batch`),
		chromedp.WaitVisible(chromedp.CSS(`.form-alert`)),
	))
	assert.Equal(t, string(sika.BatchAwaitingApproval), attrOf(t, ctx, "#batch-status", "data-status"), "its creator's approval is refused")
	screenshot(t, ctx, dir, "04-self-approval-refused")

	ctx2 := browserTab(t)
	require.NoError(t, chromedp.Do(ctx2,
		signInToTest(base, second),
		chromedp.Navigate(batchURL),
		chromedp.WaitVisible(chromedp.CSS(`#approve-batch`)),
		press(`#approve-batch`),
		chromedp.WaitNotPresent(chromedp.CSS(`#approve-batch`)),
	))
	assert.NotEqual(t, string(sika.BatchAwaitingApproval), attrOf(t, ctx2, "#batch-status", "data-status"), "approved by the second member")
	screenshot(t, ctx2, dir, "05-approved-by-second-member")
	for _, problem := range problems.get() { // a refused file is answered 400, a refused approval 422
		if !strings.Contains(problem, "400") && !strings.Contains(problem, "422") {
			t.Errorf("the browser reported an error (a CSP violation would be one): %s", problem)
		}
	}
}

// signInToTest signs acct in on the dashboard at base and switches it to TEST.
// press clicks the element sel; every browser test of the package clicks through it. A click
// first resolves sel to a node of the page's document; on a loaded machine that node was seen
// gone by the time it was clicked ("Could not find node with given id": the document had been
// replaced in between, after a login's redirect in TestDashboardNetworksInBrowser), with nothing
// clicked. The click is then tried again on the element as the page has it now, up to three
// times.
func press(sel string) chromedp.Action[chromedp.Void] {
	click := chromedp.Click(chromedp.CSS(sel))
	return func(ctx context.Context, target *chromedp.Target) (chromedp.Void, error) {
		var v chromedp.Void
		var err error
		for range 3 {
			if v, err = click(ctx, target); err == nil || !strings.Contains(err.Error(), "Could not find node") {
				break
			}
		}
		return v, err
	}
}

func signInToTest(base string, acct *account) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		fillDashboardLogin(acct),
		chromedp.WaitVisible(chromedp.CSS(`#env-switch`)),
		press(`#env-switch`),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge.env-test`)),
	)
}

// attrOf is the value of an attribute of the element sel.
func attrOf(t *testing.T, ctx context.Context, sel, attr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+strconv.Quote(sel)+`).getAttribute(`+strconv.Quote(attr)+`)`))
	require.NoError(t, err, sel)
	return s
}

// teammateAccount is a second member of acct's merchant with role, as an account the browser
// logs in with (the teammate's own merchant is created with it; the dashboard picks acct's).
func (ts *testServer) teammateAccount(t *testing.T, acct *account, role sika.MembershipRole) *account {
	t.Helper()
	member, _ := ts.teammate(t, acct, role)
	return &account{Member: member}
}
