// Package openapilint_test lints the OpenAPI document the service serves (/openapi.json) with
// Redocly CLI at a pinned version (lint.sh, redocly.yaml): part of make test, so a change to
// api/openapi.yaml that the linter calls an error fails the build.
package openapilint_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sikahq/sika/api"
)

// TestServedOpenAPIDocumentLints fetches /api/v1/openapi.json from a server of this checkout
// (no database needed for the document) and runs `redocly lint` on it: zero errors passes.
// npm is required, not optional: CI has it, and a lint that skips is a lint that never runs.
func TestServedOpenAPIDocumentLints(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to lint the OpenAPI document (Node 20.19+): %v", tool, err)
		}
	}
	srv := api.NewServer(api.Config{
		PublicURL: "https://pay.example",
		JWTSecret: []byte("openapi lint secret of thirty-two bytes"),
		Logger:    slog.New(slog.DiscardHandler),
	}, nil)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d %s", rec.Code, rec.Body)
	}
	doc := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(doc, rec.Body.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./lint.sh", doc)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redocly lint of /openapi.json: %v\n%s", err, out)
	}
	t.Logf("redocly lint of /openapi.json:\n%s", out)
}
