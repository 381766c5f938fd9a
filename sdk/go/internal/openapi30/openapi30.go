// Package openapi30 turns the OpenAPI 3.1 document the Sika API serves into the OpenAPI 3.0
// document oapi-codegen (v2, which reads 3.0 through kin-openapi) generates the Go client from.
// The meaning is unchanged for a client; only the spelling of 3.1 idioms that 3.0 lacks:
//
//   - `openapi: 3.1.x` becomes `3.0.3`, and `info.summary` (3.1 only) is dropped;
//   - `type: [T, "null"]` becomes `type: T, nullable: true`;
//   - `anyOf: [{$ref: X}, {type: "null"}]` becomes `allOf: [{$ref: X}], nullable: true` (an
//     `anyOf` branch `{const: ""}`, "empty means the default", is dropped: a client omits the
//     field instead);
//   - `const: v` becomes `enum: [v]` (with the `type` of v when the schema has none);
//   - a schema's `examples: [a, …]` becomes `example: a`.
//
// It also spells out two allOf idioms of the document, as the TypeScript client's
// normalize-openapi.mjs does: an inline part `allOf: [{$ref: Success}, {properties: {data: X}}]`
// (or `{$ref: Page}`, `{properties: {results: {items: Y}}}`) gets the `required` and the `type`
// its $ref'd sibling declares for those properties, so that `data` is a required field and
// `results` a typed slice once oapi-codegen merges the parts.
//
// And it leaves out what the Go client does not generate: the error answers of each operation
// (4xx, 5xx, `default`) and `components.responses`. The client turns every answer that is not
// 2xx into a *sika.Error from the one error envelope (errors.go), so their per-operation schemas
// would only add some 85,000 lines of types that no call fills.
package openapi30

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Convert answers the OpenAPI 3.0 version of the 3.1 document doc (JSON), as JSON.
func Convert(doc []byte) ([]byte, error) {
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("openapi30: read the document: %w", err)
	}
	version, _ := root["openapi"].(string)
	if !strings.HasPrefix(version, "3.1") {
		return nil, fmt.Errorf("openapi30: the document is OpenAPI %q, not 3.1", version)
	}
	root["openapi"] = "3.0.3"
	if info, ok := root["info"].(map[string]any); ok {
		delete(info, "summary")
	}
	dropErrorAnswers(root)
	c := converter{root: root}
	c.allOfs(root)
	c.schemas(root, false)
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi30: write the document: %w", err)
	}
	return append(out, '\n'), nil
}

// dropErrorAnswers removes every answer but the 2xx ones from each operation, and
// components.responses, which only those answers use.
func dropErrorAnswers(root map[string]any) {
	if components, ok := root["components"].(map[string]any); ok {
		delete(components, "responses")
	}
	paths, _ := root["paths"].(map[string]any)
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			operation, _ := op.(map[string]any)
			responses, _ := operation["responses"].(map[string]any)
			for status := range responses {
				if !strings.HasPrefix(status, "2") {
					delete(responses, status)
				}
			}
		}
	}
}

type converter struct{ root map[string]any }

// resolve answers the object a local $ref ("#/components/schemas/X") names, or nil.
func (c converter) resolve(ref any) map[string]any {
	s, ok := ref.(string)
	if !ok || !strings.HasPrefix(s, "#/") {
		return nil
	}
	var node any = c.root
	for _, part := range strings.Split(s[2:], "/") {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
	}
	m, _ := node.(map[string]any)
	return m
}

// allOfs gives each inline part of an allOf the required properties and property types its
// $ref'd siblings declare (see the package comment). It runs before the 3.1 spellings change,
// on the document as served.
func (c converter) allOfs(node any) {
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			c.allOfs(v)
		}
	case map[string]any:
		if parts, ok := n["allOf"].([]any); ok {
			var bases []map[string]any
			for _, p := range parts {
				if pm, ok := p.(map[string]any); ok {
					if b := c.resolve(pm["$ref"]); b != nil {
						bases = append(bases, b)
					}
				}
			}
			for _, p := range parts {
				part, ok := p.(map[string]any)
				if !ok || part["$ref"] != nil {
					continue
				}
				props, _ := part["properties"].(map[string]any)
				required := strings_(part["required"])
				for name, s := range props {
					schema, _ := s.(map[string]any)
					for _, base := range bases {
						baseProps, _ := base["properties"].(map[string]any)
						declared, _ := baseProps[name].(map[string]any)
						if declared != nil && schema != nil && schema["type"] == nil && schema["$ref"] == nil && declared["type"] != nil {
							schema["type"] = declared["type"]
						}
						if slices.Contains(strings_(base["required"]), name) && !slices.Contains(required, name) {
							required = append(required, name)
						}
					}
				}
				if len(required) > 0 {
					slices.Sort(required)
					part["required"] = anys(required)
				}
			}
		}
		for _, v := range n {
			c.allOfs(v)
		}
	}
}

// schemaKeys are the members of an object whose values are schemas (or maps or lists of them);
// inSchema says whether the object itself is a schema. Only schemas are respelled: a media type's
// `examples` is a map of Example objects in both versions and stays as it is.
var schemaMaps = map[string]bool{"properties": true, "patternProperties": true, "schemas": true}
var schemaValues = map[string]bool{"schema": true, "items": true, "additionalProperties": true, "not": true}
var schemaLists = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true}

// schemas walks the document and respells every schema it meets (inSchema: node is one).
func (c converter) schemas(node any, inSchema bool) {
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			c.schemas(v, false)
		}
	case map[string]any:
		if inSchema {
			respell(n)
		}
		for k, v := range n {
			switch {
			case inSchema && schemaMaps[k], !inSchema && k == "schemas":
				if m, ok := v.(map[string]any); ok {
					for _, s := range m {
						c.schemas(s, true)
					}
				}
			case schemaValues[k] && (inSchema || k == "schema"):
				c.schemas(v, true)
			case inSchema && schemaLists[k]:
				if l, ok := v.([]any); ok {
					for _, s := range l {
						c.schemas(s, true)
					}
				}
			case !inSchema:
				c.schemas(v, false)
			}
		}
	}
}

// respell turns the 3.1 spellings of one schema into 3.0's (see the package comment).
func respell(s map[string]any) {
	if types, ok := s["type"].([]any); ok {
		var rest []any
		for _, t := range types {
			if t == "null" {
				s["nullable"] = true
			} else {
				rest = append(rest, t)
			}
		}
		switch len(rest) {
		case 0:
			delete(s, "type")
		case 1:
			s["type"] = rest[0]
		default: // 3.0 has no type unions: any of them
			delete(s, "type")
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, ok := s[key].([]any)
		if !ok {
			continue
		}
		var kept []any
		nullable := false
		for _, b := range branches {
			bm, _ := b.(map[string]any)
			switch {
			case bm != nil && bm["type"] == "null" && len(bm) == 1:
				nullable = true
			case bm != nil && bm["const"] == "" && len(bm) == 1 && key == "anyOf":
				// "" for the default: 3.0 clients omit the field instead.
			default:
				kept = append(kept, b)
			}
		}
		if !nullable && len(kept) == len(branches) {
			continue
		}
		if nullable {
			s["nullable"] = true
		}
		if len(kept) == 1 {
			delete(s, key)
			s["allOf"] = kept
		} else {
			s[key] = kept
		}
	}
	if v, ok := s["const"]; ok {
		delete(s, "const")
		s["enum"] = []any{v}
		if s["type"] == nil {
			switch v.(type) {
			case bool:
				s["type"] = "boolean"
			case string:
				s["type"] = "string"
			case float64:
				s["type"] = "number"
			}
		}
	}
	if ex, ok := s["examples"].([]any); ok {
		delete(s, "examples")
		if len(ex) > 0 {
			s["example"] = ex[0]
		}
	}
}

func strings_(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func anys(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// IdempotentRoutes answers the path templates ("/payments/{id}/retry/") of the POST operations
// of the document that accept an Idempotency-Key header, sorted: the client gives each call of
// them a key and keeps it on its retries.
func IdempotentRoutes(doc []byte) ([]string, error) {
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("openapi30: read the document: %w", err)
	}
	c := converter{root: root}
	paths, _ := root["paths"].(map[string]any)
	var routes []string
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		post, _ := ops["post"].(map[string]any)
		params, _ := post["parameters"].([]any)
		shared, _ := ops["parameters"].([]any)
		params = append(params, shared...)
		for _, p := range params {
			pm, _ := p.(map[string]any)
			if ref := c.resolve(pm["$ref"]); ref != nil {
				pm = ref
			}
			if pm["in"] == "header" && strings.EqualFold(fmt.Sprint(pm["name"]), "Idempotency-Key") {
				routes = append(routes, path)
				break
			}
		}
	}
	slices.Sort(routes)
	return routes, nil
}
