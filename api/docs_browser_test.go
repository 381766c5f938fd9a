package api

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsPageInBrowser opens the API reference as a merchant's developer does: it finds
// softpay by the search box, reads its samples (curl, the Go SDK, the TypeScript SDK) and sends
// it with the try-it form and a TEST key, against the package's real stack.
func TestDocsPageInBrowser(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	dir := artifactsDir(t)
	ctx := browserTab(t)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ps.url+"/docs/"),
		chromedp.WaitVisible(chromedp.CSS("#op-softpay")),
	))
	total, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('section.op').length`))
	require.NoError(t, err)
	require.Greater(t, total, 50, "every operation of the document is on the page")

	// Search: only the operations that match stay, softpay among them.
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#filter"), "softpay")))
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('section.op')).filter(s => !s.classList.contains('hidden')).map(s => s.id)`))
	require.NoError(t, err)
	assert.Contains(t, shown, "op-softpay")
	assert.Less(t, len(shown), 5, "the search leaves only the operations that match: %v", shown)
	screenshot(t, ctx, dir, "search-softpay")

	// The samples, written from the document: the path, the Idempotency-Key and the required
	// fields with the document's examples; the Go method and body type of sdk/go; the
	// TypeScript call of sdk/typescript.
	samples, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](
		`Object.fromEntries(Array.from(document.querySelectorAll('#op-softpay pre.sample')).map(p => [p.dataset.lang, p.textContent]))`))
	require.NoError(t, err)
	assert.Contains(t, samples["curl"], "-X POST \""+ps.url+"/api/v1/payments/softpay/\"")
	assert.Contains(t, samples["curl"], `-H "Idempotency-Key: $(uuidgen)"`)
	assert.Contains(t, samples["curl"], `"customer_phone":"97000123"`)
	assert.Contains(t, samples["Go"], "c.SoftpayWithResponse(ctx, nil, sika.SoftpayJSONRequestBody{")
	assert.Contains(t, samples["Go"], `CustomerPhone: "97000123",`)
	assert.Contains(t, samples["Go"], "resp.JSON201.Data")
	assert.Contains(t, samples["TypeScript"], `await sika.POST("/payments/softpay/", {`)
	assert.Contains(t, samples["TypeScript"], `"network": "MTN_BJ"`)
	require.NoError(t, chromedp.Do(ctx, press(`#op-softpay .tabs button:nth-child(2)`)))
	goShown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](
		`!document.querySelector('#op-softpay pre.sample[data-lang=Go]').hidden && document.querySelector('#op-softpay pre.sample[data-lang=curl]').hidden`))
	require.NoError(t, err)
	assert.True(t, goShown, "the Go tab shows the Go sample alone")
	noTry, err := chromedp.Run(ctx, chromedp.Evaluate[[]bool](
		`['op-login', 'op-register', 'op-createAPIKey', 'op-streamEvents'].map(id => !!document.getElementById(id) && !document.querySelector('#' + id + ' details.try'))`))
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, true, true}, noTry, "no try-it on login, registration, a dashboard-only route or a live stream")
	screenshot(t, ctx, dir, "softpay-go-sample")

	// Try it: a LIVE key is refused by the page; the TEST key sends the sample body, which the
	// sandbox accepts (a number ending in 123).
	require.NoError(t, chromedp.Do(ctx,
		press(`#op-softpay details.try > summary`),
		chromedp.WaitVisible(chromedp.CSS(`#op-softpay .try-key`)),
		chromedp.SendKeys(chromedp.CSS(`#op-softpay .try-key`), acct.Keys["LIVE/BOTH"]),
		press(`#op-softpay .try-send`),
		chromedp.WaitVisible(chromedp.CSS(`#op-softpay .try-out .error-box`)),
	))
	assert.Contains(t, textOf(t, ctx, `#op-softpay .try-out`), "Only a TEST key")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#op-softpay .try-key`), acct.Keys["TEST/BOTH"]),
		press(`#op-softpay .try-send`),
		chromedp.WaitVisible(chromedp.CSS(`#op-softpay .try-response`)),
	))
	answer := textOf(t, ctx, `#op-softpay .try-response`)
	assert.Contains(t, textOf(t, ctx, `#op-softpay .try-status`), "201")
	var created struct {
		Success bool `json:"success"`
		Data    struct {
			ID          string `json:"id"`
			Environment string `json:"environment"`
			Status      string `json:"status"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(answer), &created), answer)
	assert.True(t, created.Success)
	assert.Equal(t, "TEST", created.Data.Environment)
	assert.Equal(t, "PENDING", created.Data.Status)
	screenshot(t, ctx, dir, "softpay-tried")
}
