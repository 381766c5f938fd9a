package main

import (
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// txRow is a transaction as Postgres holds it at the end.
type txRow struct {
	id                 uuid.UUID
	typ, status        string
	network            string
	phone, recipient   string
	failureCode        string
	run                int
	session            *uuid.UUID
	key                *string
	netAmount, debited decimal.Decimal
}

// expectation is the final state a transaction must be in.
type expectation struct {
	status string // "": any final state
	code   string // failure code; "": any
	why    string
}

// The sandbox's failures by the number's last three digits (operators.md); any other suffix
// succeeds, 005 after falling back to the second gateway.
var (
	collectionFailures = map[string]string{"001": "payer_declined", "002": "insufficient_funds", "003": "invalid_number", "004": "expired"}
	payoutFailures     = map[string]string{"001": "recipient_not_found", "002": "recipient_limit_reached", "003": "invalid_number", "004": "expired"}
)

func suffixOf(number string) string {
	if len(number) < 3 {
		return ""
	}
	return number[len(number)-3:]
}

// expect returns the state the sandbox's table promises for t, given what the merchant knows
// of it (post-push OTP networks succeed only once the code is confirmed).
func expect(t txRow, note *txNote) expectation {
	byTable := func(table map[string]string, number string) expectation {
		s := suffixOf(number)
		if code, fails := table[s]; fails {
			return expectation{status: "FAILED", code: code, why: "number ends in " + s}
		}
		return expectation{status: "SUCCESS", why: "number ends in " + s}
	}
	switch t.typ {
	case "TRANSFERT":
		return expectation{status: "SUCCESS", why: "wallet transfer"}
	case "RETRAIT":
		return byTable(payoutFailures, t.recipient)
	}
	if t.network != "MOOV_BJ" || suffixOf(t.phone) == "003" {
		return byTable(collectionFailures, t.phone)
	}
	// Post-push OTP: the outcome comes once the code is confirmed; without it, the push expires.
	state := otpUnknown
	if note != nil {
		state = note.otp
	}
	switch state {
	case otpConfirmed:
		e := byTable(collectionFailures, t.phone)
		e.why += ", OTP confirmed"
		return e
	case otpRefused, otpNotSent:
		return expectation{status: "FAILED", why: "OTP never confirmed"}
	}
	return expectation{why: "OTP confirmation unknown (its answer was lost)"}
}
