package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// maxJSONBody is the largest JSON body accepted (contract §1).
const maxJSONBody = 1 << 20

// readBody reads the whole request body, refusing more than max bytes with 413
// request_too_large without reading past the limit.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, sika.Errorf(sika.CodeInvalidJSON, "The request body could not be read.")
	}
	if int64(len(body)) > max {
		return nil, sika.Errorf(sika.CodeRequestTooLarge, "The request body is larger than %d bytes.", max)
	}
	return body, nil
}

// decodeBody reads a JSON object into dst, a pointer to a struct with json tags: the route's
// declared body fields. The input is strict, as Stripe's is: a member that is not one of those
// fields (matched exactly, case included) is refused as unknown, and so is every field whose
// JSON type does not fit; all of them are reported in one validation error, one entry per
// field. Only the top-level members are checked: a field's own value (metadata, free-form) is
// the handler's to judge. A body that is not JSON is 400 invalid_json.
func decodeBody(r *http.Request, dst any) error {
	body, err := requestBody(r)
	if err != nil {
		return err
	}
	return decodeJSONObject(body, dst)
}

// requestBody is the JSON body of the request: as the idempotency layer read it, else read now
// (at most maxJSONBody).
func requestBody(r *http.Request) ([]byte, error) {
	if body, ok := bodyFrom(r.Context()); ok {
		return body, nil
	}
	return readBody(r, maxJSONBody)
}

// decodeUpdateBody is decodeBody for PUT and PATCH (decodeUpdate): current is the resource as
// GET answers it. It returns the body without the read-only members sent back unchanged.
func decodeUpdateBody(r *http.Request, dst, current any) ([]byte, error) {
	body, err := requestBody(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	return decodeUpdate(body, dst, current)
}

// noBody is decodeBody for a route that takes no body fields: an empty body or `{}` passes,
// any member is unknown.
func noBody(r *http.Request) error {
	return decodeBody(r, &struct{}{})
}

// maxUnknownFields bounds how many unknown members one answer names (the first ones in sorted
// order), so that a body made of thousands of tiny members is not answered by a far bigger
// field map. A real client never reaches it.
const maxUnknownFields = 20

func decodeJSONObject(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var raw map[string]json.RawMessage
	if err := checkStrictJSON(body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return sika.FieldError("non_field_errors", "Expected a JSON object.")
		}
		return sika.Errorf(sika.CodeInvalidJSON, "The request body is not valid JSON.")
	}
	if raw == nil { // the body was the JSON literal null
		return sika.FieldError("non_field_errors", "Expected a JSON object.")
	}
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	var verr sika.Validation
	known := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name := jsonFieldName(t.Field(i))
		if name == "" {
			continue
		}
		known[name] = true
		msg, ok := raw[name]
		if !ok {
			continue
		}
		if hasNUL(msg) {
			verr.Add(name, msgNUL)
			continue
		}
		if err := json.Unmarshal(msg, v.Field(i).Addr().Interface()); err != nil {
			verr.Add(name, typeMessage(t.Field(i).Type, msg))
		}
	}
	var unknown []string
	for name := range raw {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown[:min(len(unknown), maxUnknownFields)] {
		verr.Add(name, sika.MsgUnknownField)
	}
	return verr.Err()
}

// msgDuplicate refuses a member named twice in one object: encoding/json keeps the last, a
// proxy, a log reader or a signature check may read the first, so a body could say 1,000 to
// one reader and 5,000 to Sika.
const msgDuplicate = "Given more than once in the same object."

// checkStrictJSON refuses what encoding/json would accept by changing it: text that is not
// UTF-8 (it would be stored with U+FFFD in place of the bytes sent; 400 invalid_json) and an
// object, at any depth, that names a member twice (a field error on that name). A body that is
// not JSON passes here and fails at its decoding.
func checkStrictJSON(body []byte) error {
	if !utf8.Valid(body) {
		return sika.Errorf(sika.CodeInvalidJSON, "The request body is not valid UTF-8.")
	}
	if name, ok := duplicateMember(body); ok {
		return sika.FieldError(name, msgDuplicate)
	}
	return nil
}

// duplicateMember returns the first member name given twice in one object of body, at any
// depth; false when there is none or body is not JSON. It scans the bytes once without decoding
// them (every request body passes here): names are compared as written, unescaped only when
// they hold an escape, by a linear search in small objects and a set past smallObject names.
func duplicateMember(body []byte) (string, bool) {
	if !json.Valid(body) {
		return "", false // decoding reports it
	}
	const smallObject = 32
	type frame struct {
		object  bool
		wantKey bool
		keys    [][]byte
		set     map[string]struct{}
	}
	var stack []frame
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '"':
			end := i + 1
			for body[end] != '"' { // valid JSON: every string ends
				if body[end] == '\\' {
					end++
				}
				end++
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				f := &stack[n-1]
				key := body[i+1 : end]
				if bytes.IndexByte(key, '\\') >= 0 {
					var unescaped string
					_ = json.Unmarshal(body[i:end+1], &unescaped) // valid JSON: a valid string
					key = []byte(unescaped)
				}
				if f.set != nil {
					if _, twice := f.set[string(key)]; twice {
						return string(key), true
					}
					f.set[string(key)] = struct{}{}
				} else {
					for _, k := range f.keys {
						if bytes.Equal(k, key) {
							return string(key), true
						}
					}
					if f.keys = append(f.keys, key); len(f.keys) > smallObject {
						f.set = make(map[string]struct{}, 2*smallObject)
						for _, k := range f.keys {
							f.set[string(k)] = struct{}{}
						}
						f.keys = nil
					}
				}
				f.wantKey = false
			}
			i = end
		case '{':
			stack = append(stack, frame{object: true, wantKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = true // a member's value ended: a name comes next
			}
		}
	}
	return "", false
}

// msgNUL refuses text with a NUL character, which Postgres stores in neither text nor jsonb.
const msgNUL = "Must not contain the NUL character (\\u0000)."

// hasNUL reports whether a JSON value holds a \u0000 escape anywhere (in a string, a key, a
// nested member): an escape is a backslash preceded by an even number of backslashes.
func hasNUL(raw []byte) bool {
	for i := 0; ; {
		j := bytes.Index(raw[i:], []byte(`u0000`))
		if j < 0 {
			return false
		}
		at := i + j
		slashes := 0
		for k := at - 1; k >= 0 && raw[k] == '\\'; k-- {
			slashes++
		}
		if slashes%2 == 1 {
			return true
		}
		i = at + 1
	}
}

// decodeUpdate is decodeJSONObject for PUT and PATCH, where a client sends back the resource as
// GET answered it with some fields changed: current is that resource. A member dst does not
// take but current has is one of the resource's read-only fields (id, merchant, created_at…):
// accepted and ignored when it is unchanged (the same JSON value), refused with MsgReadOnly
// when it differs. Only members the resource does not have are unknown. It returns the body
// without the read-only members, for callers that look at which members were sent.
func decodeUpdate(body []byte, dst, current any) ([]byte, error) {
	if err := checkStrictJSON(body); err != nil {
		return body, err
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil || raw == nil {
		return body, decodeJSONObject(body, dst) // not an object: its own error
	}
	mine, err := json.Marshal(current)
	if err != nil {
		return nil, fmt.Errorf("read-only fields: %w", err)
	}
	var have map[string]json.RawMessage
	if err := json.Unmarshal(mine, &have); err != nil {
		return nil, fmt.Errorf("read-only fields: %w", err)
	}
	takes := map[string]bool{}
	for _, name := range bodyFields(dst) {
		takes[name] = true
	}
	var verr sika.Validation
	for name, value := range raw {
		was, readOnly := have[name]
		if takes[name] || !readOnly {
			continue
		}
		if !sameJSON(value, was) {
			verr.Add(name, sika.MsgReadOnly)
		}
		delete(raw, name)
	}
	rest, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("read-only fields: %w", err)
	}
	if err := decodeJSONObject(rest, dst); err != nil {
		var se *sika.Error
		if !errors.As(err, &se) || se.Code != sika.CodeValidation {
			return nil, err
		}
		for name, msgs := range se.Fields {
			for _, m := range msgs {
				verr.Add(name, m)
			}
		}
	}
	return rest, verr.Err()
}

// sameJSON reports whether two JSON values are equal as values (key order, spacing and number
// spelling aside).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(normalNumbers(x), normalNumbers(y))
}

// normalNumbers rewrites the json.Numbers of a decoded value in one spelling (1.0 and 1 alike).
func normalNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if d, err := decimal.NewFromString(v.String()); err == nil {
			return d.String()
		}
		return v.String()
	case []any:
		for i := range v {
			v[i] = normalNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = normalNumbers(v[k])
		}
	}
	return v
}

// jsonFieldName is the body member a struct field decodes ("" for a field that is not part of
// the body: untagged, unexported or tagged "-").
func jsonFieldName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// bodyFields lists the body members a request struct declares, in declaration order.
func bodyFields(dst any) []string {
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := range t.NumField() {
		if name := jsonFieldName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// typeMessage says what JSON type a field expects; raw is the value that did not fit.
func typeMessage(t reflect.Type, raw json.RawMessage) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && (trimmed[0] == '-' || trimmed[0] >= '0' && trimmed[0] <= '9') {
			return "Expected a string, not a number: send it in quotes."
		}
		return "Expected a string."
	case reflect.Bool:
		return "Expected a boolean."
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "Expected an integer."
	case reflect.Map, reflect.Struct:
		return "Expected an object."
	case reflect.Slice:
		return "Expected a list."
	}
	return "Invalid value."
}

// parseAmount reads an amount field (sika.ParseAmount) and words what is wrong with it: a
// negative number such as "-5" is a number that is not greater than 0, not a malformed one.
func parseAmount(raw, currency string) (decimal.Decimal, error) {
	d, err := sika.ParseAmount(raw, currency)
	if err == nil {
		return d, nil
	}
	if digits, negative := strings.CutPrefix(strings.TrimSpace(raw), "-"); negative && plainDecimal.MatchString(digits) {
		return decimal.Decimal{}, errors.New(sika.MsgAmountNotPositive)
	}
	return decimal.Decimal{}, err
}

// plainDecimal is an unsigned decimal number as amounts are written: digits, then optionally a
// dot and more digits.
var plainDecimal = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// atLeastOne reads an integer that must be 1 or more (a page, a page size, a limit), with a
// message that says what is wrong: not an integer, or too small.
func atLeastOne(raw string) (int, string) {
	n, err := strconv.Atoi(raw)
	switch {
	case errors.Is(err, strconv.ErrRange) && n > 0:
		return n, "" // math.MaxInt: an integer too large for int, which every caller clamps or refuses
	case err != nil:
		return 0, sika.MsgInteger
	case n < 1:
		return 0, sika.MsgMinOne
	}
	return n, ""
}

// pathUUID reads a UUID path variable; a malformed one is 404 not_found, as an unknown id is.
func pathUUID(r *http.Request, name, kind string) (uuid.UUID, error) {
	id, err := uuid.Parse(mux.Vars(r)[name])
	if err != nil {
		return uuid.Nil, sika.NotFound(kind)
	}
	return id, nil
}

// reflectSlice copies any slice into a []any.
func reflectSlice(v any) []any {
	rv := reflect.ValueOf(v)
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out
}
