package api

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// TestConsoleInBrowser drives the support console in headless Chromium against the money
// stack (a scripted operator that leaves payouts unclear, Temporal, a worker): a staff member
// logs in, sees a stuck payout and re-verifies it at the operator, approves a KYC dossier, and
// proposes to end an unclear payout with a reason, which a money approver then approves (two
// people per money decision); each action shows in the staff actions. A
// screenshot is saved at each step ($SIKA_TEST_ARTIFACTS, or a test directory).
func TestConsoleInBrowser(t *testing.T) {
	ms := newMoneyStack(t)
	member, staffHeaders := ms.staffMember(t)
	acct := ms.newAccount(t, true)
	fund(t, acct, "BJ", "MTN_BJ", "5000")
	p := ms.payout(t, acct)
	ms.unclear(t, staffHeaders, p.ID) // in support's queue: sent, unclear
	dossier, err := testStore.SubmitKYCDossier(t.Context(), sika.KYCDossier{Merchant: acct.Merchant.ID, KYCType: sika.KYCIndividual,
		FirstName: "Awa", LastName: "Diop"}, acct.Member.ID)
	require.NoError(t, err)

	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	base := ms.url + "/console/"

	// 1. Log in.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
	))
	screenshot(t, ctx, dir, "01-login")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#email`), member.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "correct horse battery"),
		press(`#login-button`),
		chromedp.WaitVisible(chromedp.CSS(`#staff-email`)),
	))

	// 2. The stuck list (pending for more than 0 minutes) shows the payout; re-verify it.
	row := `tr.stuck-row[data-id="` + p.ID.String() + `"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"?minutes=0"),
		chromedp.WaitVisible(chromedp.CSS(row)),
	))
	assert.Contains(t, innerText(t, ctx, row), p.Reference)
	assert.Contains(t, innerText(t, ctx, row), "-1\u00a0000\u00a0FCFA", "sika.FormatMoney")
	screenshot(t, ctx, dir, "02-stuck")
	require.NoError(t, chromedp.Do(ctx,
		press(row+` button.reverify`),
		chromedp.WaitVisible(chromedp.CSS(row+` .reverify-outcome`)),
	))
	outcome := innerText(t, ctx, row+` .reverify-outcome`)
	assert.Contains(t, outcome, "L'opérateur répond")
	screenshot(t, ctx, dir, "03-reverified")

	// 3. The KYC queue: approve the dossier with a note.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"kyc/"),
		chromedp.WaitVisible(chromedp.CSS(`tr.dossier-row[data-id="`+dossier.ID.String()+`"]`)),
	))
	screenshot(t, ctx, dir, "04-kyc-queue")
	require.NoError(t, chromedp.Do(ctx,
		press(`tr.dossier-row[data-id="`+dossier.ID.String()+`"] a.dossier-link`),
		chromedp.WaitVisible(chromedp.CSS(`#review-form`)),
		chromedp.SendKeys(chromedp.CSS(`#review_note`), "Pièces conformes"),
		press(`#approve`),
		chromedp.WaitVisible(chromedp.CSS(`#review-note`)),
	))
	assert.Equal(t, "Approuvé", innerText(t, ctx, "#dossier-status"))
	screenshot(t, ctx, dir, "05-kyc-approved")
	m, err := testStore.MerchantByID(t.Context(), acct.Merchant.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.KYCVerified, m.KYCStatus)

	// 4. The unclear payouts queue: propose to end it FAILED with a reason; the proposal waits for
	// a second person, and its proposer cannot approve it.
	card := `section.unclear[data-id="` + p.ID.String() + `"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"unclear/?minutes=0"),
		chromedp.WaitVisible(chromedp.CSS(card)),
	))
	assert.Contains(t, innerText(t, ctx, card+` .last-answer`), "UNAVAILABLE", "the operator's answer")
	screenshot(t, ctx, dir, "06-unclear")
	require.NoError(t, chromedp.Do(ctx,
		press(card+` input[value="FAILED"]`),
		chromedp.SendKeys(chromedp.CSS(card+` textarea`), "Operator confirmed by phone that nothing was paid"),
		press(card+` button.resolve`),
		chromedp.WaitVisible(chromedp.CSS(`#proposed`)),
	))
	assert.Equal(t, "En attente", innerText(t, ctx, "#tx-status"), "nothing applied yet")
	assert.Contains(t, innerText(t, ctx, "#waiting-decision"), "une autre personne doit la décider")
	screenshot(t, ctx, dir, "07-proposed")

	// A money approver signs in, approves it on the decisions page: it is applied.
	approver := newStaffWithRole(t, sika.StaffMoneyApprover)
	require.NoError(t, chromedp.Do(ctx,
		press(`#logout`),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), approver.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "correct horse battery"),
		press(`#login-button`),
		chromedp.WaitVisible(chromedp.CSS(`#staff-email`)),
		chromedp.Navigate(base+"decisions/"),
		chromedp.WaitVisible(chromedp.CSS(`button.approve-decision`)),
	))
	assert.Contains(t, innerText(t, ctx, "#staff-role"), "Approbateur financier")
	screenshot(t, ctx, dir, "08-decisions")
	require.NoError(t, chromedp.Do(ctx,
		press(`button.approve-decision`),
		chromedp.WaitVisible(chromedp.CSS(`#resolved`)),
	))
	assert.Equal(t, "Échouée", innerText(t, ctx, "#tx-status"))
	actions := innerText(t, ctx, "table.staff-actions")
	assert.Contains(t, actions, member.Email, "who proposed")
	assert.Contains(t, actions, approver.Email, "who approved")
	assert.Contains(t, actions, "Décision proposée")
	assert.Contains(t, actions, "Décision approuvée et appliquée")
	assert.Contains(t, actions, "Operator confirmed by phone", "why")
	assert.Contains(t, actions, "Revérifiée", "the re-verify is recorded too")
	screenshot(t, ctx, dir, "09-resolved")

	// 5. The merchant's page shows the KYC approval in the staff actions; English by the switch.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"merchants/"+acct.Merchant.ID.String()+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#merchant-name`)),
		press(`#switch-lang`),
		chromedp.WaitVisible(chromedp.CSS(`#suspend`)),
	))
	assert.Contains(t, innerText(t, ctx, "table.staff-actions"), "KYC dossier approved")
	screenshot(t, ctx, dir, "10-merchant-en")

	time.Sleep(100 * time.Millisecond)
	assert.Empty(t, problems.get(), "the browser reported problems")
}
