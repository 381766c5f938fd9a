package sika

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var (
	// inlineLink is a Markdown link or image, [text](target "title"); referenceLink is a
	// reference definition, [label]: target.
	inlineLink    = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	referenceLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	inlineCode    = regexp.MustCompile("`+[^`]*`+")
)

// TestMarkdownLinks checks that every relative link of the repository's Markdown files names a
// file or directory that exists, and that an anchor into a Markdown file names one of its
// headings (GitHub's slugs). Links inside code are not links.
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
			target, anchor, _ := strings.Cut(l.target, "#")
			target, _, _ = strings.Cut(target, "?")
			if strings.Contains(target, ":") {
				continue // a URL (https:, mailto:)
			}
			resolved := path
			if target != "" {
				resolved = filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
				if strings.HasPrefix(target, "/") {
					resolved = filepath.FromSlash(strings.TrimPrefix(target, "/"))
				}
			}
			if _, err := os.Stat(resolved); err != nil {
				t.Errorf("%s:%d: link to %q: %s does not exist", path, l.line, l.target, resolved)
				continue
			}
			if anchor == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			text, err := os.ReadFile(resolved)
			if err != nil {
				return err
			}
			if !slices.Contains(headingSlugs(string(text)), anchor) {
				t.Errorf("%s:%d: link to %q: %s has no heading #%s", path, l.line, l.target, resolved, anchor)
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

// headingSlugs returns the anchors GitHub gives a Markdown text's headings: lower case, code
// marks and punctuation dropped (but - and _), spaces made -, and -1, -2… after a repeat.
func headingSlugs(text string) []string {
	var slugs []string
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		heading := strings.TrimLeft(line.text, "#")
		if len(heading) == len(line.text) || len(line.text)-len(heading) > 6 || !strings.HasPrefix(heading, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			seen[slug]++
			slug = fmt.Sprintf("%s-%d", slug, n)
		} else {
			seen[slug] = 1
		}
		slugs = append(slugs, slug)
	}
	return slugs
}

// proseLine is a line of Markdown outside fenced code, with its number (from 1).
type proseLine struct {
	number int
	text   string
}

// proseLines returns the lines of a Markdown text that are not in a fenced code block.
func proseLines(text string) []proseLine {
	var lines []proseLine
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
		lines = append(lines, proseLine{i + 1, line})
	}
	return lines
}

type markdownLink struct {
	line   int
	target string
}

// markdownLinks returns the link targets of a Markdown text, outside fenced code blocks and
// inline code.
func markdownLinks(text string) []markdownLink {
	var links []markdownLink
	for _, line := range proseLines(text) {
		prose := inlineCode.ReplaceAllString(line.text, "")
		for _, m := range inlineLink.FindAllStringSubmatch(prose, -1) {
			links = append(links, markdownLink{line.number, m[1]})
		}
		if m := referenceLink.FindStringSubmatch(prose); m != nil {
			links = append(links, markdownLink{line.number, m[1]})
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
	slugs := headingSlugs("# Sika\n## The dashboard's JSON API\n```\n# not a heading\n```\n## Scale: 1,000 payments/s\n### What `make test` does\n## Scale: 1,000 payments/s\n#hashtag\n")
	wantSlugs := []string{"sika", "the-dashboards-json-api", "scale-1000-paymentss", "what-make-test-does", "scale-1000-paymentss-1"}
	if strings.Join(slugs, " ") != strings.Join(wantSlugs, " ") {
		t.Errorf("slugs: got %q, want %q", slugs, wantSlugs)
	}
}
