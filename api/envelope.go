package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/api/serviceerror"

	"github.com/sikahq/sika"
)

// envelope is the one shape of every JSON response (contract §2).
type envelope struct {
	Success bool `json:"success"`
	Data    any  `json:"data,omitempty"`
	Error   any  `json:"error,omitempty"`
}

type businessError struct {
	Code    sika.Code `json:"code"`
	Message string    `json:"message"`
}

// writeData sends a success envelope around data.
func writeData(w http.ResponseWriter, status int, data any) {
	writeJSON(w, status, envelope{Success: true, Data: data})
}

// writeJSON sends any value as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "err", err)
		status = http.StatusInternalServerError
		body = []byte(`{"success":false,"error":{"code":"internal_error","message":"An internal error occurred."}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// statusOf is THE mapping from error codes to HTTP statuses (contract §3). No other place in
// the service decides the status of an error.
func statusOf(code sika.Code) int {
	switch code {
	case sika.CodeValidation, sika.CodeInvalidJSON:
		return http.StatusBadRequest
	case sika.CodeAuthenticationNeeded, sika.CodeInvalidCredentials, sika.CodeTokenExpired:
		return http.StatusUnauthorized
	case sika.CodeScopeForbidden, sika.CodeDashboardOnly, sika.CodeIPNotWhitelisted,
		sika.CodeMerchantInactive, sika.CodeMerchantSuspended, sika.CodeAdminOnly, sika.CodeRoleForbidden,
		sika.CodeSelfApprovalForbidden:
		return http.StatusForbidden
	case sika.CodeNotFound:
		return http.StatusNotFound
	case sika.CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case sika.CodeNotPending, sika.CodeNotFailed, sika.CodeIdempotencyKeyReused, sika.CodeIdempotencyKeyInUse,
		sika.CodeUsageLimitReached, sika.CodeLinkInactive, sika.CodeSessionNotPayable, sika.CodePaymentInProgress,
		sika.CodeOutcomeUnresolved, sika.CodeNotRefundable,
		sika.CodeNotAwaitingApproval:
		return http.StatusConflict
	case sika.CodeFileTooLarge, sika.CodeRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case sika.CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case sika.CodeCurrencyCountry, sika.CodeInsufficientBalance, sika.CodeWalletFrozen, sika.CodeNetworkUnavailable,
		sika.CodeNetworkCountry, sika.CodeOTPRequired, sika.CodeAmountOutOfRange, sika.CodePayoutMethodUnverified,
		sika.CodeInvoiceUnavailable, sika.CodeRefundExceedsPayment, sika.CodeRefundUnavailable:
		return http.StatusUnprocessableEntity
	case sika.CodeRateLimited:
		return http.StatusTooManyRequests
	case sika.CodeServiceUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// writeError renders any error in the envelope. A *sika.Error is shown as it is; a dependency
// that is down becomes 503 service_unavailable; anything else is a bug: logged with the request
// id and answered 500 internal_error without leaking its text.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *sika.Error
	if !errors.As(err, &e) {
		if dependencyDown(err) {
			logFrom(r.Context()).Warn("dependency unavailable", "err", err)
			e = sika.Errorf(sika.CodeServiceUnavailable, "A dependency is unavailable; retry later with the same Idempotency-Key.")
		} else {
			logFrom(r.Context()).Error("internal error", "err", err)
			e = sika.Errorf(sika.CodeInternal, "An internal error occurred.")
		}
	}
	if e.Code == sika.CodeValidation {
		writeJSON(w, http.StatusBadRequest, envelope{Error: e.Fields})
		return
	}
	status := statusOf(e.Code)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sika"`) // RFC 9110 §11.6.1: every 401 names its scheme
	}
	writeJSON(w, status, envelope{Error: businessError{Code: e.Code, Message: e.Message}})
}

// dependencyDown reports whether err comes from Postgres, Temporal or the network being
// unreachable or going down rather than from a bug: such a request is safe to retry.
func dependencyDown(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var pgErr *pgconn.PgError
	var unavailable *serviceerror.Unavailable
	var temporalDeadline *serviceerror.DeadlineExceeded
	switch {
	case errors.As(err, &pgErr):
		// 08: connection exceptions; 57P01-57P03: the server shutting down or starting up.
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P")
	case errors.As(err, &unavailable), errors.As(err, &temporalDeadline):
		return true
	}
	// A connection cut mid-answer (Postgres stopped) reads as an unexpected EOF (found by make chaos).
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err)
}
