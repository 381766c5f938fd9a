package openapi30

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const doc31 = `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1", "summary": "3.1 only"},
  "paths": {
    "/payments/softpay/": {"post": {
      "parameters": [{"$ref": "#/components/parameters/Idempotency-Key"}],
      "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
        "fee_charge_mode": {"anyOf": [{"$ref": "#/components/schemas/Mode"}, {"type": "null"}, {"const": ""}]},
        "amount": {"type": "string", "examples": ["1000"]}}}}}},
      "responses": {
        "201": {"content": {"application/json": {"schema": {"allOf": [
          {"$ref": "#/components/schemas/Success"},
          {"properties": {"data": {"$ref": "#/components/schemas/Mode"}}}]}}}},
        "400": {"$ref": "#/components/responses/BadRequest"}}}},
    "/networks/": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {"allOf": [
      {"$ref": "#/components/schemas/Page"},
      {"properties": {"results": {"items": {"type": "string"}}}}]}}}}}}},
    "/payments/{id}/retry/": {"parameters": [{"in": "header", "name": "Idempotency-Key", "schema": {"type": "string"}}], "post": {"responses": {}}}
  },
  "components": {
    "parameters": {"Idempotency-Key": {"in": "header", "name": "Idempotency-Key", "schema": {"type": "string"}}},
    "responses": {"BadRequest": {"description": "no"}},
    "schemas": {
      "Mode": {"type": "string", "enum": ["ADD_ON", "DEDUCTED"]},
      "Success": {"type": "object", "required": ["success", "data"], "properties": {"success": {"const": true}, "data": {}}},
      "Page": {"type": "object", "required": ["next", "results"], "properties": {
        "next": {"type": ["string", "null"], "format": "uri"}, "results": {"type": "array"}}}
    }
  }
}`

func TestConvert(t *testing.T) {
	out, err := Convert([]byte(doc31))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(out, &got))
	at := func(path ...any) any {
		var node any = got
		for _, p := range path {
			switch k := p.(type) {
			case string:
				node = node.(map[string]any)[k]
			case int:
				node = node.([]any)[k]
			}
		}
		return node
	}
	assert.Equal(t, "3.0.3", got["openapi"])
	assert.Nil(t, at("info", "summary"))
	body := at("paths", "/payments/softpay/", "post", "requestBody", "content", "application/json", "schema", "properties")
	assert.Equal(t, map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/Mode"}}, "nullable": true},
		body.(map[string]any)["fee_charge_mode"], "anyOf with null: a nullable allOf; the empty-string branch dropped")
	assert.Equal(t, map[string]any{"type": "string", "example": "1000"}, body.(map[string]any)["amount"])
	responses := at("paths", "/payments/softpay/", "post", "responses").(map[string]any)
	assert.Contains(t, responses, "201")
	assert.NotContains(t, responses, "400", "error answers are the client's *Error")
	assert.Nil(t, at("components", "responses"))
	assert.Equal(t, []any{"data"}, at("paths", "/payments/softpay/", "post", "responses", "201", "content", "application/json", "schema", "allOf", 1, "required"),
		"data is required, as Success says")
	results := at("paths", "/networks/", "get", "responses", "200", "content", "application/json", "schema", "allOf", 1)
	assert.Equal(t, "array", results.(map[string]any)["properties"].(map[string]any)["results"].(map[string]any)["type"], "results is typed as Page says")
	assert.Equal(t, []any{"results"}, results.(map[string]any)["required"])
	assert.Equal(t, map[string]any{"type": "string", "format": "uri", "nullable": true}, at("components", "schemas", "Page", "properties", "next"))
	assert.Equal(t, map[string]any{"type": "boolean", "enum": []any{true}}, at("components", "schemas", "Success", "properties", "success"))

	_, err = Convert([]byte(`{"openapi": "3.0.3"}`))
	assert.Error(t, err, "only 3.1 is converted")
}

func TestIdempotentRoutes(t *testing.T) {
	routes, err := IdempotentRoutes([]byte(doc31))
	require.NoError(t, err)
	assert.Equal(t, []string{"/payments/softpay/", "/payments/{id}/retry/"}, routes)
}
