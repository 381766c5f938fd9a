package mtnmomo

import (
	"encoding/json"
	"fmt"

	"github.com/sikahq/sika/gateway"
)

// party is MTN's payer or payee.
type party struct {
	PartyIDType string `json:"partyIdType"`
	PartyID     string `json:"partyId"`
}

// initiationBody is the body of POST requesttopay (payer), POST transfer (payee) and POST
// refund (referenceIdToRefund: the X-Reference-Id of the request-to-pay it gives back).
type initiationBody struct {
	Amount              string `json:"amount"`
	Currency            string `json:"currency"`
	ExternalID          string `json:"externalId"`
	Payer               *party `json:"payer,omitempty"`
	Payee               *party `json:"payee,omitempty"`
	PayerMessage        string `json:"payerMessage"`
	PayeeNote           string `json:"payeeNote"`
	ReferenceIDToRefund string `json:"referenceIdToRefund,omitempty"`
}

// statusBody is the answer of GET requesttopay/{ref} and transfer/{ref}, and the callback body.
type statusBody struct {
	ReferenceID            string          `json:"referenceId,omitempty"`
	Amount                 string          `json:"amount"`
	Currency               string          `json:"currency"`
	FinancialTransactionID string          `json:"financialTransactionId"`
	ExternalID             string          `json:"externalId"`
	Payer                  *party          `json:"payer,omitempty"`
	Payee                  *party          `json:"payee,omitempty"`
	Status                 string          `json:"status"`
	Reason                 json.RawMessage `json:"reason,omitempty"`
}

// reason decodes "reason", which MTN sends either as a string or as {code, message}.
func (b statusBody) reason() (code, message string) {
	if len(b.Reason) == 0 || string(b.Reason) == "null" {
		return "", ""
	}
	if json.Unmarshal(b.Reason, &code) == nil {
		return code, ""
	}
	var obj struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b.Reason, &obj)
	return obj.Code, obj.Message
}

// operationStatus maps MTN's status and reason onto the gateway's.
func (b statusBody) operationStatus(ref string, payout bool) (gateway.OperationStatus, error) {
	st := gateway.OperationStatus{Reference: ref, GatewayReference: b.FinancialTransactionID}
	code, message := b.reason()
	switch b.Status {
	case "PENDING", "CREATED", "ONGOING":
		st.Status = gateway.StatusPending
	case "SUCCESSFUL":
		st.Status = gateway.StatusSuccess
	case "FAILED", "REJECTED", "TIMEOUT":
		st.Status = gateway.StatusFailed
		if code == "" && b.Status == "REJECTED" {
			code = "APPROVAL_REJECTED"
		}
		if code == "" && b.Status == "TIMEOUT" {
			code = "EXPIRED"
		}
		st.FailureCode = FailureCode(code, payout)
		st.FailureMessage = code
		if message != "" {
			st.FailureMessage = code + ": " + message
		}
	default:
		return gateway.OperationStatus{}, fmt.Errorf("unknown status %q", b.Status)
	}
	return st, nil
}

// FailureCode maps an MTN reason onto the gateway's failure codes.
func FailureCode(reason string, payout bool) string {
	switch reason {
	case "APPROVAL_REJECTED":
		return gateway.FailurePayerDeclined
	case "EXPIRED":
		return gateway.FailureExpired
	case "PAYER_NOT_FOUND":
		return gateway.FailureInvalidNumber
	case "PAYEE_NOT_FOUND":
		if payout {
			return gateway.FailureRecipientNotFound
		}
		return gateway.FailureInvalidNumber
	case "NOT_ENOUGH_FUNDS":
		return gateway.FailureInsufficientFunds
	case "PAYER_LIMIT_REACHED", "PAYEE_LIMIT_REACHED":
		if payout {
			return gateway.FailureRecipientLimit
		}
		return gateway.FailureInsufficientFunds
	}
	return gateway.FailureGatewayError
}
