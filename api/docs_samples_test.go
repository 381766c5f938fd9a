package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docsSample is one code sample of the API reference as the browser shows it.
type docsSample struct {
	Op   string `json:"op"`   // the id of the operation's section, op-<operationId>
	Text string `json:"text"` // the sample's text
}

// TestDocsGoSamplesCompile takes every Go sample the API reference (/api/v1/docs/, docs.js)
// writes, from the page in a browser, and compiles them all against the Go client (sdk/go, with
// `go vet` and a build overlay: nothing is written in the tree). A merchant's developer copies
// them: one that does not compile, or that calls an operation without its required query
// parameters, is a defect of the page. It needs no network but the Go module proxy, for the
// client module's dependencies when they are not in the module cache yet.
//
// SIKA_DOCS_SAMPLES_OUT=dir keeps the Go and TypeScript samples in dir/go.txt and dir/ts.txt
// (the operation's section id, then the sample; samples separated by a blank line), from which
// scripts/check-docs-samples.sh type-checks the TypeScript ones against sdk/typescript.
func TestDocsGoSamplesCompile(t *testing.T) {
	srv := httptest.NewServer(newDocTestServer(Config{}))
	t.Cleanup(srv.Close)
	ctx := browserTab(t)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/api/v1/docs/"),
		chromedp.WaitVisible(chromedp.CSS("#op-softpay")),
	))
	samples := map[string][]docsSample{}
	for _, lang := range []string{"Go", "TypeScript"} {
		all, err := chromedp.Run(ctx, chromedp.Evaluate[[]docsSample](
			`Array.from(document.querySelectorAll('pre.sample[data-lang=`+lang+`]')).map(p => ({op: p.closest('section').id, text: p.textContent}))`))
		require.NoError(t, err)
		require.Greater(t, len(all), 50, "a %s sample for every operation under /api/v1", lang)
		samples[lang] = all
	}
	if out := os.Getenv("SIKA_DOCS_SAMPLES_OUT"); out != "" {
		for lang, file := range map[string]string{"Go": "go.txt", "TypeScript": "ts.txt"} {
			var parts []string
			for _, s := range samples[lang] {
				parts = append(parts, s.Op+"\n"+s.Text)
			}
			require.NoError(t, os.WriteFile(filepath.Join(out, file), []byte(strings.Join(parts, "\n\n")), 0o644))
		}
	}

	goSamples := map[string]string{}
	for _, s := range samples["Go"] {
		goSamples[s.Op] = s.Text
	}
	// A required query parameter is in the params struct (without it the call is a 400), and a
	// body's arrays and objects are Go composite literals of the client's types.
	for op, want := range map[string]string{
		"op-predictNetwork":         `c.PredictNetworkWithResponse(ctx, &sika.PredictNetworkParams{Phone: "+2250707123456"})`,
		"op-predictCheckoutNetwork": `&sika.PredictCheckoutNetworkParams{Phone: "+2250707123456"})`,
		"op-predictLinkNetwork":     `&sika.PredictLinkNetworkParams{Phone: "+2250707123456"})`,
		"op-createPayoutBatch":      "\tItems: []sika.PayoutBatchItemRequest{\n\t\t{\n\t\t\tAmount: \"",
		"op-softpay":                "c.SoftpayWithResponse(ctx, nil, sika.SoftpayJSONRequestBody{",
	} {
		assert.Contains(t, goSamples[op], want, op)
	}
	assert.NotContains(t, goSamples["op-createPayoutBatch"], `[{"`, "no JSON in a Go sample")

	// Each sample becomes the body of a function of a test file of the client's package, added
	// by an overlay: `go vet` type-checks it with the package.
	var src strings.Builder
	src.WriteString("package sika_test\n\nimport (\n\t\"bytes\"\n\t\"context\"\n\t\"mime/multipart\"\n\n\t\"github.com/google/uuid\"\n\n\tsika \"github.com/sikahq/sika/sdk/go\"\n)\n\nvar _ = uuid.Nil\n")
	for i, s := range samples["Go"] {
		fmt.Fprintf(&src, "\n// %s\nfunc sample%d(ctx context.Context, c *sika.Client) error {\n\tvar buf bytes.Buffer\n\tform := multipart.NewWriter(&buf)\n\t_ = form\n", s.Op, i+1)
		for _, line := range strings.Split(s.Text, "\n") {
			if strings.HasPrefix(line, "// c, err :=") {
				continue // how c is made, for the reader
			}
			src.WriteString("\t" + line + "\n")
		}
		src.WriteString("\treturn nil\n}\n")
	}
	module, err := filepath.Abs(filepath.Join("..", "sdk", "go"))
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "zz_docsamples_test.go")
	require.NoError(t, os.WriteFile(file, []byte(src.String()), 0o644))
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(module, "zz_docsamples_test.go"): file}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644))

	vctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	vet := exec.CommandContext(vctx, "go", "vet", "-overlay="+filepath.Join(dir, "overlay.json"), ".")
	vet.Dir = module
	started := time.Now()
	out, err := vet.CombinedOutput()
	if err != nil {
		numbered := strings.Split(src.String(), "\n")
		for i := range numbered {
			numbered[i] = fmt.Sprintf("%4d %s", i+1, numbered[i])
		}
		t.Fatalf("the Go samples do not compile against sdk/go: %v\n%s\nthe samples as compiled:\n%s", err, out, strings.Join(numbered, "\n"))
	}
	t.Logf("Go samples: %d of %d compile against sdk/go (go vet: %s)", len(samples["Go"]), len(samples["Go"]), time.Since(started).Round(time.Millisecond))
}
