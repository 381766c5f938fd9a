package orange

import (
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sikahq/sika/gateway"
)

// webpaymentRequest is the body of POST /orange-money-webpay/{country}/v1/webpayment.
type webpaymentRequest struct {
	MerchantKey string      `json:"merchant_key"`
	Currency    string      `json:"currency"`
	OrderID     string      `json:"order_id"` // at most 30 characters, unique per merchant
	Amount      json.Number `json:"amount"`   // a whole number of currency units, as a JSON number
	ReturnURL   string      `json:"return_url"`
	CancelURL   string      `json:"cancel_url"`
	NotifURL    string      `json:"notif_url"`
	Lang        string      `json:"lang"`
	Reference   string      `json:"reference"` // the merchant name the payment page shows
}

// webpaymentAnswer is the answer to an initiation (201 {status, message, pay_token, payment_url,
// notif_token}); status and message are not needed.
type webpaymentAnswer struct {
	PayToken   string `json:"pay_token"`
	PaymentURL string `json:"payment_url"`
	NotifToken string `json:"notif_token"`
}

// statusRequest is the body of POST /orange-money-webpay/{country}/v1/transactionstatus.
type statusRequest struct {
	OrderID  string      `json:"order_id"`
	Amount   json.Number `json:"amount"`
	PayToken string      `json:"pay_token"`
}

// statusAnswer is the answer to a status read.
type statusAnswer struct {
	Status  string `json:"status"` // INITIATED, PENDING, SUCCESS, FAILED, EXPIRED
	OrderID string `json:"order_id"`
	TxnID   string `json:"txnid"`
}

// notification is what Orange POSTs to notif_url when a payment ends. It names the payment by
// the notif_token of the initiation's answer only: no order_id, no signature.
type notification struct {
	Status     string `json:"status"` // SUCCESS or FAILED
	NotifToken string `json:"notif_token"`
	TxnID      string `json:"txnid"`
}

// apiError is the body of Orange's error answers, {code, message, description}; code is a
// number at Orange's API gateway and may be a string elsewhere, so it is kept raw.
type apiError struct {
	Code        json.RawMessage `json:"code"`
	Message     string          `json:"message"`
	Description string          `json:"description"`
}

// String renders the error for our own error messages (never the raw body).
func (e apiError) String() string {
	var parts []string
	if code := strings.Trim(string(e.Code), `"`); code != "" && code != "null" {
		parts = append(parts, "code "+code)
	}
	for _, s := range []string{e.Message, e.Description} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, truncate(s, 160))
		}
	}
	return strings.Join(parts, ": ")
}

// Operation states of WebPay (status reads and notifications).
const (
	statusInitiated = "INITIATED" // created; the customer has not opened the payment page yet
	statusPending   = "PENDING"   // the customer is paying
	statusSuccess   = "SUCCESS"
	statusFailed    = "FAILED"
	statusExpired   = "EXPIRED" // the customer never paid
)

// operationStatus maps a WebPay status onto the gateway's. WebPay gives no reason for FAILED:
// the customer cancelled or the payment page refused their PIN or OTP, which is the payer
// declining as far as anyone can tell.
func operationStatus(ref, payToken, status string) (gateway.OperationStatus, error) {
	st := gateway.OperationStatus{Reference: ref, GatewayReference: payToken}
	switch strings.ToUpper(strings.TrimSpace(status)) {
	case statusInitiated, statusPending:
		st.Status = gateway.StatusPending
	case statusSuccess:
		st.Status = gateway.StatusSuccess
	case statusFailed:
		st.Status, st.FailureCode = gateway.StatusFailed, gateway.FailurePayerDeclined
		st.FailureMessage = "FAILED: the customer did not complete the payment on Orange's page."
	case statusExpired:
		st.Status, st.FailureCode = gateway.StatusFailed, gateway.FailureExpired
		st.FailureMessage = "EXPIRED: the customer did not pay before Orange's payment page expired."
	default:
		return gateway.OperationStatus{}, fmt.Errorf("unknown status %q", status)
	}
	return st, nil
}

// orderIDEncoding writes 16 bytes as 26 characters of [A-Z2-7], without padding.
var orderIDEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// OrderID is the WebPay order_id of a reference (a UUID, as attempt ids are): the reference's
// 16 bytes in unpadded base32, 26 characters of [A-Z2-7], within WebPay's 30. It is a pure
// function of the reference, so every retry of an initiation sends the same order_id, and
// Orange's refusal of a duplicate order_id keeps a retry from creating a second payment.
func OrderID(reference string) (string, error) {
	raw, ok := uuidBytes(reference)
	if !ok {
		return "", fmt.Errorf("reference %q is not a UUID", reference)
	}
	return orderIDEncoding.EncodeToString(raw), nil
}

// ReferenceOf reverses OrderID: the reference (a lower-case UUID) an order_id was made from.
func ReferenceOf(orderID string) (string, error) {
	raw, err := orderIDEncoding.DecodeString(orderID)
	if err != nil || len(raw) != 16 {
		return "", fmt.Errorf("order_id %q is not one of ours", orderID)
	}
	h := hex.EncodeToString(raw)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
}

// uuidBytes decodes a UUID in its canonical 8-4-4-4-12 form (either case).
func uuidBytes(s string) ([]byte, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, false
	}
	raw, err := hex.DecodeString(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	return raw, err == nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
