package webapptest

import (
	"io/fs"
	"regexp"
	"testing"
)

var (
	externalPattern = regexp.MustCompile(`(?i)(src|href)="(https?:)?//`)
	inlinePattern   = regexp.MustCompile(`(?i)<script>|<script [^>]*>[^<]|\son[a-z]+=|javascript:|<style`)
	keyPattern      = regexp.MustCompile(`(?:[TL]|Input \S+ "[a-z_]+") "([a-z_]+)"`)
)

// eachTemplate calls fn with the path and text of every file under templates/ of fsys.
func eachTemplate(t testing.TB, fsys fs.FS, fn func(path, text string)) {
	t.Helper()
	err := fs.WalkDir(fsys, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(fsys, p)
		fn(p, string(raw))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// NothingFromAnotherOrigin fails t for a template of fsys that loads anything from another
// origin or has inline code: the Content-Security-Policy would block it.
func NothingFromAnotherOrigin(t testing.TB, fsys fs.FS) {
	t.Helper()
	eachTemplate(t, fsys, func(p, text string) {
		if m := externalPattern.FindString(text); m != "" {
			t.Errorf("%s loads %s", p, m)
		}
		if m := inlinePattern.FindString(text); m != "" {
			t.Errorf("%s has inline code: %s", p, m)
		}
	})
}

// KeysUsed are the catalogue keys the templates of each fsys name as they are (T "key",
// L "key", a field's label: Input .Form "name" "key"); keys a template builds (print "status_" .Status) are the caller's to add.
func KeysUsed(t testing.TB, fsyss ...fs.FS) map[string]bool {
	t.Helper()
	used := map[string]bool{}
	for _, fsys := range fsyss {
		eachTemplate(t, fsys, func(_, text string) {
			for _, m := range keyPattern.FindAllStringSubmatch(text, -1) {
				used[m[1]] = true
			}
		})
	}
	return used
}

// BothLanguages fails t for a key of cat that one language has and the other lacks, and for a
// key of used that the catalogue lacks.
func BothLanguages(t testing.TB, cat map[string]map[string]string, used map[string]bool) {
	t.Helper()
	fr, en := cat["fr"], cat["en"]
	for k := range fr {
		if _, ok := en[k]; !ok {
			t.Errorf("key %q has no English text", k)
		}
	}
	for k := range en {
		if _, ok := fr[k]; !ok {
			t.Errorf("key %q has no French text", k)
		}
	}
	for k := range used {
		if _, ok := fr[k]; !ok {
			t.Errorf("key %q is used but not translated", k)
		}
	}
}
