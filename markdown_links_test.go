package sika

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// inlineLink is a Markdown link or image, [text](target "title"); referenceLink is a
	// reference definition, [label]: target.
	inlineLink    = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	referenceLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	inlineCode    = regexp.MustCompile("`+[^`]*`+")
)

// TestMarkdownLinks checks that every relative link of the repository's Markdown files names a
// file or directory that exists (anchors are not checked). Links inside code are not links.
func TestMarkdownLinks(t *testing.T) {
	var files int
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		files++
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range markdownLinks(string(body)) {
			target := l.target
			if i := strings.IndexAny(target, "#?"); i >= 0 {
				target = target[:i]
			}
			if target == "" || strings.Contains(target, ":") {
				continue // an anchor in the same file, or a URL (https:, mailto:)
			}
			resolved := filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
			if strings.HasPrefix(target, "/") {
				resolved = filepath.FromSlash(strings.TrimPrefix(target, "/"))
			}
			if _, err := os.Stat(resolved); err != nil {
				t.Errorf("%s:%d: link to %q: %s does not exist", path, l.line, l.target, resolved)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Fatalf("found only %d Markdown files; is the test run from the module's root?", files)
	}
}

type markdownLink struct {
	line   int
	target string
}

// markdownLinks returns the link targets of a Markdown text, outside fenced code blocks and
// inline code.
func markdownLinks(text string) []markdownLink {
	var links []markdownLink
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			links = append(links, markdownLink{i + 1, m[1]})
		}
		if m := referenceLink.FindStringSubmatch(line); m != nil {
			links = append(links, markdownLink{i + 1, m[1]})
		}
	}
	return links
}

func TestMarkdownLinksParsing(t *testing.T) {
	text := "See [the guide](docs/a.md#top) and ![img](img/x.png \"t\").\n" +
		"`[not](code.md)` and [ref]: docs/b.md\n" +
		"[ref]: docs/c.md\n" +
		"```go\nx := f[a](b)\n```\n" +
		"[site](https://example.com) [here](#anchor)\n"
	var got []string
	for _, l := range markdownLinks(text) {
		got = append(got, l.target)
	}
	want := []string{"docs/a.md#top", "img/x.png", "docs/c.md", "https://example.com", "#anchor"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
}
