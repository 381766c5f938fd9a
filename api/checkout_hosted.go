package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// hostedPayment is what a hosted page learns about a payment: never fees, gateway details or
// the merchant's metadata.
type hostedPayment struct {
	ID             uuid.UUID              `json:"id"`
	Reference      string                 `json:"reference"`
	Status         sika.TransactionStatus `json:"status"`
	Amount         sika.Amount            `json:"amount"`
	DebitedAmount  sika.Amount            `json:"debited_amount"`
	Currency       string                 `json:"currency"`
	Network        string                 `json:"network"`
	FailureCode    string                 `json:"failure_code"`
	FailureMessage string                 `json:"failure_message"`
	NextAction     *gateway.NextAction    `json:"next_action,omitempty"`
}

func newHostedPayment(t sika.Transaction) *hostedPayment {
	return &hostedPayment{ID: t.ID, Reference: t.Reference, Status: t.Status, Amount: t.Amount, DebitedAmount: t.DebitedAmount,
		Currency: t.Currency, Network: t.Network, FailureCode: t.FailureCode, FailureMessage: t.FailureMessage}
}

// checkoutStatusView is what the hosted page polls: the session's status and its latest payment.
type checkoutStatusView struct {
	Status      sika.CheckoutStatus `json:"status"`
	ExpiresAt   *time.Time          `json:"expires_at"`
	PaidAt      *time.Time          `json:"paid_at"`
	Transaction *hostedPayment      `json:"transaction"`
}

// checkoutStatus answers a session's status by its slug (public: the slug is the secret).
func (s *Server) checkoutStatus(w http.ResponseWriter, r *http.Request) error {
	c, err := s.store.CheckoutSessionBySlug(r.Context(), mux.Vars(r)["slug"])
	if err != nil {
		return err
	}
	view := checkoutStatusView{Status: c.Status, ExpiresAt: c.ExpiresAt, PaidAt: c.PaidAt}
	t, err := s.store.LatestCheckoutTransaction(r.Context(), c.ID)
	switch {
	case err == nil:
		view.Transaction = newHostedPayment(t)
	case sika.ErrorCode(err) != sika.CodeNotFound:
		return err
	}
	writeData(w, http.StatusOK, view)
	return nil
}

// hostedPayRequest is what a hosted page posts: the customer's choices. Amount and Currency are
// read only for payment links: the amount the customer chooses (FREE links, FIXED links without
// an amount) or, on a FIXED link, the amount the page showed, and the currency it showed.
type hostedPayRequest struct {
	Country       string `json:"country"`
	Network       string `json:"network"`
	CustomerPhone string `json:"customer_phone"`
	CustomerName  string `json:"customer_name"`
	CustomerEmail string `json:"customer_email"`
	OTP           string `json:"otp"`
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
}

// hostedContext is the tenancy a hosted page acts in: the merchant and environment of the
// session or link, whose standing is checked as for any call that moves money.
func (s *Server) hostedContext(ctx context.Context, merchantID uuid.UUID, env sika.Environment) (context.Context, error) {
	m, err := s.store.MerchantByID(ctx, merchantID)
	if err != nil {
		return ctx, err
	}
	p := &Principal{Merchant: &m, Environment: env}
	if err := checkMerchantStanding(p, true); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, ctxPrincipal, p), nil
}

// payCheckoutSession creates the payment of a session from its hosted page: the amount,
// currency, customer and fee mode are the session's; the page gives the network, the number
// and the pre-payment OTP. A session that is not PENDING or has expired answers 409
// session_not_payable.
func (s *Server) payCheckoutSession(w http.ResponseWriter, r *http.Request) error {
	var req hostedPayRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	c, err := s.store.CheckoutSessionBySlug(r.Context(), mux.Vars(r)["slug"])
	if err != nil {
		return err
	}
	if !c.Payable(s.cfg.Now()) {
		return sika.Errorf(sika.CodeSessionNotPayable, "Checkout session is %s and can no longer be paid.", displayCheckoutStatus(c, s.cfg.Now()))
	}
	ctx, err := s.hostedContext(r.Context(), c.Merchant, c.Environment)
	if err != nil {
		return err
	}
	country := req.Country
	if country == "" {
		country = c.Country
	}
	phone := req.CustomerPhone
	if strings.TrimSpace(phone) == "" {
		phone = c.CustomerPhone
	}
	mode := string(c.FeeChargeMode)
	col, err := s.prepareCollection(ctx, softpayRequest{
		Amount: c.Amount.StringFixed(2), Currency: c.Currency, Country: country, Network: req.Network,
		CustomerPhone: phone, CustomerName: c.CustomerName, CustomerEmail: c.CustomerEmail,
		Description: c.Description, OTP: req.OTP, FeeChargeMode: &mode, Metadata: c.Metadata,
	})
	if err != nil {
		return err
	}
	col.tx.CheckoutSession, col.tx.PaymentLink = &c.ID, c.PaymentLink
	t, outboxID, err := s.store.CreateCheckoutPayment(ctx, store.NewTransaction{
		Transaction: col.tx, OTP: col.otp, Reason: "Payment requested on the checkout page",
	}, workflows.PaymentStart(activities.PaymentInput{TransactionID: col.tx.ID, Run: 1}), s.cfg.Now())
	if err != nil {
		return err
	}
	return s.answerHostedPayment(ctx, w, t, col.network, outboxID)
}

// answerHostedPayment starts a committed hosted payment and answers it with its next action.
func (s *Server) answerHostedPayment(ctx context.Context, w http.ResponseWriter, t sika.Transaction, n sika.Network, outboxID int64) error {
	s.startPayment(ctx, t, outboxID)
	next := s.nextAction(ctx, t, n)
	out := newHostedPayment(t)
	out.NextAction = &next
	writeData(w, http.StatusCreated, out)
	return nil
}

// displayCheckoutStatus is the status a customer is told: EXPIRED once expires_at passed, even
// before the expiry workflow recorded it.
func displayCheckoutStatus(c sika.CheckoutSession, now time.Time) sika.CheckoutStatus {
	if c.Status == sika.CheckoutPending && !c.Payable(now) {
		return sika.CheckoutExpired
	}
	return c.Status
}

type hostedOTPRequest struct {
	Transaction string `json:"transaction"`
	OTP         string `json:"otp"`
}

// hostedPayments is the checkout session or payment link of a hosted page's slug, as its
// payment routes see it: its country, and which payments are its.
type hostedPayments struct {
	country string
	owns    func(sika.Transaction) bool
}

// sessionPayments reads the checkout session of the path's slug.
func (s *Server) sessionPayments(r *http.Request) (hostedPayments, error) {
	c, err := s.store.CheckoutSessionBySlug(r.Context(), mux.Vars(r)["slug"])
	return hostedPayments{country: c.Country, owns: func(t sika.Transaction) bool {
		return t.CheckoutSession != nil && *t.CheckoutSession == c.ID
	}}, err
}

// linkPayments reads the payment link of the path's slug.
func (s *Server) linkPayments(r *http.Request) (hostedPayments, error) {
	l, err := s.store.PaymentLinkBySlug(r.Context(), mux.Vars(r)["slug"])
	return hostedPayments{country: l.Country, owns: func(t sika.Transaction) bool {
		return t.PaymentLink != nil && *t.PaymentLink == l.ID
	}}, err
}

// confirmHostedOTP sends the post-push OTP typed on a hosted page (the session or link page
// reads) to the payment's workflow; the payment must be the page's.
func (s *Server) confirmHostedOTP(page func(*http.Request) (hostedPayments, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		hp, err := page(r)
		if err != nil {
			return err
		}
		var req hostedOTPRequest
		if err := decodeBody(r, &req); err != nil {
			return err
		}
		var v sika.Validation
		id, err := uuid.Parse(strings.TrimSpace(req.Transaction))
		if err != nil {
			v.Add("transaction", "Must be a valid UUID.")
		}
		if req.OTP = strings.TrimSpace(req.OTP); req.OTP == "" {
			v.Add("otp", sika.MsgRequired)
		}
		if err := v.Err(); err != nil {
			return err
		}
		t, err := s.store.Transaction(r.Context(), id)
		if err != nil {
			return err
		}
		if !hp.owns(t) {
			return sika.NotFound("Transaction")
		}
		if err := s.confirmPostPushOTP(r.Context(), t, req.OTP); err != nil {
			return err
		}
		if t, err = s.store.Transaction(r.Context(), t.ID); err != nil {
			return err
		}
		writeData(w, http.StatusOK, newHostedPayment(t))
		return nil
	}
}

// hostedNetwork predicts the network of the number a customer types on a hosted page (the
// session or link page reads), read in the country the customer picked on the page, else the
// page's own, unless it has its calling code (predict); the page preselects it.
func (s *Server) hostedNetwork(page func(*http.Request) (hostedPayments, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		hp, err := page(r)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		country := q.Get("country")
		if country == "" {
			country = hp.country
		}
		p, err := s.predict(r.Context(), q.Get("phone"), country)
		if err != nil {
			return err
		}
		writeData(w, http.StatusOK, p)
		return nil
	}
}
