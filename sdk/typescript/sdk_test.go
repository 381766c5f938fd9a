// Package typescript_test checks the TypeScript client in this directory: its generated types
// against the OpenAPI document of the api package, and the whole client (its Node tests, built
// with tsc and run with `node --test`, and its example) against the real service, started as
// `sika dev` on the test stack of internal/testenv.
package typescript_test

import (
	"context"
	"os"
	"os/exec"
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

// TestGeneratedTypesMatchTheDocument fails when api/openapi.yaml changed and the types were not
// regenerated: the generated files record the SHA-256 of the document they were made from. It
// needs neither Node nor the network; TestTypeScriptSDK regenerates them for real.
func TestGeneratedTypesMatchTheDocument(t *testing.T) {
	sikadev.RequireDocumentSum(t, filepath.Join("src", "generated", "openapi.sha256"), "sdk/typescript/generate.sh")
}

// TestTypeScriptSDK installs the client's npm packages (npm ci, from the lock file), checks that
// a fresh generation gives the committed types, starts the service as `sika dev` does, with the
// sandbox (internal/testenv/sikadev, which also writes the fixtures no API call can make), and
// runs the client's example and its Node tests against it.
func TestTypeScriptSDK(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to test the TypeScript client (Node 18+): %v", tool, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Join(dir, "..", "..")

	sikadev.Run(t, ctx, dir, nil, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	sikadev.Run(t, ctx, dir, nil, "./generate.sh", "--check")
	// The example imports the built client (dist/, not committed): a clean clone has none yet.
	sikadev.Run(t, ctx, dir, nil, "npm", "run", "build")

	svc := sikadev.Start(t, ctx, root, "sdk-ts")
	// The example first, on the fresh service: a merchant backend that sells an order through a
	// checkout session, pays it as the customer would in TEST, and marks it paid when the
	// verified webhook comes.
	out := sikadev.Run(t, ctx, dir, svc.Env, "node", "examples/merchant-backend.mjs", "--demo", "--dev-json", svc.DevJSON)
	t.Logf("examples/merchant-backend.mjs --demo:\n%s", out)
	assert.Contains(t, out, "paid")
	t.Logf("from the start of sika dev to the example's order paid: %s", time.Since(svc.Started).Round(time.Millisecond))

	out = sikadev.Run(t, ctx, dir, svc.Env, "npm", "test")
	t.Logf("node --test:\n%s", sikadev.Tail(out, 60))
}
