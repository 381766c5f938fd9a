package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika/gateway"
)

// The wire format shared by Server and Client. Amounts are decimal strings with two decimals.

// Operation kinds, spelled as in callbacks and inspection records.
const (
	kindCollection   = gateway.CallbackCollection
	kindDisbursement = gateway.CallbackDisbursement
	kindRefund       = gateway.CallbackRefund
)

// initiationRequest is the body of POST …/collections and …/disbursements (a payout has no
// otp and names its beneficiary in recipient_name).
type initiationRequest struct {
	Reference     string `json:"reference"`
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	Country       string `json:"country"`
	Network       string `json:"network"`
	MSISDN        string `json:"msisdn"`
	OTP           string `json:"otp,omitempty"`
	CustomerName  string `json:"customer_name,omitempty"`
	RecipientName string `json:"recipient_name,omitempty"`
	Description   string `json:"description,omitempty"`
	CallbackURL   string `json:"callback_url,omitempty"`
	// CollectionReference, on a refund, is the reference of the collection it gives back.
	CollectionReference string `json:"collection_reference,omitempty"`
}

// otpRequest is the body of POST …/collections/{reference}/otp.
type otpRequest struct {
	OTP string `json:"otp"`
}

// statusBody is an operation's state as initiation, status reads and OTP confirmation answer
// it; next_action only on a pending collection's initiation.
type statusBody struct {
	Reference        string              `json:"reference"`
	GatewayReference string              `json:"gateway_reference"`
	Status           gateway.Status      `json:"status"`
	FailureCode      string              `json:"failure_code"`
	FailureMessage   string              `json:"failure_message"`
	NextAction       *gateway.NextAction `json:"next_action,omitempty"`
}

func (b statusBody) operationStatus() gateway.OperationStatus {
	return gateway.OperationStatus{
		Reference:        b.Reference,
		GatewayReference: b.GatewayReference,
		Status:           b.Status,
		FailureCode:      b.FailureCode,
		FailureMessage:   b.FailureMessage,
	}
}

// callbackBody is what the sandbox POSTs to an operation's callback_url.
type callbackBody struct {
	Type             gateway.CallbackKind `json:"type"`
	Reference        string               `json:"reference"`
	GatewayReference string               `json:"gateway_reference"`
	Status           gateway.Status       `json:"status"`
	FailureCode      string               `json:"failure_code"`
	FailureMessage   string               `json:"failure_message"`
	SentAt           string               `json:"sent_at"` // RFC 3339
}

// SignatureHeader carries a callback's signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>.<raw body>" keyed with the gateway's callback secret>.
const SignatureHeader = "Sandbox-Signature"

// signatureTolerance is how far a callback's timestamp may be from the receiver's clock.
const signatureTolerance = 5 * time.Minute

// ErrInvalidSignature is wrapped by every ParseCallback error about the Sandbox-Signature
// header (missing, garbled, stale or not matching): answer such a callback 401.
var ErrInvalidSignature = errors.New("invalid " + SignatureHeader)

// sign returns the value of SignatureHeader for body at time now.
func sign(secret string, now time.Time, body []byte) string {
	t := now.Unix()
	return fmt.Sprintf("t=%d,v1=%s", t, signatureOf(secret, t, body))
}

func signatureOf(secret string, t int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t)
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// verifySignature checks a SignatureHeader value against body. Several v1 entries are
// allowed (one may match), so that a secret can be rotated; unknown entries are ignored.
func verifySignature(header string, body []byte, secret string, now time.Time) error {
	if secret == "" {
		return fmt.Errorf("%w: no callback secret is configured", ErrInvalidSignature)
	}
	if strings.TrimSpace(header) == "" {
		return fmt.Errorf("%w: the header is missing", ErrInvalidSignature)
	}
	var (
		t     int64
		haveT bool
		sigs  []string
	)
	for part := range strings.SplitSeq(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%w: garbled entry %q, want t=<unix seconds>,v1=<hex>", ErrInvalidSignature, part)
		}
		switch key {
		case "t":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: timestamp %q is not a number of seconds", ErrInvalidSignature, value)
			}
			t, haveT = n, true
		case "v1":
			sigs = append(sigs, value)
		}
	}
	if !haveT || len(sigs) == 0 {
		return fmt.Errorf("%w: want t=<unix seconds>,v1=<hex>", ErrInvalidSignature)
	}
	if age := now.Sub(time.Unix(t, 0)); age > signatureTolerance || age < -signatureTolerance {
		return fmt.Errorf("%w: timestamp is %s away from now, beyond the %s tolerance",
			ErrInvalidSignature, age.Round(time.Second), signatureTolerance)
	}
	want := []byte(signatureOf(secret, t, body))
	for _, sig := range sigs {
		if hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return fmt.Errorf("%w: the signature does not match the body", ErrInvalidSignature)
}
