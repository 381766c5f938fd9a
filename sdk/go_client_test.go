// Package sdk_test checks the Go client in sdk/go, a module of its own (so that a merchant's
// build pulls in none of the service's dependencies), which `go test ./...` at the root does not
// reach: its generated code against the OpenAPI document of the api package, and its tests and
// example against the real service, started as `sika dev` on the test stack of internal/testenv.
// `make test` runs it with the rest, inside the same `sika stack`.
package sdk_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/internal/testenv/sikadev"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, nil))
}

// TestGoClientMatchesTheDocument fails when api/openapi.yaml changed and the Go client was not
// regenerated: sdk/go/openapi.sha256 records the SHA-256 of the document it was made from.
// TestGoClient regenerates it for real.
func TestGoClientMatchesTheDocument(t *testing.T) {
	sikadev.RequireDocumentSum(t, filepath.Join("go", "openapi.sha256"), "sdk/go/generate.sh")
}

// TestGoClient checks that a fresh generation gives the committed files (generate.sh --check:
// oapi-codegen at its pinned version), vets the module, starts the service as `sika dev` does
// (internal/testenv/sikadev, with its fixtures), runs the example merchant backend on it, then
// the module's tests against it (SIKA_SDK_DEV_JSON and the SIKA_SDK_* fixtures).
func TestGoClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, err := os.Getwd()
	require.NoError(t, err)
	root, module := filepath.Join(dir, ".."), filepath.Join(dir, "go")

	sikadev.Run(t, ctx, module, nil, "./generate.sh", "--check")
	sikadev.Run(t, ctx, module, nil, "go", "vet", "./...")
	example := filepath.Join(t.TempDir(), "merchant-backend")
	sikadev.Run(t, ctx, module, nil, "go", "build", "-o", example, "./examples/merchant-backend")

	svc := sikadev.Start(t, ctx, root, "sdk-go")
	// The example first, on the fresh service: a merchant backend that sells an order through a
	// checkout session, pays it as the customer would in TEST, and marks it paid when the
	// verified webhook comes.
	out := sikadev.Run(t, ctx, module, svc.Env, example, "-demo", "-dev-json", svc.DevJSON)
	t.Logf("examples/merchant-backend -demo:\n%s", out)
	assert.Contains(t, out, "is paid")
	t.Logf("from the start of sika dev to the example's order paid: %s", time.Since(svc.Started).Round(time.Millisecond))

	out = sikadev.Run(t, ctx, module, svc.Env, "go", "test", "-count=1", "-v", "./...")
	t.Logf("go test ./... in sdk/go:\n%s", sikadev.Tail(out, 80))
}
