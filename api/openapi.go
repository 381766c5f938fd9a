package api

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/sikahq/sika/web/webapp"
)

// The OpenAPI document is written in YAML (openapi.yaml) and served as JSON. It is parsed and
// converted once, when the program starts; the served copy, whose server URLs are made absolute
// on the configured public URL, is made once per public URL.
var (
	//go:embed openapi.yaml
	openAPIYAML []byte

	openAPISource, openAPIRaw, openAPIErr = loadOpenAPI()

	// servedOpenAPI caches the served document (a servedBody) by public URL.
	servedOpenAPI sync.Map
)

// OpenAPIJSON returns the OpenAPI document as JSON, as it is written: its server URLs are
// relative to the host (`/api/v1`, `/`).
func OpenAPIJSON() ([]byte, error) {
	return bytes.Clone(openAPIRaw), openAPIErr
}

func loadOpenAPI() (*yaml.Node, []byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(openAPIYAML, &root); err != nil {
		return nil, nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	raw, err := yamlToJSON(&root, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return &root, raw, nil
}

// openAPIDocument serves the OpenAPI 3.1 document.
func (s *Server) openAPIDocument(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	doc, err := servedOpenAPIBody(s.cfg.PublicURL)
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	doc.write(w, r)
}

// servedBody is a response body kept with its gzip encoding, made once. The document is most
// of what /docs/ weighs: 525 KB of JSON, about 51 KB gzipped.
type servedBody struct{ plain, gzipped []byte }

func newServedBody(plain []byte) servedBody {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // a valid level: no error
	_, _ = zw.Write(plain)
	_ = zw.Close()
	return servedBody{plain: plain, gzipped: gz.Bytes()}
}

// write sends the body, gzipped when the client takes gzip.
func (b servedBody) write(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	body := b.plain
	if webapp.AcceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = b.gzipped
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// servedOpenAPIJSON is servedOpenAPIBody's JSON.
func servedOpenAPIJSON(publicURL string) ([]byte, error) {
	doc, err := servedOpenAPIBody(publicURL)
	return doc.plain, err
}

// servedOpenAPIBody is the document with every relative server URL (`/api/v1`, `/`) made
// absolute on publicURL; without a public URL they stay relative.
func servedOpenAPIBody(publicURL string) (servedBody, error) {
	if doc, ok := servedOpenAPI.Load(publicURL); ok {
		return doc.(servedBody), nil
	}
	if openAPIErr != nil {
		return servedBody{}, openAPIErr
	}
	doc, err := yamlToJSON(openAPISource, func(path []string, value string) string {
		if publicURL == "" || !isServerURL(path) || !strings.HasPrefix(value, "/") {
			return value
		}
		return publicURL + strings.TrimSuffix(value, "/")
	})
	if err != nil {
		return servedBody{}, err
	}
	body := newServedBody(doc)
	servedOpenAPI.Store(publicURL, body)
	return body, nil
}

// isServerURL reports whether a document path is the url of a Server Object: of the document,
// of a path item or of an operation.
func isServerURL(path []string) bool {
	n := len(path)
	if n < 3 || path[n-3] != "servers" || path[n-1] != "url" {
		return false
	}
	return n == 3 || (path[0] == "paths" && (n == 5 || n == 6))
}

// yamlToJSON converts a YAML document to indented JSON, keeping the order of its mappings
// (the document reads top-down) and resolving anchors, aliases and merge keys (`<<`). rewrite,
// when not nil, may change each string value; it is given the value's path in the document.
func yamlToJSON(doc *yaml.Node, rewrite func(path []string, value string) string) ([]byte, error) {
	c := yamlConverter{rewrite: rewrite}
	if err := c.node(doc, nil); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, c.buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

type yamlConverter struct {
	buf     bytes.Buffer
	rewrite func(path []string, value string) string
}

// maxYAMLDepth bounds the nesting of the document, so that an alias to one of its own
// ancestors fails instead of recursing forever.
const maxYAMLDepth = 64

func (c *yamlConverter) node(n *yaml.Node, path []string) error {
	if len(path) > maxYAMLDepth {
		return fmt.Errorf("line %d: nesting deeper than %d (an alias to an ancestor?)", n.Line, maxYAMLDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("expected one YAML document, got %d", len(n.Content))
		}
		return c.node(n.Content[0], path)
	case yaml.AliasNode:
		return c.node(n.Alias, path)
	case yaml.MappingNode:
		return c.mapping(n, path)
	case yaml.SequenceNode:
		c.buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				c.buf.WriteByte(',')
			}
			if err := c.node(item, append(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
		c.buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return c.scalar(n, path)
	}
	return fmt.Errorf("line %d: unsupported YAML node kind %v", n.Line, n.Kind)
}

func (c *yamlConverter) mapping(n *yaml.Node, path []string) error {
	pairs, err := mappingPairs(n)
	if err != nil {
		return err
	}
	c.buf.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			c.buf.WriteByte(',')
		}
		writeJSONString(&c.buf, p.key)
		c.buf.WriteByte(':')
		if err := c.node(p.value, append(path, p.key)); err != nil {
			return err
		}
	}
	c.buf.WriteByte('}')
	return nil
}

func (c *yamlConverter) scalar(n *yaml.Node, path []string) error {
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		value := n.Value
		if c.rewrite != nil {
			value = c.rewrite(path, value)
		}
		writeJSONString(&c.buf, value)
		return nil
	case "!!null":
		c.buf.WriteString("null")
		return nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		c.buf.Write(b)
		return nil
	}
	return fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.ShortTag())
}

type yamlPair struct {
	key   string
	value *yaml.Node
}

// mappingPairs lists the entries of a mapping in order, the entries of merged mappings (`<<`)
// in place of the merge key; an entry written in the mapping wins over a merged one, and a
// key written twice is an error.
func mappingPairs(n *yaml.Node) ([]yamlPair, error) {
	written := make(map[string]bool, len(n.Content)/2)
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		if isMergeKey(k) {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: mapping keys must be scalars", k.Line)
		}
		if written[k.Value] {
			return nil, fmt.Errorf("line %d: key %q written twice", k.Line, k.Value)
		}
		written[k.Value] = true
	}
	var pairs []yamlPair
	merged := map[string]bool{}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			pairs = append(pairs, yamlPair{k.Value, v})
			continue
		}
		sources := []*yaml.Node{v}
		if resolveAlias(v).Kind == yaml.SequenceNode {
			sources = resolveAlias(v).Content
		}
		for _, src := range sources {
			src = resolveAlias(src)
			if src.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: a merge key takes a mapping or a list of mappings", src.Line)
			}
			inner, err := mappingPairs(src)
			if err != nil {
				return nil, err
			}
			for _, p := range inner {
				if !written[p.key] && !merged[p.key] {
					merged[p.key] = true
					pairs = append(pairs, p)
				}
			}
		}
	}
	return pairs, nil
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // the newline Encode appends
}

// The documentation page: one self-contained HTML page whose style and script are inlined, so
// that the Content-Security-Policy can allow exactly them by hash and nothing else.
var (
	//go:embed docs.html
	docsTemplate string
	//go:embed docs.css
	docsCSS string
	//go:embed docs.js
	docsJS string

	docsHTML, docsCSP = buildDocsPage()
)

func buildDocsPage() (servedBody, string) {
	html := strings.NewReplacer("{{style}}", docsCSS, "{{script}}", docsJS).Replace(docsTemplate)
	csp := strings.Join([]string{
		"default-src 'self'",
		"script-src " + cspHash(docsJS),
		"style-src " + cspHash(docsCSS),
		"img-src 'self' data:",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
	return newServedBody([]byte(html)), csp
}

// cspHash is the CSP source expression allowing one inline script or style.
func cspHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// docsPage renders the document.
func (s *Server) docsPage(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	docsHTML.write(w, r)
}
