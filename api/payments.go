package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

type softpayRequest struct {
	Amount          string          `json:"amount"`
	Currency        string          `json:"currency"`
	Country         string          `json:"country"`
	Network         string          `json:"network"`
	CustomerPhone   string          `json:"customer_phone"`
	CustomerName    string          `json:"customer_name"`
	CustomerEmail   string          `json:"customer_email"`
	Description     string          `json:"description"`
	OTP             string          `json:"otp"`
	FeeChargeMode   *string         `json:"fee_charge_mode"`
	Metadata        json.RawMessage `json:"metadata"`
	CheckoutSession *string         `json:"checkout_session"`
}

// paymentResponse is a transaction with the customer's next action.
type paymentResponse struct {
	sika.Transaction
	NextAction gateway.NextAction `json:"next_action"`
}

// collection is a validated, priced softpay request.
type collection struct {
	country  sika.Country
	network  sika.Network
	phone    string
	otp      string
	tx       sika.Transaction
	redirect bool
}

// softpay initiates a push payment: validation, pricing and conversion, then in one Postgres
// transaction the record, its status log and the outbox row, then the payment workflow.
func (s *Server) softpay(w http.ResponseWriter, r *http.Request) error {
	var req softpayRequest
	if err := s.decodeMoneyRequest(w, r, &req); err != nil {
		return err
	}
	c, err := s.prepareCollection(r.Context(), req)
	if err != nil {
		return err
	}
	order := transactionOrder(r, c.tx, "Payment requested")
	order.OTP = c.otp
	t, outboxID, created, err := s.store.CreateTransaction(r.Context(), order,
		workflows.PaymentStart(activities.PaymentInput{TransactionID: c.tx.ID, Run: 1}))
	if err != nil {
		return err
	}
	if created {
		if awaitsInitiation(t, c.network) || c.network.OTPKind == sika.OTPPostPush {
			// The customer's next step talks to the workflow: it must be running first.
			s.startPayment(r.Context(), t, outboxID)
		} else {
			s.startPaymentAsync(r.Context(), t, outboxID)
		}
	}
	next := s.nextAction(r.Context(), t, c.network)
	writeData(w, http.StatusCreated, paymentResponse{Transaction: t, NextAction: next})
	return nil
}

// decodeMoneyRequest starts a route that creates a payment or a payout: the service-wide
// acceptance rate first (admitPayment), then the body, strictly (decodeBody).
func (s *Server) decodeMoneyRequest(w http.ResponseWriter, r *http.Request, dst any) error {
	if err := s.admitPayment(w, r); err != nil {
		return err
	}
	return decodeBody(r, dst)
}

// acceptBurst is how many collections may be admitted back to back before pacing applies.
const acceptBurst = 2

// admitPayment applies the service-wide acceptance rate (PaymentAcceptPerSecond) to collections
// and payouts together (each starts a workflow: they share what the workers can finish), paced:
// what is accepted arrives as an even flow instead of a burst at the start of each second.
func (s *Server) admitPayment(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.PaymentAcceptPerSecond <= 0 {
		return nil
	}
	rate := s.cfg.PaymentAcceptPerSecond
	// Up to two slots of queueing (at most 25 ms): a request whose slot is that close waits
	// for it rather than going away for a whole Retry-After second.
	maxWait := min(2*time.Second/time.Duration(rate), 25*time.Millisecond)
	wait, ok, err := s.cfg.Pacer.Reserve(r.Context(), "service:payment-accept", rate, acceptBurst, maxWait)
	if err != nil {
		return nil // a pacer that fails must not stop payments
	}
	if ok {
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return r.Context().Err()
			}
		}
		return nil
	}
	w.Header().Set("Retry-After", strconv.Itoa(sinceSeconds(wait)))
	return sika.Errorf(sika.CodeServiceUnavailable, "The service is at capacity; retry in a moment with the same Idempotency-Key.")
}

// moneyTarget is the amount, currency, country and network of a payment or payout request.
type moneyTarget struct {
	amount   decimal.Decimal
	currency string
	country  sika.Country
	network  sika.Network
}

// readMoneyTarget validates the fields softpay and payouts share (amount, currency, country and
// the network, named networkField in the request), recording field errors in v; a country or
// network that does not exist is a field error, a store failure an error.
func (s *Server) readMoneyTarget(ctx context.Context, v *sika.Validation, amount, currency, country, network, networkField string) (moneyTarget, error) {
	var t moneyTarget
	var err error
	t.currency = strings.ToUpper(strings.TrimSpace(currency))
	country = strings.ToUpper(strings.TrimSpace(country))
	network = strings.ToUpper(strings.TrimSpace(network))
	if len(t.currency) != 3 {
		v.Add("currency", "Must be exactly 3 characters.")
	}
	if t.amount, err = parseAmount(amount, t.currency); err != nil {
		v.Add("amount", err.Error())
	}
	if country == "" {
		v.Add("country", sika.MsgRequired)
	} else if t.country, err = s.store.CountryByISO(ctx, country); sika.ErrorCode(err) == sika.CodeNotFound {
		v.Add("country", "Unknown country.")
	} else if err != nil {
		return t, err
	}
	if network == "" {
		v.Add(networkField, sika.MsgRequired)
	} else if t.network, err = s.store.NetworkByCode(ctx, network); sika.ErrorCode(err) == sika.CodeNotFound {
		v.Add(networkField, "Unknown network.")
	} else if err != nil {
		return t, err
	}
	return t, nil
}

// prepareCollection validates a softpay request and prices it.
func (s *Server) prepareCollection(ctx context.Context, req softpayRequest) (collection, error) {
	var c collection
	var v sika.Validation
	merchant, env := tenant(ctx)
	target, err := s.readMoneyTarget(ctx, &v, req.Amount, req.Currency, req.Country, req.Network, "network")
	if err != nil {
		return c, err
	}
	amount := target.amount
	c.country, c.network, req.Currency = target.country, target.network, target.currency
	requireText(&v, "customer_name", req.CustomerName, 200)
	if req.CustomerEmail != "" && !validEmail(req.CustomerEmail) {
		v.Add("customer_email", sika.MsgInvalidEmail)
	}
	metadata, mode := readMoneyExtras(&v, req.Description, req.Metadata, req.FeeChargeMode)
	c.phone = readPhone(&v, c.country, "customer_phone", req.CustomerPhone, true)
	if err := v.Err(); err != nil {
		return c, err
	}
	if c.network.Country != c.country.ID {
		return c, sika.Errorf(sika.CodeNetworkCountry, "Network %s does not operate in %s.", c.network.Code, c.country.ISOCode)
	}
	gw, err := s.checkNetworkOpen(ctx, c.network, env, sika.DirectionInbound)
	if err != nil {
		return c, err
	}
	if c.network.OTPKind == sika.OTPPrePayment && !gateway.ConfirmsOnOwnPage(gw) {
		if c.otp = strings.TrimSpace(req.OTP); c.otp == "" {
			return c, sika.Errorf(sika.CodeOTPRequired, "%s needs a pre-payment OTP: %s", c.network.Code, c.network.OTPInstructions)
		}
	}

	// The customer pays in the country's currency; another currency is converted at the
	// current rate (spec rule 3).
	currency := c.country.DefaultCurrency
	c.tx = sika.Transaction{Currency: currency}
	if req.Currency != currency {
		rate, err := s.store.ExchangeRate(ctx, req.Currency, currency)
		if sika.ErrorCode(err) == sika.CodeNotFound {
			return c, sika.FieldError("currency", "No exchange rate from "+req.Currency+" to "+currency+".")
		}
		if err != nil {
			return c, err
		}
		original := sika.NewAmount(amount)
		c.tx.OriginalAmount, c.tx.OriginalCurrency, c.tx.ExchangeRate = &original, &req.Currency, &rate
		amount = sika.ConvertAmount(amount, rate, currency)
	}
	settings, err := s.store.MerchantSettings(ctx, merchant, env)
	if err != nil {
		return c, err
	}
	fees, err := s.priceCollection(ctx, c.network, amount, currency, settings.EffectiveFeeChargeMode(mode))
	if err != nil {
		return c, err
	}
	t := &c.tx
	if t.ID, t.Reference, err = s.newMoneyRecord("PAY"); err != nil {
		return c, err
	}
	t.Merchant, t.Environment, t.Type = merchant, env, sika.TypePayment
	setFees(t, fees)
	t.Country, t.NetworkID, t.Network = c.country.ISOCode, c.network.ID, c.network.Code
	t.CustomerName, t.CustomerEmail, t.CustomerPhone = strings.TrimSpace(req.CustomerName), strings.TrimSpace(req.CustomerEmail), c.phone
	t.Description, t.Metadata = strings.TrimSpace(req.Description), metadata
	return c, nil
}

// priceCollection computes the fees of a collection on a network and checks the network's
// limits on both what the merchant asked and what the customer will be debited.
func (s *Server) priceCollection(ctx context.Context, n sika.Network, amount decimal.Decimal, currency string, mode sika.FeeChargeMode) (sika.Fees, error) {
	merchant, env := tenant(ctx)
	pricing, err := s.store.EffectivePricing(ctx, merchant, env, n.ID, sika.DirectionInbound)
	if err != nil {
		return sika.Fees{}, err
	}
	fees, err := sika.ComputeFees(sika.DirectionInbound, amount, currency, pricing, mode)
	if err != nil {
		return fees, err
	}
	if amount.LessThan(n.MinAmount) || fees.DebitedAmount.GreaterThan(n.MaxAmount) {
		return fees, sika.Errorf(sika.CodeAmountOutOfRange, "%s accepts amounts from %s to %s %s (fees included).", n.Code,
			sika.FormatAmount(n.MinAmount), sika.FormatAmount(n.MaxAmount), currency)
	}
	return fees, nil
}

// checkNetworkOpen refuses a network that is switched off or has no gateway in the environment
// (for payouts: no gateway that can disburse), and returns the first gateway that will serve it.
func (s *Server) checkNetworkOpen(ctx context.Context, n sika.Network, env sika.Environment, dir sika.Direction) (gateway.Gateway, error) {
	if !n.IsActive {
		return nil, sika.Errorf(sika.CodeNetworkUnavailable, "%s is currently unavailable.", n.Code)
	}
	routes, err := s.store.GatewayRoutes(ctx, n.ID, env)
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		gw, err := s.cfg.Gateways.Gateway(r.Gateway)
		if err == nil && (dir == sika.DirectionInbound || gateway.SupportsPayouts(gw)) {
			return gw, nil
		}
	}
	// No route, or none of its gateways configured in this deployment (a LIVE operator
	// without credentials).
	return nil, sika.Errorf(sika.CodeNetworkUnavailable, "%s is not available in %s yet.", n.Code, env)
}

// normaliseMetadata accepts a JSON object (or nothing) of at most 8 KiB.
func normaliseMetadata(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return json.RawMessage("{}"), nil
	}
	if !strings.HasPrefix(trimmed, "{") {
		return nil, errors.New("Expected an object.")
	}
	if len(trimmed) > 8<<10 {
		return nil, errors.New("Ensure metadata is at most 8 KiB.")
	}
	return json.RawMessage(trimmed), nil
}

// startPayment starts the workflow of a committed payment and clears its outbox row; when
// Temporal cannot be reached the row stays and the sweeper starts it.
func (s *Server) startPayment(ctx context.Context, t sika.Transaction, outboxID int64) {
	s.startTransactionWorkflow(ctx, t, outboxID, "payment", workflows.StartPayment)
}

// startPaymentAsync starts the workflow after the answer has gone: the record and its outbox
// row are committed, so the payment is safe whatever happens to this start (the sweeper starts
// it otherwise); the merchant does not wait for the Temporal round trip. At most
// maxConcurrentStarts run at once.
func (s *Server) startPaymentAsync(ctx context.Context, t sika.Transaction, outboxID int64) {
	ctx = context.WithoutCancel(ctx)
	go func() {
		s.starts <- struct{}{}
		defer func() { <-s.starts }()
		s.startPayment(ctx, t, outboxID)
	}()
}

// awaitsInitiation says whether the answer to a new payment waits for the first gateway call:
// for redirect networks (the URL comes from the gateway), and in LIVE, where the operator's
// adapter decides the customer's next step (Wave and Orange WebPay send the customer to a
// payment page) and the merchant must get it in the answer.
func awaitsInitiation(t sika.Transaction, n sika.Network) bool {
	return n.Redirect || t.Environment == sika.EnvironmentLive
}

// nextAction tells the merchant what the customer does next. Redirect networks (and LIVE, see
// awaitsInitiation) need what the gateway returned, so the request waits (briefly) for the
// workflow's first gateway call.
func (s *Server) nextAction(ctx context.Context, t sika.Transaction, n sika.Network) gateway.NextAction {
	switch {
	case t.Status != sika.StatusPending:
		return gateway.NextAction{Type: gateway.NextUSSDPush}
	case n.OTPKind == sika.OTPPostPush:
		return gateway.NextAction{Type: gateway.NextOTPConfirmation}
	case !awaitsInitiation(t, n):
		return gateway.NextAction{Type: gateway.NextUSSDPush}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	var next gateway.NextAction
	err := workflows.UpdateOperation(ctx, s.cfg.Temporal, t, workflows.UpdateAwaitInitiation, nil, &next)
	if err != nil || next.Type == "" {
		if n.Redirect {
			logFrom(ctx).Warn("redirect url not known yet", "transaction", t.ID, "err", err)
			return gateway.NextAction{Type: gateway.NextRedirect}
		}
		return gateway.NextAction{Type: gateway.NextUSSDPush}
	}
	return next
}

// paymentFor loads an inbound payment of the caller.
func (s *Server) paymentFor(r *http.Request) (sika.Transaction, error) {
	return s.transactionOf(r, "Payment", func(t sika.Transaction) bool { return t.FlowDirection == sika.DirectionInbound })
}

// transactionOf loads the caller's transaction of the path's id when it is a kind (is): any
// other is not found, as another tenant's is.
func (s *Server) transactionOf(r *http.Request, kind string, is func(sika.Transaction) bool) (sika.Transaction, error) {
	t, err := tenantObject(r, kind, s.store.TransactionByID)
	if err == nil && !is(t) {
		err = sika.NotFound(kind)
	}
	return t, err
}

type confirmOTPRequest struct {
	OTP string `json:"otp"`
}

// confirmOTP sends the code a customer received after the push to the payment's workflow.
func (s *Server) confirmOTP(w http.ResponseWriter, r *http.Request, req confirmOTPRequest) error {
	if req.OTP = strings.TrimSpace(req.OTP); req.OTP == "" {
		return sika.FieldError("otp", sika.MsgRequired)
	}
	t, err := s.paymentFor(r)
	if err != nil {
		return err
	}
	if err := s.confirmPostPushOTP(r.Context(), t, req.OTP); err != nil {
		return err
	}
	return s.writeTransaction(w, r, t.ID, http.StatusOK)
}

// confirmPostPushOTP hands the code a customer received after the push to the payment's
// workflow (for the API and the hosted pages). A code refused by the gateway is a 400 on otp. A
// payment decided while the code was on its way answers as the payment stands: SUCCESS means
// the code got through (a post-push payment succeeds only once confirmed), anything else is
// not_pending.
func (s *Server) confirmPostPushOTP(ctx context.Context, t sika.Transaction, otp string) error {
	if t.Status != sika.StatusPending {
		return sika.Errorf(sika.CodeNotPending, "Payment is %s, not PENDING.", t.Status)
	}
	if n, err := s.store.NetworkByID(ctx, t.NetworkID); err != nil {
		return err
	} else if n.OTPKind != sika.OTPPostPush {
		return sika.FieldError("otp", "This payment does not take an OTP confirmation.")
	}
	uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var result workflows.PaymentResult
	err := workflows.UpdateOperation(uctx, s.cfg.Temporal, t, workflows.UpdateConfirmOTP, otp, &result)
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == workflows.ErrInvalidOTP {
		return sika.FieldError("otp", "The code is not valid.")
	}
	if err == nil {
		return nil
	}
	// The workflow no longer waits for a code (ErrNoOTPExpected: the network takes one, so the
	// payment was decided meanwhile), or could not be reached: the record says where it stands.
	current, rerr := s.store.Transaction(ctx, t.ID)
	switch {
	case rerr != nil:
		return err
	case current.Status == sika.StatusSuccess:
		return nil
	case current.Status != sika.StatusPending:
		return sika.Errorf(sika.CodeNotPending, "Payment is %s, not PENDING.", current.Status)
	}
	return err
}

type retryRequest struct {
	Network       string `json:"network"`
	CustomerPhone string `json:"customer_phone"`
}

// retry replays a FAILED inbound payment on the same transaction, as a new run.
func (s *Server) retryPayment(w http.ResponseWriter, r *http.Request, req retryRequest) error {
	t, err := s.paymentFor(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	// A request that took over its Idempotency-Key's claim after the first one died mid-way
	// (idempotent) answers the run that one started, whatever the payment's status now.
	key, fingerprint := idempotencyFrom(r)
	retryKey := store.RetryKey{Key: key, Fingerprint: fingerprint}
	if done, err := s.store.RetriedWithKey(ctx, t.ID, retryKey); err != nil || done {
		if done {
			return s.writeRetried(ctx, w, t)
		}
		return err
	}
	if !t.Retryable() { // paymentFor found an inbound payment: one that is not FAILED
		return sika.Errorf(sika.CodeNotFailed, "Payment is %s, not FAILED.", t.Status)
	}
	country, err := s.store.CountryByISO(ctx, t.Country)
	if err != nil {
		return err
	}
	var network *sika.Network
	var v sika.Validation
	if code := strings.ToUpper(strings.TrimSpace(req.Network)); code != "" {
		n, err := s.store.NetworkByCode(ctx, code)
		switch {
		case sika.ErrorCode(err) == sika.CodeNotFound:
			v.Add("network", "Unknown network.")
		case err != nil:
			return err
		case n.Country != country.ID:
			return sika.Errorf(sika.CodeNetworkCountry, "Network %s does not operate in %s.", n.Code, country.ISOCode)
		case n.OTPKind == sika.OTPPrePayment:
			return sika.Errorf(sika.CodeOTPRequired, "%s needs a new pre-payment OTP: start a new payment.", n.Code)
		default:
			network = &n
		}
	}
	phone := readPhone(&v, country, "customer_phone", req.CustomerPhone, false)
	if err := v.Err(); err != nil {
		return err
	}
	current, err := s.store.NetworkByID(ctx, t.NetworkID)
	if err != nil {
		return err
	}
	if network == nil {
		network = &current
	}
	if t.Status == sika.StatusFailed && network.OTPKind == sika.OTPPrePayment {
		return sika.Errorf(sika.CodeOTPRequired, "%s needs a new pre-payment OTP: start a new payment.", network.Code)
	}
	if _, err := s.checkNetworkOpen(ctx, *network, t.Environment, sika.DirectionInbound); err != nil {
		return err
	}
	// Another network has its own price and limits: the retry is priced again.
	var fees *sika.Fees
	if network.ID != t.NetworkID {
		f, err := s.priceCollection(ctx, *network, t.RequestedAmount.Decimal, t.Currency, t.FeeChargeMode)
		if err != nil {
			return err
		}
		fees = &f
	}
	t, outboxID, err := s.store.RetryPayment(ctx, t.Merchant, t.Environment, t.ID, retryKey, network, phone, fees, func(t sika.Transaction) store.WorkflowStart {
		return workflows.PaymentStart(activities.PaymentInput{TransactionID: t.ID, Run: t.Run})
	})
	if errors.Is(err, store.ErrRetriedWithKey) {
		return s.writeRetried(ctx, w, t)
	}
	if err != nil {
		return err
	}
	s.startPayment(ctx, t, outboxID)
	writeData(w, http.StatusOK, paymentResponse{Transaction: t, NextAction: s.nextAction(ctx, t, *network)})
	return nil
}

// writeRetried answers a retry whose Idempotency-Key already started a run: the payment as it
// stands, as the first answer would have been written (the run's workflow is started from its
// outbox row, committed with it).
func (s *Server) writeRetried(ctx context.Context, w http.ResponseWriter, t sika.Transaction) error {
	network, err := s.store.NetworkByID(ctx, t.NetworkID)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, paymentResponse{Transaction: t, NextAction: s.nextAction(ctx, t, network)})
	return nil
}

// verifyPayment always asks the gateway for the real state of the payment's latest attempt; a
// final answer that the record does not show yet is handed to the workflow, which records it.
func (s *Server) verifyPayment(w http.ResponseWriter, r *http.Request) error {
	t, err := s.paymentFor(r)
	if err != nil {
		return err
	}
	if _, err := s.recheckAtGateway(r.Context(), t); err != nil {
		return err
	}
	return s.writeTransaction(w, r, t.ID, http.StatusOK)
}

// recheckAtGateway asks the gateway about a transaction and lets its workflow record a final
// answer (workflows.RecheckAtGateway); a gateway that cannot be reached is a 503.
func (s *Server) recheckAtGateway(ctx context.Context, t sika.Transaction) (workflows.Recheck, error) {
	rc, err := workflows.RecheckAtGateway(ctx, s.cfg.Temporal, s.store, s.cfg.Gateways, t)
	switch {
	case errors.Is(err, workflows.ErrGatewayUnreachable):
		return rc, sika.Errorf(sika.CodeServiceUnavailable, "The gateway could not be reached to verify; retry shortly.")
	case err != nil:
		logFrom(ctx).Warn("verify: the workflow did not take the gateway's answer", "transaction", t.ID, "err", err)
	case rc.Disagrees:
		logFrom(ctx).Error("verify: gateway and record disagree", "transaction", t.ID, "record", t.Status, "gateway", rc.Gateway.Status)
	}
	return rc, nil
}

// newMoneyRecord gives a new money record (a transaction, a batch) its time-ordered id and its
// reference: prefix (PAY, OUT, SET, TRF, RFD, BAT) and the date.
func (s *Server) newMoneyRecord(prefix string) (uuid.UUID, string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, "", err
	}
	ref, err := sika.NewReference(prefix, s.cfg.Now())
	return id, ref, err
}

// transactionOrder is the store's order for a transaction the request creates: the record, the
// reason of its first status log, and the request's Idempotency-Key and hash, which the record
// carries so that a retry answers it (idempotencyFrom).
func transactionOrder(r *http.Request, t sika.Transaction, reason string) store.NewTransaction {
	key, fingerprint := idempotencyFrom(r)
	return store.NewTransaction{Transaction: t, IdempotencyKey: key, Fingerprint: fingerprint, Reason: reason}
}

// setNoFee writes the amounts of a transaction that carries no fee (a settlement, a wallet
// transfer): what is asked is what is debited and what arrives.
func setNoFee(t *sika.Transaction, amount decimal.Decimal) {
	a := sika.NewAmount(amount)
	t.RequestedAmount, t.DebitedAmount, t.NetAmount, t.FeeChargeMode = a, a, a, sika.FeeDeducted
}

// setFees writes a transaction's amounts and fee mode from its price (sika.Fees): what was
// asked, the fees, what is debited and the net amount.
func setFees(t *sika.Transaction, f sika.Fees) {
	t.RequestedAmount, t.ClientFee, t.DebitedAmount = sika.NewAmount(f.RequestedAmount), sika.NewAmount(f.ClientFee), sika.NewAmount(f.DebitedAmount)
	t.GatewayFee, t.PlatformFee, t.NetAmount = sika.NewAmount(f.GatewayFee), sika.NewAmount(f.PlatformFee), sika.NewAmount(f.NetAmount)
	t.FeeChargeMode = f.Mode
}

// writeTransaction answers a transaction's detail.
func (s *Server) writeTransaction(w http.ResponseWriter, r *http.Request, id uuid.UUID, status int) error {
	merchant, env := tenant(r.Context())
	d, err := s.store.TransactionDetail(r.Context(), merchant, env, id)
	return reply(w, status, d, err)
}

func (s *Server) getTransaction(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Transaction", s.store.TransactionDetail)
}

// readMoneyExtras reads what every money request carries beside its amount and target, by one
// rule: a description of 500 characters at most, metadata (normaliseMetadata) and an optional
// fee charge mode ("" when not given).
func readMoneyExtras(v *sika.Validation, description string, metadata json.RawMessage, feeChargeMode *string) (json.RawMessage, sika.FeeChargeMode) {
	maxLength(v, "description", description, 500)
	md, err := normaliseMetadata(metadata)
	if err != nil {
		v.Add("metadata", err.Error())
	}
	return md, readFeeChargeMode(v, feeChargeMode)
}

// readFeeChargeMode is an optional fee_charge_mode, ADD_ON or DEDUCTED in any case.
func readFeeChargeMode(v *sika.Validation, raw *string) sika.FeeChargeMode {
	if raw == nil || *raw == "" {
		return ""
	}
	mode := sika.FeeChargeMode(strings.ToUpper(*raw))
	if !mode.Valid() {
		v.Add("fee_charge_mode", `Must be "ADD_ON" or "DEDUCTED".`)
	}
	return mode
}

// readPhone is a phone number of the country in E.164 (sika.NormalizePhone); a missing one is
// refused when required. Without a country (itself refused) there is nothing to check it by.
func readPhone(v *sika.Validation, country sika.Country, field, raw string, required bool) string {
	if country.ID == uuid.Nil {
		return ""
	}
	if raw == "" {
		if required {
			v.Add(field, sika.MsgRequired)
		}
		return ""
	}
	phone, err := sika.NormalizePhone(country, raw)
	if err != nil {
		v.Add(field, err.Error())
	}
	return phone
}
