package sika

import (
	"errors"
	"fmt"
	"sort"
)

// Code is a stable, machine-readable error code that merchants test in their client code.
// The complete list, with the HTTP status of each, is in the API contract (§3); add a row there
// before adding a code here.
type Code string

// Error codes of the API contract.
const (
	CodeValidation             Code = "validation_error" // rendered as a field map, never as this code
	CodeInvalidJSON            Code = "invalid_json"
	CodeAuthenticationNeeded   Code = "authentication_required"
	CodeInvalidCredentials     Code = "invalid_credentials"
	CodeTokenExpired           Code = "token_expired"
	CodeScopeForbidden         Code = "api_key_scope_forbidden"
	CodeDashboardOnly          Code = "dashboard_only"
	CodeIPNotWhitelisted       Code = "ip_not_whitelisted"
	CodeMerchantInactive       Code = "merchant_inactive"
	CodeMerchantSuspended      Code = "merchant_suspended"
	CodeAdminOnly              Code = "admin_only"
	CodeRoleForbidden          Code = "role_forbidden"
	CodeSelfApprovalForbidden  Code = "self_approval_forbidden"
	CodeNotAwaitingApproval    Code = "not_awaiting_approval"
	CodeNotFound               Code = "not_found"
	CodeMethodNotAllowed       Code = "method_not_allowed"
	CodeNotPending             Code = "not_pending"
	CodeNotFailed              Code = "not_failed"
	CodeIdempotencyKeyReused   Code = "idempotency_key_reused"
	CodeIdempotencyKeyInUse    Code = "idempotency_key_in_use"
	CodeUsageLimitReached      Code = "usage_limit_reached"
	CodeLinkInactive           Code = "link_inactive"
	CodeSessionNotPayable      Code = "session_not_payable"
	CodePaymentInProgress      Code = "checkout_payment_in_progress"
	CodeOutcomeUnresolved      Code = "outcome_unresolved"
	CodeNotRefundable          Code = "not_refundable"
	CodeRefundExceedsPayment   Code = "refund_exceeds_payment"
	CodeRefundUnavailable      Code = "refund_unavailable"
	CodeFileTooLarge           Code = "file_too_large"
	CodeRequestTooLarge        Code = "request_too_large"
	CodeUnsupportedMediaType   Code = "unsupported_media_type"
	CodeCurrencyCountry        Code = "currency_country_mismatch"
	CodeInsufficientBalance    Code = "insufficient_balance"
	CodeWalletFrozen           Code = "wallet_frozen"
	CodeNetworkUnavailable     Code = "network_unavailable"
	CodeNetworkCountry         Code = "network_country_mismatch"
	CodeOTPRequired            Code = "otp_required"
	CodeAmountOutOfRange       Code = "amount_out_of_range"
	CodePayoutMethodUnverified Code = "payout_method_unverified"
	CodeInvoiceUnavailable     Code = "invoice_unavailable"
	CodeRateLimited            Code = "rate_limited"
	CodeInternal               Code = "internal_error"
	CodeServiceUnavailable     Code = "service_unavailable"
)

// Error is the one error type of the service. A business error carries a Code and a Message
// that is safe to show to a merchant; a validation error carries Fields, one entry per invalid
// field with its messages.
type Error struct {
	Code    Code
	Message string
	Fields  map[string][]string
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Code == CodeValidation {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("validation failed on %v", keys)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns a business error with the given code and a formatted, merchant-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns the not_found error for a kind of object ("Checkout session", "Country").
func NotFound(kind string) *Error {
	return Errorf(CodeNotFound, "%s not found.", kind)
}

// ErrorCode returns the Code of err when it is (or wraps) an *Error, and CodeInternal otherwise.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// Validation collects field errors; the zero value is ready to use.
type Validation struct {
	fields map[string][]string
}

// Add records a message for a field.
func (v *Validation) Add(field, message string) {
	if v.fields == nil {
		v.fields = make(map[string][]string)
	}
	v.fields[field] = append(v.fields[field], message)
}

// Has reports whether the field already has an error.
func (v *Validation) Has(field string) bool { return len(v.fields[field]) > 0 }

// Err returns the validation error, or nil when no field was invalid.
func (v *Validation) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &Error{Code: CodeValidation, Fields: v.fields}
}

// FieldError returns a validation error for a single field.
func FieldError(field, message string) *Error {
	return &Error{Code: CodeValidation, Fields: map[string][]string{field: {message}}}
}

// Common validation messages, worded once.
const (
	MsgRequired     = "This field is required."
	MsgNotBlank     = "This field may not be blank."
	MsgPositiveInt  = "A valid positive integer is required."
	MsgInvalidUUID  = "Must be a valid UUID."
	MsgInvalidEmail = "Enter a valid email address."
	// MsgUnknownField answers a body member the route does not declare (strict input).
	MsgUnknownField = "Unknown field: this operation does not accept it."
	// MsgReadOnly answers a PUT or PATCH that changes one of the resource's read-only fields
	// (sent back unchanged, as GET answered it, such a field is accepted and ignored).
	MsgReadOnly = "This field is read-only: send it as it is or leave it out."
	// MsgAmountNotPositive answers an amount that is a number but not above zero ("0", "-5").
	MsgAmountNotPositive = "Ensure this value is greater than 0."
	// MsgInteger and MsgMinOne answer a count (a page, a page size, a limit, a usage limit) that
	// is not an integer, or is one below 1.
	MsgInteger = "A valid integer is required."
	MsgMinOne  = "Ensure this value is greater than or equal to 1."
)
