package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
)

// opKey identifies an operation: a reference is unique per gateway and kind, as at an operator.
type opKey struct {
	gateway   string
	kind      gateway.CallbackKind
	reference string
}

// operation is one collection or payout the sandbox accepted. The fields above the blank
// line never change after creation; the others are guarded by Server.mu.
type operation struct {
	gateway     GatewayConfig
	kind        gateway.CallbackKind
	reference   string
	gatewayRef  string
	amount      decimal.Decimal
	currency    string
	network     string
	msisdn      string
	country     string
	description string
	callbackURL string
	// collection, on a refund, is the collection it gives back.
	collection *operation
	scenario   scenario
	createdAt  time.Time
	// foundAt is when status reads begin to find a 010 operation (on the real clock, as the
	// delays run); zero for the others, which are found at once.
	foundAt time.Time
	log     *slog.Logger

	status         gateway.Status
	failureCode    string
	failureMessage string
	nextAction     *gateway.NextAction
	awaitingOTP    bool // post-push OTP network: no outcome until the code is confirmed
	otpConfirmed   bool
	wrongOTPs      int
	requests       int // initiation calls received for this reference
	pushes         int // pushes or transfers actually started: 1, or the sandbox is broken
	callbacksSent  int // deliveries acknowledged with a 2xx
	callbackTries  int // delivery attempts, acknowledged or not
	timers         []*time.Timer
	// refunded, on a collection, is what its refunds not FAILED take back.
	refunded decimal.Decimal
}

// outcome is an operation's final (or reported) state.
type outcome struct {
	status  gateway.Status
	code    string
	message string
}

var succeeded = outcome{status: gateway.StatusSuccess}

func failed(code, message string) outcome {
	return outcome{status: gateway.StatusFailed, code: code, message: message}
}

// The failures the sandbox produces besides the suffix table.
var (
	expiredCollection   = failed(gateway.FailureExpired, "The customer did not approve the push in time.")
	expiredDisbursement = failed(gateway.FailureExpired, "The payout was not completed in time.")
	tooManyWrongOTPs    = failed(gateway.FailureInvalidOTP, "Three wrong OTPs were entered.")
	declinedByHand      = failed(gateway.FailurePayerDeclined, "The customer declined the payment.")
)

// maxWrongOTPs is how many wrong codes fail a post-push OTP collection.
const maxWrongOTPs = 3

// callbackMode says which callbacks an operation's outcome sends.
type callbackMode int

const (
	callbacksOnce                 callbackMode = iota
	callbacksNone                              // 007: only polling finds the outcome
	callbacksTwiceThenLatePending              // 008: duplicated, then out of order
)

// scenario is what the last three digits of the number make the sandbox do.
type scenario struct {
	suffix       string
	rejectNumber bool // 003: 400 invalid_number, no operation
	unavailable  bool // 005 on a gateway with UnavailableOn005: 503, no operation
	// paidDespite503 (012 on a gateway with UnavailableOn005): answered 503, yet the operation
	// is taken and succeeds ticks later with its signed callback (an operator breaking its word).
	paidDespite503 bool
	ticks          int // delay to the outcome; 0: never approved, the push expires (004)
	outcome        outcome
	holdResponse   bool // 006: the initiation response is held until the client gives up
	callbacks      callbackMode
	// notFoundFirst (010): the first initiation's answer is lost (the connection is dropped),
	// and for Config.NotFoundFor status reads answer NOT_FOUND and re-sends 503; the outcome
	// comes ticks after that.
	notFoundFirst bool
	// late (011): the customer is approving (once a post-push OTP is confirmed): the outcome
	// comes after Config.LateAfter, the push does not expire and a cancel is refused.
	late bool
}

// scenarioFor reads the operators.md table for msisdn on gateway gw.
func scenarioFor(msisdn string, gw GatewayConfig, kind gateway.CallbackKind) scenario {
	sc := scenario{suffix: msisdn[len(msisdn)-3:], ticks: 1, outcome: succeeded}
	byKind := func(collection, disbursement outcome) outcome {
		if kind != kindCollection { // payouts and refunds send money to the number
			return disbursement
		}
		return collection
	}
	switch sc.suffix {
	case "001":
		sc.outcome = byKind(
			failed(gateway.FailurePayerDeclined, "The customer declined the payment."),
			failed(gateway.FailureRecipientNotFound, "The recipient has no mobile-money account."))
	case "002":
		sc.outcome = byKind(
			failed(gateway.FailureInsufficientFunds, "The customer's balance is too low."),
			failed(gateway.FailureRecipientLimit, "The recipient's wallet limit would be exceeded."))
	case "003":
		sc.rejectNumber = true
	case "004":
		sc.ticks = 0
	case "005":
		sc.unavailable = gw.UnavailableOn005
	case "006":
		sc.ticks, sc.holdResponse = 2, true
	case "007":
		sc.callbacks = callbacksNone
	case "008":
		sc.callbacks = callbacksTwiceThenLatePending
	case "009":
		sc.ticks = 20
	case "010":
		sc.notFoundFirst = true
	case "011":
		sc.late = true
	case "012":
		// The first gateway answers 503 yet takes the operation, which succeeds two ticks later
		// with its signed callback; the next gateway keeps the push waiting for the customer
		// (like 004, until approved by hand or expired): the first operator reports its closed
		// attempt paid while the run is at the next gateway.
		sc.paidDespite503, sc.ticks = gw.UnavailableOn005, 2
		if !gw.UnavailableOn005 {
			sc.ticks = 0
		}
	}
	return sc
}

// Networks whose collections need an OTP or a redirect (operators.md).
var (
	prePaymentOTPNetworks = map[string]bool{"ORANGE_SN": true, "ORANGE_CI": true, "ORANGE_BF": true, "ORANGE_ML": true}
	postPushOTPNetworks   = map[string]bool{"MOOV_TG": true, "MOOV_BJ": true}
	redirectNetworks      = map[string]bool{"WAVE_SN": true, "WAVE_CI": true}
)

var (
	referencePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)
	amountPattern    = regexp.MustCompile(`^[0-9]{1,15}(\.[0-9]{1,2})?$`)
	msisdnPattern    = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	networkPattern   = regexp.MustCompile(`^[A-Z0-9]+_[A-Z]{2}$`)
	currencyPattern  = regexp.MustCompile(`^[A-Z]{3}$`)
	countryPattern   = regexp.MustCompile(`^[A-Z]{2}$`)
)

// validate checks an initiation body and returns its amount.
func (req *initiationRequest) validate() (decimal.Decimal, *apiError) {
	checks := []struct {
		field, value string
		pattern      *regexp.Regexp
		want         string
	}{
		{"reference", req.Reference, referencePattern, "1 to 128 letters, digits or _.:-"},
		{"amount", req.Amount, amountPattern, "a decimal string with at most 2 decimals"},
		{"currency", req.Currency, currencyPattern, "an ISO 4217 code"},
		{"country", req.Country, countryPattern, "an ISO 3166 alpha-2 code"},
		{"network", req.Network, networkPattern, "a network code such as MTN_BJ"},
		{"msisdn", req.MSISDN, msisdnPattern, "an E.164 number with +"},
	}
	for _, c := range checks {
		if !c.pattern.MatchString(c.value) {
			return decimal.Decimal{}, invalidRequest("%s must be %s", c.field, c.want)
		}
	}
	amount := decimal.RequireFromString(req.Amount) // the pattern admits only plain decimals
	if !amount.IsPositive() {
		return decimal.Decimal{}, invalidRequest("amount must be greater than 0")
	}
	if req.CallbackURL != "" {
		u, err := url.Parse(req.CallbackURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return decimal.Decimal{}, invalidRequest("callback_url must be an absolute http(s) URL")
		}
	}
	return amount, nil
}

// initiate answers POST /gw/{name}/v1/collections and …/disbursements.
func (s *Server) initiate(kind gateway.CallbackKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req initiationRequest
		gw, ok := s.authorizeJSON(w, r, &req)
		if !ok {
			return
		}
		amount, e := req.validate()
		if e != nil {
			writeError(w, e)
			return
		}
		log := s.log.With("gateway", gw.Name, "kind", kind, "reference", req.Reference,
			"msisdn", sika.MaskPhone(req.MSISDN, req.Country))
		sc := scenarioFor(req.MSISDN, gw, kind)
		op, created, e := s.start(gw, kind, &req, amount, sc, log, "http://"+r.Host)
		if e != nil {
			log.Info("sandbox initiation refused", "code", e.code)
			writeError(w, e)
			return
		}
		status := http.StatusOK // a replay answers the existing operation's current state
		if created {
			status = http.StatusCreated
			switch {
			case sc.holdResponse:
				s.hold(r.Context(), op.log)
			case sc.notFoundFirst:
				loseAnswer(w, op.log)
				return
			}
		}
		s.mu.Lock()
		body := op.statusBody()
		s.mu.Unlock()
		writeJSON(w, status, body)
	}
}

// start creates the operation for req, or finds the one this reference already started: a
// reference never starts a second push. created reports whether this call created it.
func (s *Server) start(gw GatewayConfig, kind gateway.CallbackKind, req *initiationRequest,
	amount decimal.Decimal, sc scenario, log *slog.Logger, baseURL string,
) (op *operation, created bool, _ *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, errClosed
	}
	key := opKey{gw.Name, kind, req.Reference}
	if op := s.ops[key]; op != nil {
		op.requests++
		if op.hidden() { // an operator still creating it does not know the reference yet
			op.log.Info("sandbox initiation refused while the operation is not found", "requests", op.requests)
			return nil, false, errUnavailable
		}
		if !op.amount.Equal(amount) || op.currency != req.Currency || op.msisdn != req.MSISDN || op.network != req.Network {
			op.log.Warn("sandbox reference reused with other details", "requests", op.requests)
			return nil, false, errConflict
		}
		op.log.Info("sandbox initiation replayed", "requests", op.requests, "status", op.status)
		return op, false, nil
	}
	var collection *operation
	if kind == kindRefund {
		var e *apiError
		if collection, e = s.refundableLocked(gw, req, amount); e != nil {
			return nil, false, e
		}
	}
	switch {
	case sc.rejectNumber:
		return nil, false, errInvalidNumber
	case sc.unavailable:
		return nil, false, errUnavailable
	case kind == kindCollection && prePaymentOTPNetworks[req.Network] && req.OTP == "":
		return nil, false, errMissingOTP
	case kind == kindCollection && prePaymentOTPNetworks[req.Network] && req.OTP != ValidOTP:
		return nil, false, errWrongOTP
	}
	op = &operation{
		gateway:     gw,
		kind:        kind,
		reference:   req.Reference,
		gatewayRef:  "SBX-" + rand.Text()[:16],
		amount:      amount,
		currency:    req.Currency,
		network:     req.Network,
		msisdn:      req.MSISDN,
		country:     req.Country,
		description: req.Description,
		callbackURL: req.CallbackURL,
		scenario:    sc,
		createdAt:   s.cfg.Now(),
		status:      gateway.StatusPending,
		requests:    1,
		pushes:      1,
		collection:  collection,
	}
	if collection != nil {
		collection.refunded = collection.refunded.Add(amount)
	}
	if sc.notFoundFirst {
		op.foundAt = time.Now().Add(s.cfg.NotFoundFor)
	}
	op.log = log.With("gateway_reference", op.gatewayRef)
	if kind == kindCollection {
		switch {
		case postPushOTPNetworks[req.Network]:
			op.awaitingOTP = true
			op.nextAction = &gateway.NextAction{Type: gateway.NextOTPConfirmation}
		case redirectNetworks[req.Network]:
			op.nextAction = &gateway.NextAction{Type: gateway.NextRedirect, URL: baseURL + checkoutPath(gw.Name, req.Reference)}
		case !prePaymentOTPNetworks[req.Network]: // the OTP already authorised the debit
			op.nextAction = &gateway.NextAction{Type: gateway.NextUSSDPush}
		}
	}
	s.ops[key] = op
	s.order = append(s.order, op)
	op.log.Info("sandbox operation created", "network", op.network, "amount", amount.StringFixed(2),
		"currency", op.currency, "suffix", sc.suffix, "awaiting_otp", op.awaitingOTP)
	if !op.awaitingOTP {
		s.armOutcomeLocked(op)
	}
	if sc.paidDespite503 {
		op.log.Warn("sandbox answers 503 to an operation it took (012)")
		return nil, false, errUnavailable
	}
	if sc.late && !op.awaitingOTP { // 011 is being approved: it does not expire
		return op, true, nil
	}
	expired := expiredCollection
	if kind != kindCollection {
		expired = expiredDisbursement
	}
	// A 010 push reaches the customer once the operator has created it.
	s.armLocked(op, s.cfg.PushTTL+op.untilFound(), func() { s.resolveLocked(op, expired, "expiry") })
	return op, true, nil
}

// hidden reports whether op is a 010 operation that the operator does not show yet.
func (op *operation) hidden() bool {
	return op.scenario.notFoundFirst && time.Now().Before(op.foundAt)
}

// untilFound is how long a 010 operation remains not found (0 for any other).
func (op *operation) untilFound() time.Duration {
	if !op.scenario.notFoundFirst {
		return 0
	}
	return max(time.Until(op.foundAt), 0)
}

// foundLocked returns the operation of key as the operator's API shows it: nil when there is
// none, or while a 010 operation is not found yet.
func (s *Server) foundLocked(key opKey) *operation {
	if op := s.ops[key]; op != nil && !op.hidden() {
		return op
	}
	return nil
}

// loseAnswer drops the connection of a 010 initiation after its request was read: the
// operation exists, but the caller gets no answer, at once (an ambiguous failure, not a
// timeout).
func loseAnswer(w http.ResponseWriter, log *slog.Logger) {
	log.Info("sandbox dropping the initiation's answer")
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // HTTP/2 cannot hand its connection over: reset the stream
}

// hold keeps a 006 initiation response back until the client gives up, HoldTimeout passes
// or the server closes: the caller sees a timeout although the operation exists.
func (s *Server) hold(ctx context.Context, log *slog.Logger) {
	log.Info("sandbox holding the initiation response", "hold_timeout", s.cfg.HoldTimeout)
	t := time.NewTimer(s.cfg.HoldTimeout)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-s.ctx.Done():
	}
}

// readStatus answers GET /gw/{name}/v1/collections/{reference} and …/disbursements/{reference}.
func (s *Server) readStatus(kind gateway.CallbackKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		gw, ok := s.authorize(w, r)
		if !ok {
			return
		}
		s.mu.Lock()
		op := s.foundLocked(opKey{gw.Name, kind, r.PathValue("reference")})
		var body statusBody
		if op != nil {
			body = op.statusBody()
			body.NextAction = nil
		}
		s.mu.Unlock()
		if op == nil {
			writeError(w, errNotFound)
			return
		}
		writeJSON(w, http.StatusOK, body)
	}
}

// confirmOTP answers POST /gw/{name}/v1/collections/{reference}/otp.
func (s *Server) confirmOTP(w http.ResponseWriter, r *http.Request) {
	var req otpRequest
	gw, ok := s.authorizeJSON(w, r, &req)
	if !ok {
		return
	}
	body, e := s.checkOTP(gw, r.PathValue("reference"), req.OTP)
	answer(w, body, e)
}

func (s *Server) checkOTP(gw GatewayConfig, reference, otp string) (statusBody, *apiError) {
	return s.onCollection(gw, reference, func(op *operation) (statusBody, *apiError) {
		switch {
		case op.otpConfirmed && otp == ValidOTP: // a retried confirmation
			return op.statusBody(), nil
		case !op.awaitingOTP:
			return statusBody{}, errNotAwaitingOTP
		case otp != ValidOTP:
			op.wrongOTPs++
			op.log.Info("sandbox otp rejected", "wrong_otps", op.wrongOTPs)
			if op.wrongOTPs >= maxWrongOTPs {
				s.resolveLocked(op, tooManyWrongOTPs, "otp")
				return statusBody{}, &apiError{http.StatusBadRequest, "invalid_otp",
					fmt.Sprintf("The OTP is wrong; the operation failed after %d wrong codes.", maxWrongOTPs)}
			}
			return statusBody{}, &apiError{http.StatusBadRequest, "invalid_otp",
				fmt.Sprintf("The OTP is wrong; %d attempts left.", maxWrongOTPs-op.wrongOTPs)}
		}
		op.awaitingOTP, op.otpConfirmed, op.nextAction = false, true, nil
		op.log.Info("sandbox otp confirmed")
		if op.scenario.late { // now being approved: its only timer, the expiry, stops
			s.stopTimersLocked(op)
		}
		s.armOutcomeLocked(op)
		return op.statusBody(), nil
	})
}

// onCollection runs act under the lock on the collection of reference at gw as the operator's
// API shows it; a closed server, or a reference it does not show, answers first.
func (s *Server) onCollection(gw GatewayConfig, reference string, act func(op *operation) (statusBody, *apiError)) (statusBody, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return statusBody{}, errClosed
	}
	op := s.foundLocked(opKey{gw.Name, kindCollection, reference})
	if op == nil {
		return statusBody{}, errNotFound
	}
	return act(op)
}

// armOutcomeLocked starts the delay to the scenario's outcome (none for 004: it expires): 011
// decides after LateAfter, 010 a number of ticks after it is found, the others a number of
// ticks from now.
func (s *Server) armOutcomeLocked(op *operation) {
	var d time.Duration
	switch {
	case op.scenario.late:
		d = s.cfg.LateAfter
	case op.scenario.ticks == 0:
		return
	default:
		d = time.Duration(op.scenario.ticks)*s.cfg.Tick + op.untilFound()
	}
	s.armLocked(op, d, func() { s.resolveLocked(op, op.scenario.outcome, "scenario") })
}

// armLocked runs fire under the lock after d unless the operation is final or the server
// closed by then. The timer counts in s.wg until it has run or been stopped.
func (s *Server) armLocked(op *operation, d time.Duration, fire func()) {
	if s.closed {
		return
	}
	s.wg.Add(1)
	op.timers = append(op.timers, time.AfterFunc(d, func() {
		defer s.wg.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || op.status.Final() {
			return
		}
		fire()
	}))
}

func (s *Server) stopTimersLocked(op *operation) {
	for _, t := range op.timers {
		if t.Stop() {
			s.wg.Done() // stopped before it ran: its func will never call Done
		}
	}
	op.timers = nil
}

// resolveLocked makes a pending operation final and sends its callbacks; by names the cause
// in the logs. A final operation never changes again.
func (s *Server) resolveLocked(op *operation, o outcome, by string) {
	if op.status.Final() {
		return
	}
	op.status, op.failureCode, op.failureMessage = o.status, o.code, o.message
	if op.collection != nil && o.status == gateway.StatusFailed { // the refund did not take the money back
		op.collection.refunded = op.collection.refunded.Sub(op.amount)
	}
	op.awaitingOTP, op.nextAction = false, nil
	s.stopTimersLocked(op)
	op.log.Info("sandbox operation resolved", "status", o.status, "failure_code", o.code, "by", by)
	s.sendCallbacksLocked(op)
}

func (op *operation) statusBody() statusBody {
	return statusBody{
		Reference:        op.reference,
		GatewayReference: op.gatewayRef,
		Status:           op.status,
		FailureCode:      op.failureCode,
		FailureMessage:   op.failureMessage,
		NextAction:       op.nextAction,
	}
}
