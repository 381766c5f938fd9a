package gateway

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind classifies a gateway error for routing.
type Kind int

// Error kinds.
const (
	// KindDeclined: the operator refused the operation (customer declined, insufficient funds,
	// invalid OTP). Final: never retried elsewhere.
	KindDeclined Kind = iota + 1
	// KindInvalid: the request itself is wrong (unknown number, bad amount). Final.
	KindInvalid
	// KindUnavailable: the operator did not accept the request (503, connection refused, rate
	// limited) and certainly did not act on it. Safe to send to the next gateway.
	KindUnavailable
	// KindAmbiguous: the request may have been accepted (timeout, 5xx after sending, broken
	// connection). Only a status read at the same gateway can tell.
	KindAmbiguous
	// KindAuth: our credentials were refused. Not the customer's fault; the gateway is treated
	// as unavailable for routing but alerts operators.
	KindAuth
)

func (k Kind) String() string {
	switch k {
	case KindDeclined:
		return "declined"
	case KindInvalid:
		return "invalid"
	case KindUnavailable:
		return "unavailable"
	case KindAmbiguous:
		return "ambiguous"
	case KindAuth:
		return "auth"
	}
	return "unknown"
}

// Error is a gateway failure with its kind and, for declines and invalid requests, the
// failure code shown on the transaction.
type Error struct {
	Kind    Kind
	Code    string // one of the Failure* codes
	Message string
	Err     error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("gateway %s", e.Kind)
	if e.Code != "" {
		msg += " (" + e.Code + ")"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Declined returns a decline with its failure code.
func Declined(code, message string) error {
	return &Error{Kind: KindDeclined, Code: code, Message: message}
}

// Invalid returns an invalid-request error with its failure code.
func Invalid(code, message string) error {
	return &Error{Kind: KindInvalid, Code: code, Message: message}
}

// Unavailable wraps a failure that happened before the operator accepted anything.
func Unavailable(err error) error {
	return &Error{Kind: KindUnavailable, Code: FailureGatewayUnavailable, Err: err}
}

// Ambiguous wraps a failure after which the operation may or may not exist.
func Ambiguous(err error) error {
	return &Error{Kind: KindAmbiguous, Err: err}
}

// StatusRefusal is what an operator's non-2xx answer means when the status alone says it, the
// same for every operator once its adapter has read the answers its API documents: 404 (a
// wrong base URL, country or product: no operation was reached), 429 and 503 (come back
// later) are Unavailable, nothing having been accepted; any other 5xx is Ambiguous, the
// operator may have acted on the request. It answers nil for the other statuses, which are
// the adapter's to decide.
func StatusRefusal(status int, detail error) error {
	switch {
	case status == http.StatusNotFound, status == http.StatusTooManyRequests, status == http.StatusServiceUnavailable:
		return Unavailable(detail)
	case status >= 500:
		return Ambiguous(detail)
	}
	return nil
}

// AuthFailed wraps a refusal of our credentials.
func AuthFailed(err error) error {
	return &Error{Kind: KindAuth, Code: FailureGatewayUnavailable, Err: err}
}

// KindOf returns the kind of a gateway error; an error that is not an *Error is treated as
// ambiguous, the only safe assumption about an unknown failure.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindAmbiguous
}

// CodeOf returns the failure code of a gateway error ("" when it has none).
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
