package wave

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sikahq/sika/gateway"
)

// Wave's checkout_status values.
const (
	checkoutOpen     = "open"
	checkoutComplete = "complete"
	checkoutExpired  = "expired"
)

// Wave's payment_status values of a checkout session.
const (
	paymentProcessing = "processing"
	paymentCancelled  = "cancelled"
	paymentSucceeded  = "succeeded"
)

// Wave's payout status values.
const (
	payoutProcessing = "processing"
	payoutSucceeded  = "succeeded"
	payoutFailed     = "failed"
	payoutReversed   = "reversed"
)

// sessionRequest is the body of POST /v1/checkout/sessions.
type sessionRequest struct {
	Amount              string `json:"amount"`
	Currency            string `json:"currency"`
	ErrorURL            string `json:"error_url"`
	SuccessURL          string `json:"success_url"`
	ClientReference     string `json:"client_reference"`
	RestrictPayerMobile string `json:"restrict_payer_mobile,omitempty"`
}

// session is a checkout session as Wave renders it (answers, search results, webhook data).
type session struct {
	ID                  string        `json:"id"`
	Amount              string        `json:"amount"`
	Currency            string        `json:"currency"`
	CheckoutStatus      string        `json:"checkout_status"`
	PaymentStatus       string        `json:"payment_status"`
	ClientReference     string        `json:"client_reference"`
	LastPaymentError    *paymentError `json:"last_payment_error"`
	TransactionID       string        `json:"transaction_id"`
	WaveLaunchURL       string        `json:"wave_launch_url"`
	RestrictPayerMobile string        `json:"restrict_payer_mobile"`
	WhenCreated         string        `json:"when_created"`
	WhenExpires         string        `json:"when_expires"`
	WhenCompleted       string        `json:"when_completed"`
}

// paymentError is a session's last_payment_error.
type paymentError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// payoutRequest is the body of POST /v1/payout.
type payoutRequest struct {
	Currency        string `json:"currency"`
	ReceiveAmount   string `json:"receive_amount"`
	Mobile          string `json:"mobile"`
	Name            string `json:"name,omitempty"`
	ClientReference string `json:"client_reference"`
	PaymentReason   string `json:"payment_reason,omitempty"`
}

// payout is a payout as Wave renders it.
type payout struct {
	ID              string       `json:"id"`
	Currency        string       `json:"currency"`
	ReceiveAmount   string       `json:"receive_amount"`
	Fee             string       `json:"fee"`
	Mobile          string       `json:"mobile"`
	Name            string       `json:"name"`
	ClientReference string       `json:"client_reference"`
	PaymentReason   string       `json:"payment_reason"`
	Status          string       `json:"status"`
	PayoutError     *payoutError `json:"payout_error"`
	Timestamp       string       `json:"timestamp"`
}

// payoutError is a failed payout's payout_error.
type payoutError struct {
	ErrorCode    string `json:"error_code"`
	ErrorMessage string `json:"error_message"`
}

// searchAnswer is the answer of GET /v1/checkout/sessions/search and GET /v1/payouts/search.
type searchAnswer[T any] struct {
	Result []T `json:"result"`
}

// apiError is Wave's error answer: {code, message, details: [{loc, msg}]}.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	} `json:"details"`
}

// decodeAPIError reads an error answer; a body that is not Wave's shape gives the zero value.
func decodeAPIError(raw []byte) apiError {
	var e apiError
	_ = json.Unmarshal(raw, &e)
	return e
}

// about reports whether a validation error names field (in a detail's loc).
func (e apiError) about(field string) bool {
	for _, d := range e.Details {
		for _, l := range d.Loc {
			if s, ok := l.(string); ok && s == field {
				return true
			}
		}
	}
	return false
}

// operationStatus maps a session onto the gateway's states. A session still open is PENDING
// even after a failed attempt: its customer may pay it yet, so it is never reported FAILED
// before Wave closes it (complete, or expired).
func (s session) operationStatus(ref string) (gateway.OperationStatus, error) {
	st := gateway.OperationStatus{Reference: ref, GatewayReference: s.ID}
	if s.PaymentStatus == paymentSucceeded || s.PaymentStatus == paymentRefunded { // money moved (refunded since, maybe)
		st.Status = gateway.StatusSuccess
		return st, nil
	}
	switch s.CheckoutStatus {
	case checkoutOpen:
		st.Status = gateway.StatusPending
	case checkoutComplete:
		switch s.PaymentStatus {
		case paymentProcessing, "":
			st.Status = gateway.StatusPending
		case paymentCancelled:
			st.Status = gateway.StatusFailed
			code, message := "", "payment cancelled"
			if e := s.LastPaymentError; e != nil {
				code, message = e.Code, describe(e.Code, e.Message)
			}
			st.FailureCode, st.FailureMessage = checkoutFailureCode(code), message
		default:
			return gateway.OperationStatus{}, fmt.Errorf("unknown payment_status %q", s.PaymentStatus)
		}
	case checkoutExpired:
		st.Status, st.FailureCode, st.FailureMessage = gateway.StatusFailed, gateway.FailureExpired, "checkout session expired"
		if e := s.LastPaymentError; e != nil {
			st.FailureMessage += " after a failed payment: " + describe(e.Code, e.Message)
		}
	default:
		return gateway.OperationStatus{}, fmt.Errorf("unknown checkout_status %q", s.CheckoutStatus)
	}
	return st, nil
}

// checkoutFailureCode maps the code of a session's last_payment_error onto the gateway's
// failure codes. Wave has no code for "the customer refused": a payment the payer cancelled
// carries none, and refusals that concern the payer's account are declines too.
func checkoutFailureCode(code string) string {
	switch code {
	case "", "blocked-account", "customer-age-restricted", "cross-border-payment-not-allowed":
		return gateway.FailurePayerDeclined
	case "insufficient-funds":
		return gateway.FailureInsufficientFunds
	case "payer-mobile-mismatch": // another Wave account than restrict_payer_mobile tried to pay
		return gateway.FailureInvalidNumber
	}
	return gateway.FailureGatewayError // payment-failure, kyb-limits-exceeded (our wallet), unknown
}

// operationStatus maps a payout onto the gateway's states. A reversed payout (we took it back
// within Wave's 3 days) did not credit the beneficiary in the end: FAILED.
func (p payout) operationStatus(ref string) (gateway.OperationStatus, error) {
	st := gateway.OperationStatus{Reference: ref, GatewayReference: p.ID}
	switch p.Status {
	case payoutProcessing:
		st.Status = gateway.StatusPending
	case payoutSucceeded:
		st.Status = gateway.StatusSuccess
	case payoutFailed:
		st.Status = gateway.StatusFailed
		code, message := "", "payout failed"
		if e := p.PayoutError; e != nil {
			code, message = e.ErrorCode, describe(e.ErrorCode, e.ErrorMessage)
		}
		st.FailureCode, st.FailureMessage = payoutFailureCode(code), message
	case payoutReversed:
		st.Status, st.FailureCode, st.FailureMessage = gateway.StatusFailed, gateway.FailureGatewayError, "payout reversed"
	default:
		return gateway.OperationStatus{}, fmt.Errorf("unknown payout status %q", p.Status)
	}
	return st, nil
}

// payoutFailureCode maps a payout_error code (or the code of a refused POST /v1/payout) onto
// the gateway's failure codes.
func payoutFailureCode(code string) string {
	switch code {
	case "recipient-limit-exceeded":
		return gateway.FailureRecipientLimit
	case "recipient-account-blocked", "recipient-account-inactive", "recipient-minor", "recipient-not-found":
		return gateway.FailureRecipientNotFound
	case "country-mismatch": // the mobile belongs to another country than the wallet
		return gateway.FailureInvalidNumber
	}
	// insufficient-funds is our business wallet's, not the beneficiary's: not theirs to read
	return gateway.FailureGatewayError
}

// describe renders an operator code with its message.
func describe(code, message string) string {
	switch {
	case code == "":
		return message
	case message == "":
		return code
	}
	return code + ": " + message
}

// truncateRunes cuts s to at most n characters without splitting one, and trims spaces the cut
// may leave.
func truncateRunes(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n]))
}
