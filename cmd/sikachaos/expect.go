package main

import (
	"fmt"
	"time"

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
	requested          decimal.Decimal
	netAmount, debited decimal.Decimal
}

// expectation is the final state a transaction must be in.
type expectation struct {
	status string // "": any final state
	code   string // failure code; "": any
	why    string
	// orExpired admits FAILED expired too: the sandbox's push expiry may come before the
	// outcome (a post-push OTP confirmed too close to it).
	orExpired bool
}

// outcomeTicks is how many sandbox ticks after its approval (or OTP) an operation decides.
func outcomeTicks(suffix string) int {
	switch suffix {
	case "006":
		return 2
	case "009":
		return 20
	}
	return 1
}

// raceWithExpiry relaxes e for a post-push OTP payment whose code reached the sandbox (at the
// latest when its confirmation was answered, otpAt) too close to the operation's expiry
// (created + sandboxPushTTL) for its outcome to come first: the sandbox then expires it,
// and FAILED expired is what the operator said.
func raceWithExpiry(e expectation, t txRow, note *txNote, created time.Time, tick time.Duration) expectation {
	if e.status == "" || e.code == "expired" || note == nil || note.otp != otpConfirmed || created.IsZero() {
		return e
	}
	decided := note.otpAt.Add(time.Duration(outcomeTicks(suffixOf(t.phone))) * tick)
	if decided.Before(created.Add(sandboxPushTTL - 500*time.Millisecond)) {
		return e
	}
	e.orExpired = true
	e.why += fmt.Sprintf(" %s before the sandbox's push expiry", round(created.Add(sandboxPushTTL).Sub(note.otpAt)))
	return e
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
