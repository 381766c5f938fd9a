// Package webapptest is the web kit's test harness: what the tests of the dashboard and the
// console share. Its language check reads a rendered page as a visitor does (its visible text
// and the attributes a screen reader speaks) and finds the text of the other language.
package webapptest

import (
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sikahq/sika/web/webapp"
)

// otherWords are words of one language that a page of the other should not say, beyond the
// apps' catalogues: what comes from elsewhere (the store's catalogue, the API's messages, the
// status log) and would slip past a check of the catalogues alone.
var otherWords = map[string]*regexp.Regexp{
	// On a French page: English.
	"fr": regexp.MustCompile(`(?i)\b(the|and|your|with|enter|requested|payment|payout|refund|wallet|settlement|transfer|invalid|` +
		`must|should|ensure|field|address|benin|cameroon|senegal|guinea|succeeded|pending|failed)\b`),
	// On an English page: French, and the French space before a colon ("Merchant :").
	"en": regexp.MustCompile(`(?i)\b(le|la|les|des|du|une|est|vous|votre|vos|paiement|retrait|remboursement|portefeuille|valeur|` +
		`invalide|marchand|réussie|échouée|bénin|cameroun|sénégal|guinée)\b|\pL[ \x{a0}]+:`),
}

// OtherLanguage lists what a page in lang ("fr" or "en") says in the other language: each
// string of the catalogue's other language that this one does not share (a whole phrase, not
// inside a word), and the words of a short list (otherWords). Text marked with a lang attribute
// of its own (the API's English detail of a refusal, lang="en"; what a person wrote, lang=""
// for a language unknown) is the page saying which language it is, and is left out; so is code (<code>, <pre>: an event type, a payload) and an
// all-capitals word (a code of the API).
func OtherLanguage(page, lang string, cat webapp.Catalogue) []string {
	text := VisibleText(page, lang)
	other := "en"
	if lang == "en" {
		other = "fr"
	}
	var found []string
	for key, s := range cat[other] {
		if s == cat[lang][key] || !distinctive(s) || sharedBy(s, cat[lang]) {
			continue
		}
		if i := indexPhrase(text, s); i >= 0 {
			found = append(found, key+": "+quote(text, i, len(s)))
		}
	}
	for _, m := range otherWords[lang].FindAllStringIndex(text, -1) {
		if w := text[m[0]:m[1]]; len(w) > 1 && strings.ToUpper(w) == w {
			continue // a code (PAYOUT, PENDING): the API's, the same in both languages
		}
		found = append(found, quote(text, m[0], m[1]-m[0]))
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// distinctive reports whether a string says something in one language: two words or more, or
// one of five letters or more (not a code, a currency or a name of one short word).
func distinctive(s string) bool {
	if strings.ContainsAny(s, "{}%<") {
		return false
	}
	words := strings.Fields(s)
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return len(words) >= 2 && letters >= 6 || letters >= 5 && strings.ToUpper(s) != s
}

// sharedBy reports whether s stands inside one of the language's own strings ("Mali" in "Mali",
// "Wave" in "Wave"): then seeing it proves nothing.
func sharedBy(s string, own map[string]string) bool {
	for _, v := range own {
		if indexPhrase(v, s) >= 0 {
			return true
		}
	}
	return false
}

// indexPhrase is where phrase stands in text as whole words, or -1.
func indexPhrase(text, phrase string) int {
	for from := 0; ; {
		i := strings.Index(text[from:], phrase)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(phrase)
		if !letterAt(text, i-1, true) && !letterAt(text, end, false) {
			return i
		}
		from = i + 1
	}
}

// letterAt reports whether the rune just before i (before) or at i is a letter or digit.
func letterAt(s string, i int, before bool) bool {
	var r rune
	switch {
	case before && i >= 0:
		r, _ = utf8.DecodeLastRuneInString(s[:i+1])
	case !before && i < len(s):
		r, _ = utf8.DecodeRuneInString(s[i:])
	default:
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// quote is the found text, and some of what stands around it.
func quote(text string, i, n int) string {
	start, end := max(0, i-40), min(len(text), i+n+40)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	return fmt.Sprintf("%q in %q", text[i:i+n], strings.TrimSpace(text[start:end]))
}

var (
	tagPattern  = regexp.MustCompile(`(?s)<!--.*?-->|<(/?)([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>`)
	attrPattern = regexp.MustCompile(`([a-zA-Z-]+)="([^"]*)"`)
	// spokenAttrs are the attributes a visitor reads or hears.
	spokenAttrs = map[string]bool{"title": true, "aria-label": true, "placeholder": true, "alt": true, "data-copied": true, "data-copy-failed": true}
	// codeTags hold what is not prose: scripts, styles, and code (an event type, a payload).
	codeTags = map[string]bool{"script": true, "style": true, "code": true, "pre": true, "kbd": true, "samp": true}
	voidTags = map[string]bool{"br": true, "input": true, "img": true, "meta": true, "link": true, "hr": true, "source": true, "wbr": true}
)

// VisibleText is what a visitor reads or hears of a page in lang: its text and spoken
// attributes, without scripts, styles and the parts marked with another language.
func VisibleText(page, lang string) string {
	var b strings.Builder
	skip, skipTag, depth := false, "", 0
	last := 0
	for _, m := range tagPattern.FindAllStringSubmatchIndex(page, -1) {
		if !skip {
			b.WriteString(html.UnescapeString(page[last:m[0]]))
			b.WriteByte(' ')
		}
		last = m[1]
		if m[4] < 0 { // a comment
			continue
		}
		closing, name, attrs := page[m[2]:m[3]] == "/", strings.ToLower(page[m[4]:m[5]]), page[m[6]:m[7]]
		if skip {
			switch {
			case name == skipTag && closing:
				depth--
				if depth == 0 {
					skip = false
				}
			case name == skipTag && !voidTags[name] && !strings.HasSuffix(attrs, "/"):
				depth++
			}
			continue
		}
		if closing {
			continue
		}
		marked, hasLang := "", false
		for _, a := range attrPattern.FindAllStringSubmatch(attrs, -1) {
			switch {
			case a[1] == "lang" || a[1] == "hreflang":
				if a[1] == "lang" {
					marked, hasLang = a[2], true
				}
			case spokenAttrs[a[1]]:
				b.WriteString(html.UnescapeString(a[2]))
				b.WriteByte(' ')
			}
		}
		if codeTags[name] || hasLang && marked != lang && name != "html" {
			if !voidTags[name] {
				skip, skipTag, depth = true, name, 1
			}
		}
	}
	if !skip {
		b.WriteString(html.UnescapeString(page[last:]))
	}
	return strings.Join(strings.FieldsFunc(b.String(), func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' }), " ")
}
