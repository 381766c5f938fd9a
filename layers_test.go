package sika

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layerRules are the arrows of ARCHITECTURE.md's Layers: the packages in a directory and under
// it must never import the listed packages. A pattern ending in "/..." also names the packages
// under it; "*" names every package of the module. Tests are left out: a test may start what it
// needs.
var layerRules = []struct {
	dir   string
	never []string
}{
	{".", []string{"*"}}, // the domain imports nothing of ours
	{"telemetry", []string{"*"}},
	{"webhook", []string{"*"}},
	{"filestore", []string{"*"}},
	{"payloadcodec", []string{"*"}},
	{"gateway", []string{"store", "activities", "workflows", "api/...", "web/...", "cmd/..."}},
	{"store", []string{"activities", "workflows", "api/...", "web/...", "cmd/..."}},
	{"activities", []string{"workflows", "api/...", "web/...", "cmd/..."}},
	{"workflows", []string{"api/...", "web/...", "cmd/..."}},
	// The web apps reach the API in process through webapp.APICall, never by importing it;
	// api/filter is a leaf they share with it.
	{"web", []string{"api", "workflows", "activities", "cmd/..."}},
	{"api", []string{"cmd/..."}},
}

const modulePath = "github.com/sikahq/sika"

// TestLayers reads the imports of every non-test Go file of the module (sdk/go is a module of
// its own and is skipped) and fails on an import against the layers.
func TestLayers(t *testing.T) {
	imports := map[string][]string{} // directory → our packages it imports (directories)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || path == filepath.Join("sdk", "go")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			if p == modulePath {
				imports[dir] = append(imports[dir], ".")
			} else if rest, ok := strings.CutPrefix(p, modulePath+"/"); ok {
				imports[dir] = append(imports[dir], rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 10 {
		t.Fatalf("found the imports of only %d packages; is the test run from the module's root?", len(imports))
	}
	under := func(dir, root string) bool {
		return dir == root || root == "." || strings.HasPrefix(dir, root+"/")
	}
	matches := func(dep, pattern string) bool {
		if pattern == "*" {
			return true
		}
		if root, ok := strings.CutSuffix(pattern, "/..."); ok {
			return dep == root || strings.HasPrefix(dep, root+"/")
		}
		return dep == pattern
	}
	for dir, deps := range imports {
		for _, rule := range layerRules {
			if rule.dir == "." && dir != "." || rule.dir != "." && !under(dir, rule.dir) {
				continue
			}
			for _, dep := range deps {
				for _, never := range rule.never {
					if matches(dep, never) && !under(dep, rule.dir) || never == "*" {
						t.Errorf("%s imports %s: against the layers of ARCHITECTURE.md (%s never imports %s)", dir, dep, rule.dir, never)
					}
				}
			}
		}
	}
	if _, err := os.Stat("ARCHITECTURE.md"); err != nil {
		t.Errorf("ARCHITECTURE.md: %v", err)
	}
}
