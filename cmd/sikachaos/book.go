package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
)

// opKind is a kind of operation of the mixed load.
type opKind string

// The operations of the load.
const (
	opFunding    opKind = "funding"     // softpay that funds a wallet before the load
	opSoftpay    opKind = "softpay"     // MTN_BJ, every sandbox suffix
	opOTP        opKind = "softpay-otp" // MOOV_BJ with confirm-otp (post-push OTP)
	opPreOTP     opKind = "softpay-pre-otp"
	opRedirect   opKind = "softpay-redirect"
	opDuplicate  opKind = "duplicate-key"   // one softpay sent 3 times at once with one key
	opCheckout   opKind = "checkout"        // session, paid on its hosted endpoint
	opPayout     opKind = "payout"          // MTN_BJ, every sandbox suffix
	opSettlement opKind = "settlement"      // to a verified payout method
	opTransfer   opKind = "wallet-transfer" // BJ <-> SN
	opRetry      opKind = "retry-failed"    // a failed payment retried by 3 concurrent requests
	// Money safety (issue 17).
	opNotFound     opKind = "not-found-then-pays" // payout or softpay to 010: answer lost, NOT_FOUND, then paid
	opLate         opKind = "pays-after-deadline" // softpay to 011: paid after the push lifetime; retried meanwhile
	opCheckoutRace opKind = "checkout-race"       // three customers pay one checkout session at once
	opKeyReuse     opKind = "key-reuse-after-5xx" // a commit's answer cut (5xx), the key reused with another amount
	opClosedPaid   opKind = "closed-attempt-paid" // softpay to 012: sandbox-a answers 503, takes it, reports it paid while the run is at sandbox-b
	// Conversion (issue 21).
	opRoundTrip opKind = "transfer-round-trip" // BJ → GN, ten 8 GNF back (refused), then 16-80 GNF back
)

// book is what the merchant's side knows at the end: every Idempotency-Key it used and what it
// was answered, the notes on the transactions it created, and the operations it could not settle.
type book struct {
	mu         sync.Mutex
	keys       map[string]*keyUse
	txs        map[uuid.UUID]*txNote
	unresolved []string
	refusals   map[string]int // definitive refusals, "kind: HTTP status code"
	sessions   int            // checkout sessions created
	hostedDup  int            // hosted payments sent again after a lost answer
	races      []*raceRecord  // checkout sessions paid by several customers at once
	reuses     []*reuseRecord // keys reused with another body after a 5xx
}

// keyUse is one Idempotency-Key and everything answered to it.
type keyUse struct {
	kind   opKind
	path   string
	txIDs  map[uuid.UUID]bool // transaction ids of its 2xx answers
	status int                // the definitive status (0: none came)
	code   string
	// maybe: some request with the key got no definitive answer (no answer, or a 5xx), so it
	// may have acted without the client knowing.
	maybe bool
}

// otpState is what the merchant knows of a post-push OTP confirmation.
type otpState int

const (
	otpNotSent   otpState = iota
	otpConfirmed          // answered 200
	otpUnknown            // no definitive answer, or a refusal after a lost answer
	otpRefused            // answered a definitive refusal (the payment was no longer waiting)
)

// txNote is what the merchant knows of one transaction it created.
type txNote struct {
	kind opKind
	otp  otpState
	// otpAt is when the confirmation's answer came: the sandbox had the code by then.
	otpAt     time.Time
	retryKeys []string
	session   uuid.UUID // hosted payments: the checkout session
	// late is what a retry sent while a pays-after-deadline payment was FAILED expired got.
	late *lateRetry
}

// lateRetry is the retry of a 011 payment sent once it was seen FAILED, while Sika still
// re-reads its attempt: it must be refused 409 outcome_unresolved.
type lateRetry struct {
	seen       string // the status the harness saw before retrying (FAILED), or SUCCESS: no retry
	sent       bool
	answer     answer
	answeredAt time.Time
	err        error
}

func newBook() *book {
	return &book{keys: map[string]*keyUse{}, txs: map[uuid.UUID]*txNote{}, refusals: map[string]int{}}
}

// keyed records the answers to one request sent with key; txOf extracts the transaction id of a
// 2xx answer. It returns the id of the final answer when it is a 2xx.
func (b *book) keyed(kind opKind, key, path string, final answer, seen []answer, err error, txOf func(answer) uuid.UUID) uuid.UUID {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.seenLocked(kind, key, path, seen, txOf)
	if err != nil {
		b.unresolved = append(b.unresolved, fmt.Sprintf("%s key %s: %v", kind, key, err))
		return uuid.Nil
	}
	if k.status == 0 || final.status/100 == 2 {
		k.status, k.code = final.status, final.code()
	}
	if final.status/100 != 2 {
		b.refusals[fmt.Sprintf("%s: %d %s", kind, final.status, final.code())]++
		return uuid.Nil
	}
	if txOf == nil {
		return uuid.Nil
	}
	return txOf(final)
}

// seen records answers to a request with key that the client did not wait out (a first
// answer taken as it came, whatever it was).
func (b *book) seen(kind opKind, key, path string, seen []answer, txOf func(answer) uuid.UUID) {
	b.mu.Lock()
	b.seenLocked(kind, key, path, seen, txOf)
	b.mu.Unlock()
}

func (b *book) seenLocked(kind opKind, key, path string, seen []answer, txOf func(answer) uuid.UUID) *keyUse {
	k := b.keys[key]
	if k == nil {
		k = &keyUse{kind: kind, path: path, txIDs: map[uuid.UUID]bool{}}
		b.keys[key] = k
	}
	for _, a := range seen {
		if a.err != nil || a.status >= 500 {
			k.maybe = true
		}
		if a.err == nil && a.status >= 200 && a.status < 300 && txOf != nil {
			if id := txOf(a); id != uuid.Nil {
				k.txIDs[id] = true
			}
		}
	}
	return k
}

// maybe reports whether a request with key may have acted without a definitive answer.
func (b *book) maybe(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keys[key] != nil && b.keys[key].maybe
}

// note returns the note of a transaction, creating it.
func (b *book) note(id uuid.UUID, kind opKind) *txNote {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.txs[id]
	if n == nil {
		n = &txNote{kind: kind}
		b.txs[id] = n
	}
	return n
}

// update changes a note under the book's lock.
func (b *book) update(id uuid.UUID, kind opKind, change func(*txNote)) {
	n := b.note(id, kind)
	b.mu.Lock()
	change(n)
	b.mu.Unlock()
}

// fail records an operation the harness could not settle.
func (b *book) fail(kind opKind, err error) {
	b.mu.Lock()
	b.unresolved = append(b.unresolved, fmt.Sprintf("%s: %v", kind, err))
	b.mu.Unlock()
}

// refusalLines returns the definitive refusals, most frequent first.
func (b *book) refusalLines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := make([]string, 0, len(b.refusals))
	for k := range b.refusals {
		lines = append(lines, k)
	}
	sort.Slice(lines, func(i, j int) bool {
		if b.refusals[lines[i]] != b.refusals[lines[j]] {
			return b.refusals[lines[i]] > b.refusals[lines[j]]
		}
		return lines[i] < lines[j]
	})
	for i, k := range lines {
		lines[i] = fmt.Sprintf("%5d  %s", b.refusals[k], k)
	}
	return lines
}

// txID reads the id of a transaction answer ({"data": {"id": …}}); txField the transaction of
// a settlement or wallet transfer answer ({"data": {"transaction": …}}).
var txID, txField = dataID("id"), dataID("transaction")

// dataID reads the id in member name of an answer's data (uuid.Nil when there is none).
func dataID(name string) func(answer) uuid.UUID {
	return func(a answer) uuid.UUID {
		var members map[string]json.RawMessage
		var id uuid.UUID
		if a.data(&members) != nil || json.Unmarshal(members[name], &id) != nil {
			return uuid.Nil
		}
		return id
	}
}

// isSuccess reports whether an answer is a 2xx.
func isSuccess(a answer) bool { return a.err == nil && a.status >= http.StatusOK && a.status < 300 }
