package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// TestDashboardDevelopersInBrowser drives the developers, KYC and settings pages in headless
// Chromium against the whole stack (sandbox operator, Temporal, worker, the webhook delivery
// workflows): a merchant not yet verified registers a webhook endpoint (a receiver on
// loopback), makes a sandbox payment and sees its deliveries in the endpoint's log with the
// response code, redelivers one and sees the second attempt; creates an API key and uses it
// with plain HTTP; sends a KYC dossier and drops a document on the upload form (a file of the
// wrong type is refused in the browser first); then a staff member approves the dossier in the
// console and the merchant's page shows it verified. A screenshot is saved at each step
// ($SIKA_TEST_ARTIFACTS, or a test directory; the log says where).
func TestDashboardDevelopersInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, false) // KYC pending: the dashboard opens in TEST
	rc := newReceiver(t, 0)
	dir := artifactsDir(t)
	ctx := browserTab(t)
	problems := watchPageProblems(t, ctx)
	base := ps.url + "/dashboard/"

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), acct.Member.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "correct horse battery"),
		press(`#login-button`),
		chromedp.WaitVisible(chromedp.CSS(`#env-badge.env-test`)),
	))

	// 1. A webhook endpoint for the receiver: its signing secret is shown once.
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-developers`),
		chromedp.WaitVisible(chromedp.CSS(`#endpoint-form`)),
		chromedp.SendKeys(chromedp.CSS(`#endpoint-url`), rc.srv.URL+"/hooks"),
		chromedp.SendKeys(chromedp.CSS(`#endpoint-description`), "Boutique en ligne"),
		press(`#create-endpoint`),
		chromedp.WaitVisible(chromedp.CSS(`#new-endpoint-secret`)),
	))
	secret, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#new-endpoint-secret`)))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(secret, "whsec_"), secret)
	rc.mu.Lock()
	rc.secret = secret // the receiver checks every delivery's signature with it
	rc.mu.Unlock()
	assert.Contains(t, innerText(t, ctx, "#new-endpoint"), "ne sera plus jamais affiché")
	screenshot(t, ctx, dir, "01-endpoint-created")

	// 2. A sandbox payment: its events reach the receiver, and the endpoint's log shows each
	// delivery with the receiver's answer (204) and the time it took.
	p := ps.pay(t, acct, benin("97000123"))
	require.Equal(t, sika.StatusSuccess, ps.final(t, acct, p.ID, 30*time.Second).Status)
	succeeded := eventOf(t, acct, sika.EventTransactionSucceeded, p.ID)
	require.NoError(t, chromedp.Do(ctx,
		press(`#new-endpoint-link`),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries`)),
	))
	endpointURL := currentURL(t, ctx)
	row := `tr.delivery-row[data-event="` + succeeded + `"]`
	reloadUntil(t, ctx, endpointURL, row, 1)
	assert.Equal(t, "204", innerText(t, ctx, row+` .status-code`), "the receiver's answer")
	assert.Regexp(t, `^\d+ ms$`, innerText(t, ctx, row+` .latency`))
	assert.Contains(t, innerText(t, ctx, row), "transaction.succeeded")
	screenshot(t, ctx, dir, "02-delivery-log")

	// 3. Redeliver it: a second attempt to this endpoint shows in the log.
	require.NoError(t, chromedp.Do(ctx,
		press(row+` button.redeliver`),
		chromedp.WaitVisible(chromedp.CSS(`#notice`)),
	))
	reloadUntil(t, ctx, endpointURL, row, 2)
	codes, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('`+row+` .status-code')].map(e => e.innerText.trim())`))
	require.NoError(t, err)
	assert.Equal(t, []string{"204", "204"}, codes)
	rc.mu.Lock()
	assert.Equal(t, 2, rc.seen[succeeded], "the receiver got the event twice, with the same webhook-id")
	assert.Zero(t, rc.badSigs, "every delivery was signed with the secret shown")
	rc.mu.Unlock()
	screenshot(t, ctx, dir, "03-redelivered")

	// 4. An API key, its secret shown once, used at once with plain HTTP.
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-developers`),
		chromedp.WaitVisible(chromedp.CSS(`#key-form`)),
		chromedp.SendKeys(chromedp.CSS(`#key-name`), "Serveur boutique"),
		chromedp.SetValue(chromedp.CSS(`#key-scope`), "PAYIN"),
		press(`#create-key`),
		chromedp.WaitVisible(chromedp.CSS(`#new-key-secret`)),
	))
	key, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#new-key-secret`)))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(key, "sk_test_"), "TEST, the session's environment")
	screenshot(t, ctx, dir, "04-api-key-created")
	req, err := http.NewRequest(http.MethodGet, ps.url+"/api/v1/transactions/"+p.ID.String()+"/", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var got struct {
		Data sika.Transaction `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	assert.Equal(t, p.Reference, got.Data.Reference)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"developers/"), chromedp.WaitVisible(chromedp.CSS(`#key-form`))))
	assert.NotContains(t, innerText(t, ctx, "main"), key, "never shown again")

	// 5. KYC: a dossier, then a document dropped on the upload form. A file that is not an
	// image or a PDF is refused by the page before anything is sent.
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-kyc`),
		chromedp.WaitVisible(chromedp.CSS(`#dossier-form`)),
		chromedp.SendKeys(chromedp.CSS(`#kyc-first_name`), "Awa"),
		chromedp.SendKeys(chromedp.CSS(`#kyc-last_name`), "Diop"),
		chromedp.SendKeys(chromedp.CSS(`#kyc-id_document_type`), "CNI"),
		press(`#submit-dossier`),
		chromedp.WaitVisible(chromedp.CSS(`#document-form`)),
	))
	assert.Equal(t, "En attente de vérification", innerText(t, ctx, "#merchant-kyc-status"))
	dropFile(t, ctx, "notes.txt", "text/plain", []byte("not an identity document"))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#document-file-check`))))
	assert.Contains(t, innerText(t, ctx, "#document-file-check"), "ni une image JPEG, PNG ou WebP, ni un PDF")
	// A listener added after the page's sees whether the page's script stopped the submit.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById('document-form').addEventListener('submit', e => { window.sikaStopped = e.defaultPrevented; })`),
		press(`#upload-document`),
	))
	stopped, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.sikaStopped === true`))
	require.NoError(t, err)
	assert.True(t, stopped, "the page did not send the refused file")
	screenshot(t, ctx, dir, "05-kyc-wrong-type-refused")

	dropFile(t, ctx, "recto.png", "image/png", kycPNG(t))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitNotVisible(chromedp.CSS(`#document-file-check`)),
		chromedp.SetValue(chromedp.CSS(`#document-type`), "ID_CARD"),
		chromedp.SendKeys(chromedp.CSS(`#document-label`), "Recto"),
	))
	assert.Contains(t, innerText(t, ctx, "#document-file-status"), "recto.png")
	screenshot(t, ctx, dir, "06-kyc-file-dropped")
	require.NoError(t, chromedp.Do(ctx,
		press(`#upload-document`),
		// The notice of the dossier's creation is still shown: wait for the document itself.
		chromedp.WaitVisible(chromedp.CSS(`#dossiers .documents`)),
	))
	assert.Contains(t, innerText(t, ctx, "#dossiers .documents"), "Carte d'identité · Recto")
	screenshot(t, ctx, dir, "07-kyc-uploaded")
	dossiers, _, err := testStore.ListKYCDossiers(t.Context(), acct.Merchant.ID, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	require.Len(t, dossiers, 1)
	require.Len(t, dossiers[0].Documents, 1)

	// 6. Support approves the dossier in the console (same browser, its own session).
	staff := newConsoleStaff(t)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ps.url+"/console/"),
		chromedp.WaitVisible(chromedp.CSS(`#login-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), staff.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), "staff password long enough"),
		press(`#login-button`),
		chromedp.WaitVisible(chromedp.CSS(`#staff-email`)),
		chromedp.Navigate(ps.url+"/console/kyc/"),
		chromedp.WaitVisible(chromedp.CSS(`tr.dossier-row[data-id="`+dossiers[0].ID.String()+`"]`)),
		press(`tr.dossier-row[data-id="`+dossiers[0].ID.String()+`"] a.dossier-link`),
		chromedp.WaitVisible(chromedp.CSS(`#review-form`)),
		chromedp.SendKeys(chromedp.CSS(`#review_note`), "Pièce lisible et conforme"),
		press(`#approve`),
		chromedp.WaitVisible(chromedp.CSS(`#review-note`)),
	))
	screenshot(t, ctx, dir, "08-console-approved")

	// 7. The merchant's KYC page: verified, LIVE open, the reviewer's note.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"kyc/"),
		chromedp.WaitVisible(chromedp.CSS(`#merchant-kyc-status`)),
	))
	assert.Equal(t, "Vérifié", innerText(t, ctx, "#merchant-kyc-status"))
	assert.Equal(t, "Approuvé", innerText(t, ctx, "#dossiers .dossier-status"))
	assert.Contains(t, innerText(t, ctx, "#dossiers .review-note"), "Pièce lisible et conforme")
	screenshot(t, ctx, dir, "09-merchant-verified")

	// 8. Settings: the fee mode of TEST, and the team.
	require.NoError(t, chromedp.Do(ctx,
		press(`#nav-settings`),
		chromedp.WaitVisible(chromedp.CSS(`#settings-form`)),
		press(`#fee-mode-ADD_ON`),
		press(`#allow-client-override`),
		press(`#save-settings`),
		chromedp.WaitVisible(chromedp.CSS(`#notice`)),
	))
	assert.Contains(t, innerText(t, ctx, "#team-list"), acct.Member.Email)
	st, err := testStore.MerchantSettings(t.Context(), acct.Merchant.ID, sika.EnvironmentTest)
	require.NoError(t, err)
	assert.Equal(t, sika.FeeAddOn, st.FeeChargeMode)
	assert.True(t, st.AllowClientOverride)
	screenshot(t, ctx, dir, "10-settings")

	assert.Empty(t, problems.get(), "the browser reported no error (a CSP violation would be one)")
}

// eventOf is the id of the event of a type about a transaction, in TEST.
func eventOf(t *testing.T, acct *account, typ sika.EventType, transaction uuid.UUID) string {
	t.Helper()
	events, _, err := testStore.ListEvents(t.Context(), acct.Merchant.ID, sika.EnvironmentTest, sika.ScopeBoth, store.KeysetRequest{Limit: 50})
	require.NoError(t, err)
	for _, e := range events {
		var data struct {
			ID uuid.UUID `json:"id"`
		}
		if e.Type == typ && json.Unmarshal(e.Data, &data) == nil && data.ID == transaction {
			return e.ID
		}
	}
	t.Fatalf("no %s event for %s", typ, transaction)
	return ""
}

// reloadUntil loads url again until sel matches n elements (a delivery is made in the
// background: the log shows it once recorded).
func reloadUntil(t *testing.T, ctx context.Context, url, sel string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`#deliveries`))))
		count, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(sel)+`).length`))
		require.NoError(t, err)
		if count >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d after 20 s", sel, count, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func currentURL(t *testing.T, ctx context.Context) string {
	t.Helper()
	u, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	require.NoError(t, err)
	return u
}

// dropFile drops a file on the KYC upload form's zone as a person dragging it from their
// files would: the page's script receives a drop event carrying it.
func dropFile(t *testing.T, ctx context.Context, name, contentType string, content []byte) {
	t.Helper()
	script := `(() => {
		const bytes = Uint8Array.from(atob(` + strconv.Quote(base64.StdEncoding.EncodeToString(content)) + `), c => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], ` + strconv.Quote(name) + `, {type: ` + strconv.Quote(contentType) + `}));
		const zone = document.getElementById("dropzone");
		for (const type of ["dragenter", "dragover", "drop"]) {
			zone.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt}));
		}
		return document.getElementById("document-file").files.length;
	})()`
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](script))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the dropped file is the form's file")
}

// newConsoleStaff registers a staff member who logs in to the console with the password of
// the console's browser tests.
func newConsoleStaff(t *testing.T) sika.Member {
	t.Helper()
	hash, err := sika.HashPassword("staff password long enough")
	require.NoError(t, err)
	m, _, err := testStore.RegisterMember(t.Context(), "support-"+uuid.NewString()[:8]+"@sika.local", hash, "Support Agent", sika.StaffAdmin, nil)
	require.NoError(t, err)
	return m
}
