package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

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

// decodeBody reads a JSON object into dst, a pointer to a struct with json tags. Unknown
// fields are ignored. Every field whose JSON type does not fit is reported in one validation
// error, one entry per field; a body that is not JSON is 400 invalid_json.
func decodeBody(r *http.Request, dst any) error {
	body, ok := bodyFrom(r.Context())
	if !ok {
		var err error
		if body, err = readBody(r, maxJSONBody); err != nil {
			return err
		}
	}
	return decodeJSONObject(body, dst)
}

func decodeJSONObject(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var raw map[string]json.RawMessage
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
	for i := range t.NumField() {
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		msg, ok := raw[name]
		if name == "" || name == "-" || !ok {
			continue
		}
		if err := json.Unmarshal(msg, v.Field(i).Addr().Interface()); err != nil {
			verr.Add(name, typeMessage(t.Field(i).Type))
		}
	}
	return verr.Err()
}

// typeMessage says what JSON type a field expects.
func typeMessage(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
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
