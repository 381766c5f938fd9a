package sika

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// The codes the client gives to what has no code of its own in the API's error envelope. The
// API's codes are the generated ErrorCode constants (ErrorCodeNotFound, ErrorCodeNotPending,
// ErrorCodeInsufficientBalance, …), one per code of the contract.
const (
	// CodeValidation is a 400 whose envelope maps fields to messages (Error.Fields).
	CodeValidation ErrorCode = "validation_error"
	// CodeConnection is no answer: a network error, a refused or cut connection, a timeout.
	// The call may or may not have been carried out: retry it with the same Idempotency-Key.
	CodeConnection ErrorCode = "connection_error"
	// CodeUnexpectedResponse is an answer that is not 2xx and not in the error envelope (a
	// proxy's page, say).
	CodeUnexpectedResponse ErrorCode = "unexpected_response"
)

// Error is an answer of the API that is not 2xx (or no answer: Code CodeConnection). Test its
// Code, with errors.As or errors.Is:
//
//	var e *sika.Error
//	if errors.As(err, &e) && e.Code == sika.ErrorCodeInsufficientBalance { … }
//	if errors.Is(err, sika.ErrorCodeNotFound) { … }
type Error struct {
	// StatusCode is the HTTP status (0 without an answer).
	StatusCode int
	// Code is the envelope's code, or CodeValidation, CodeConnection, CodeUnexpectedResponse.
	Code ErrorCode
	// Message is the envelope's message (for a validation error, the fields' messages joined).
	Message string
	// Fields are the messages of each invalid field, query parameter or header of a
	// validation error (nil otherwise).
	Fields map[string][]string
	// RequestID is the answer's X-Request-Id: quote it to support.
	RequestID string
	// RetryAfter is the answer's Retry-After (429, 503), 0 without one.
	RetryAfter time.Duration
	// Header is the answer's header (nil without an answer).
	Header http.Header
	// Err is the cause of a CodeConnection error.
	Err error
}

// Error says the status, code and message.
func (e *Error) Error() string {
	if e.StatusCode == 0 {
		return fmt.Sprintf("sika: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("sika: %d %s: %s", e.StatusCode, e.Code, e.Message)
}

// Unwrap answers the cause of a connection error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, sika.ErrorCodeX) true when err is an *Error with code X.
func (e *Error) Is(target error) bool {
	code, ok := target.(ErrorCode)
	return ok && code == e.Code
}

// Error makes an ErrorCode an error, for errors.Is(err, sika.ErrorCodeNotFound).
func (c ErrorCode) Error() string { return string(c) }

// errorFromResponse reads resp (not 2xx) into an *Error and closes its body.
func errorFromResponse(resp *http.Response) *Error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{StatusCode: resp.StatusCode, Header: resp.Header, RequestID: resp.Header.Get("X-Request-Id")}
	e.RetryAfter, _ = retryAfter(resp.Header, time.Now())
	var envelope struct {
		Success *bool           `json:"success"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &envelope) == nil && envelope.Success != nil && !*envelope.Success && len(envelope.Error) > 0 {
		var business struct {
			Code    *string `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(envelope.Error, &business) == nil && business.Code != nil && business.Message != nil {
			e.Code, e.Message = ErrorCode(*business.Code), *business.Message
			return e
		}
		var fields map[string][]string
		if resp.StatusCode == http.StatusBadRequest && json.Unmarshal(envelope.Error, &fields) == nil {
			e.Code, e.Fields = CodeValidation, fields
			names := make([]string, 0, len(fields))
			for name := range fields {
				names = append(names, name)
			}
			sort.Strings(names)
			parts := make([]string, 0, len(names))
			for _, name := range names {
				parts = append(parts, name+": "+strings.Join(fields[name], " "))
			}
			e.Message = strings.Join(parts, "; ")
			if e.Message == "" {
				e.Message = "Invalid request."
			}
			return e
		}
	}
	e.Code, e.Message = CodeUnexpectedResponse, fmt.Sprintf("HTTP %d without an error envelope", resp.StatusCode)
	return e
}
