package webapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
)

// APICall is a request a web app makes to the JSON API in process, for a signed-in member
// acting for a merchant in an environment. It runs through the API's whole middleware chain as
// a dashboard session of that member would (authentication, rate limit, merchant standing,
// validation, idempotency), so a form of the dashboard acts through the very rules the API
// applies: the web layer holds no second copy of a money path.
type APICall struct {
	Member      sika.Member
	Merchant    uuid.UUID
	Environment sika.Environment
	// Method and Path name the route; Path is relative to /api/v1 ("/payment-links/").
	Method string
	Path   string
	Query  url.Values
	// Body is encoded as JSON when not nil.
	Body any
	// RawBody, when not nil, is sent as it is with ContentType instead of a JSON Body: a KYC
	// file goes to POST /merchant-kyc/upload/ as the multipart body the API reads, streamed, never
	// held whole in memory.
	RawBody     io.Reader
	ContentType string
	// IdempotencyKey is sent as the Idempotency-Key header; a form carries one made when the
	// form was shown, so a double submit is one operation.
	IdempotencyKey string
}

// APIAnswer is the API's answer to an APICall.
type APIAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// CallAPI is how a web app reaches the JSON API (api.Server.CallAsMember); r is the browser's
// request (its address and request id are carried over).
type CallAPI func(r *http.Request, call APICall) (APIAnswer, error)

// Decode reads a success envelope's data into v (nil: ignore it), or returns the answer's error
// as a *sika.Error: the business code and message, or the fields of a validation error.
func (a APIAnswer) Decode(v any) error {
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(a.Body, &env); err != nil {
		return fmt.Errorf("api answer %d: %w", a.Status, err)
	}
	if env.Success {
		if v == nil || len(env.Data) == 0 {
			return nil
		}
		return json.Unmarshal(env.Data, v)
	}
	if a.Status == http.StatusBadRequest {
		var fields map[string][]string
		if err := json.Unmarshal(env.Error, &fields); err == nil && len(fields) > 0 {
			return &sika.Error{Code: sika.CodeValidation, Message: "Validation failed.", Fields: fields}
		}
	}
	var be struct {
		Code    sika.Code `json:"code"`
		Message string    `json:"message"`
	}
	if err := json.Unmarshal(env.Error, &be); err != nil || be.Code == "" {
		return fmt.Errorf("api answer %d: unreadable error %q", a.Status, bytes.TrimSpace(a.Body))
	}
	return &sika.Error{Code: be.Code, Message: be.Message}
}
