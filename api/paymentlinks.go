package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// paymentLinkRoutes mounts the merchant routes of payment links and the public endpoints of
// their hosted page.
func (s *Server) paymentLinkRoutes(root *mux.Router) {
	payin := routeOpts{access: accessMerchant, scope: sika.ScopePayin}
	merchant := routeOpts{access: accessMerchant}
	s.handle(root, http.MethodPost, "/payment-links/", s.createPaymentLink, payin)
	s.handle(root, http.MethodGet, "/payment-links/", s.listPaymentLinks, merchant)
	s.handle(root, http.MethodGet, "/payment-links/{id}/", s.getPaymentLink, merchant)
	s.handle(root, http.MethodPatch, "/payment-links/{id}/", s.updatePaymentLink, payin)
	s.handle(root, http.MethodPut, "/payment-links/{id}/", s.updatePaymentLink, payin)
	s.handle(root, http.MethodDelete, "/payment-links/{id}/", s.deletePaymentLink, payin)
	s.handle(root, http.MethodGet, "/payment-links/{id}/transactions/", s.listPaymentLinkTransactions, merchant)

	public := routeOpts{throttleByIP: true}
	s.handle(root, http.MethodPost, "/links/{slug}/pay/", withBody(s.payPaymentLink), public)
	s.handle(root, http.MethodGet, "/links/{slug}/payments/{id}/", s.getLinkPayment, public)
	s.handle(root, http.MethodPost, "/links/{slug}/confirm-otp/", s.confirmHostedOTP(s.linkPayments), public)
	s.handle(root, http.MethodGet, "/links/{slug}/network/", s.hostedNetwork(s.linkPayments), public)
}

// paymentLinkRequest is a create or update body; a nil field was absent or null (present
// tells them apart).
type paymentLinkRequest struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	AmountType  *string         `json:"amount_type"`
	Amount      *string         `json:"amount"`
	MinAmount   *string         `json:"min_amount"`
	Currency    *string         `json:"currency"`
	Country     *string         `json:"country"`
	UsageLimit  *int            `json:"usage_limit"`
	IsActive    *bool           `json:"is_active"`
	Metadata    json.RawMessage `json:"metadata"`

	present map[string]bool
}

// decodePaymentLink reads a body and which fields it carries.
// On PUT and PATCH current is the link as GET answers it (decodeUpdate: its read-only fields
// may come back unchanged); nil on create.
func decodePaymentLink(r *http.Request, current *sika.PaymentLink) (paymentLinkRequest, error) {
	var req paymentLinkRequest
	var body []byte
	var err error
	if current != nil {
		body, err = decodeUpdateBody(r, &req, *current)
	} else if body, err = requestBody(r); err == nil {
		err = decodeJSONObject(body, &req)
	}
	if err != nil {
		return req, err
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(body, &raw)
	req.present = map[string]bool{}
	for k := range raw {
		req.present[k] = true
	}
	return req, nil
}

// apply writes the request's fields on l (all of them when full, as PUT and create do: an
// absent field takes its default) and validates the result.
func (s *Server) apply(ctx context.Context, req paymentLinkRequest, l *sika.PaymentLink, full bool) error {
	var v sika.Validation
	has := func(f string) bool { return full || req.present[f] }
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return strings.TrimSpace(*p)
	}
	if has("name") {
		l.Name = str(req.Name)
		requireText(&v, "name", l.Name, 200)
	}
	if has("description") {
		l.Description = str(req.Description)
		maxLength(&v, "description", l.Description, 500)
	}
	if has("amount_type") {
		l.AmountType = sika.AmountType(strings.ToUpper(str(req.AmountType)))
		if l.AmountType == "" {
			l.AmountType = sika.AmountFixed
		}
		if !l.AmountType.Valid() {
			v.Add("amount_type", `Must be "FIXED" or "FREE".`)
		}
	}
	if has("currency") {
		if l.Currency = strings.ToUpper(str(req.Currency)); l.Currency == "" {
			v.Add("currency", sika.MsgRequired)
		} else if len(l.Currency) != 3 {
			v.Add("currency", "Must be exactly 3 characters.")
		} else if err := s.knownCurrency(ctx, &v, "currency", l.Currency); err != nil {
			return err
		}
	}
	amount := func(field string, raw *string) *sika.Amount {
		if raw == nil || strings.TrimSpace(*raw) == "" {
			return nil
		}
		d, err := parseAmount(*raw, l.Currency)
		if err != nil {
			v.Add(field, err.Error())
			return nil
		}
		a := sika.NewAmount(d)
		return &a
	}
	if has("amount") {
		l.Amount = amount("amount", req.Amount)
	}
	if has("min_amount") {
		l.MinAmount = amount("min_amount", req.MinAmount)
	}
	// A new currency with the amounts the link already has: they must be valid in it too (1000.50
	// is no amount in XOF), or the link could never be paid.
	for field, kept := range map[string]*sika.Amount{"amount": l.Amount, "min_amount": l.MinAmount} {
		if kept == nil || has(field) || !has("currency") || l.Currency == "" {
			continue
		}
		if _, err := parseAmount(sika.FormatAmount(kept.Decimal), l.Currency); err != nil {
			v.Add(field, err.Error()+" Send the amount again with the new currency.")
		}
	}
	if has("country") {
		if l.Country = strings.ToUpper(str(req.Country)); l.Country != "" {
			if len(l.Country) != 2 {
				v.Add("country", "Must be exactly 2 characters.")
			} else if _, err := s.store.CountryByISO(ctx, l.Country); sika.ErrorCode(err) == sika.CodeNotFound {
				v.Add("country", "Unknown country.")
			} else if err != nil {
				return err
			}
		}
	}
	if has("usage_limit") {
		if l.UsageLimit = req.UsageLimit; l.UsageLimit != nil && *l.UsageLimit < 1 {
			v.Add("usage_limit", sika.MsgMinOne)
		}
	}
	if has("is_active") {
		l.IsActive = req.IsActive == nil || *req.IsActive
	}
	if has("metadata") {
		var err error
		if l.Metadata, err = normaliseMetadata(req.Metadata); err != nil {
			v.Add("metadata", err.Error())
		}
	}
	return v.Err()
}

// knownCurrency adds a field error when Sika takes no payment in code (store.CurrencyKnown).
func (s *Server) knownCurrency(ctx context.Context, v *sika.Validation, field, code string) error {
	ok, err := s.store.CurrencyKnown(ctx, code)
	if err == nil && !ok {
		v.Add(field, "Unknown currency: Sika takes payments in its countries' currencies and those it has an exchange rate for.")
	}
	return err
}

func (s *Server) createPaymentLink(w http.ResponseWriter, r *http.Request) error {
	req, err := decodePaymentLink(r, nil)
	if err != nil {
		return err
	}
	var l sika.PaymentLink
	if err := s.apply(r.Context(), req, &l, true); err != nil {
		return err
	}
	l.Merchant, l.Environment, l.CreatedByMember = owner(r.Context())
	if l.ID, l.Slug, err = newSlugged("pl_", 16); err != nil {
		return err
	}
	l.URL = s.cfg.PublicURL + "/l/" + l.Slug + "/"
	l, err = s.store.CreatePaymentLink(r.Context(), l)
	return reply(w, http.StatusCreated, l, err)
}

func (s *Server) listPaymentLinks(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListPaymentLinks)
}

// paymentLinkFor is the caller's link of the path's id.
func (s *Server) paymentLinkFor(r *http.Request) (sika.PaymentLink, error) {
	return tenantObject(r, "Payment link", s.store.PaymentLinkByID)
}

func (s *Server) getPaymentLink(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Payment link", s.store.PaymentLinkByID)
}

// updatePaymentLink is PATCH (the fields sent) and PUT (every field; absent ones take their
// defaults). The link's read-only fields (id, merchant, slug, url, created_at…) may be sent
// back as GET answered them; changed, they are refused as read-only: a link is never
// reassigned.
func (s *Server) updatePaymentLink(w http.ResponseWriter, r *http.Request) error {
	l, err := s.paymentLinkFor(r)
	if err != nil {
		return err
	}
	req, err := decodePaymentLink(r, &l)
	if err != nil {
		return err
	}
	if err := s.apply(r.Context(), req, &l, r.Method == http.MethodPut); err != nil {
		return err
	}
	l, err = s.store.UpdatePaymentLink(r.Context(), l)
	return reply(w, http.StatusOK, l, err)
}

func (s *Server) deletePaymentLink(w http.ResponseWriter, r *http.Request) error {
	return deleteTenantObject(w, r, "Payment link", s.store.DeletePaymentLink)
}

func (s *Server) listPaymentLinkTransactions(w http.ResponseWriter, r *http.Request) error {
	return writePage(s, w, r, func(p store.PageRequest) ([]sika.Transaction, int, error) {
		l, err := s.paymentLinkFor(r)
		if err != nil {
			return nil, 0, err
		}
		return s.store.ListLinkTransactions(r.Context(), l.ID, p)
	})
}

// payPaymentLink creates a payment on a link's hosted page: one transaction per payment, up to
// usage_limit. The customer gives name, number, network and, when the link lets them, the
// amount (FREE links, or FIXED links without an amount), at least min_amount.
func (s *Server) payPaymentLink(w http.ResponseWriter, r *http.Request, req hostedPayRequest) error {
	l, err := s.store.PaymentLinkBySlug(r.Context(), mux.Vars(r)["slug"])
	if err != nil {
		return err
	}
	if !l.IsActive {
		return sika.Errorf(sika.CodeLinkInactive, "This payment link is disabled.")
	}
	if err := checkShownPrice(l, req); err != nil {
		return err
	}
	amount := req.Amount
	if !l.CustomerChoosesAmount() {
		amount = l.Amount.StringFixed(2)
	} else if d, err := parseAmount(amount, l.Currency); err == nil && l.MinAmount != nil && d.LessThan(l.MinAmount.Decimal) {
		return sika.Errorf(sika.CodeAmountOutOfRange, "The amount must be at least %s %s.", sika.FormatAmount(l.MinAmount.Decimal), l.Currency)
	}
	ctx, err := s.hostedContext(r.Context(), l.Merchant, l.Environment)
	if err != nil {
		return err
	}
	country := req.Country
	if country == "" {
		country = l.Country
	}
	col, err := s.prepareCollection(ctx, softpayRequest{
		Amount: amount, Currency: l.Currency, Country: country, Network: req.Network,
		CustomerPhone: req.CustomerPhone, CustomerName: req.CustomerName, CustomerEmail: req.CustomerEmail,
		Description: firstNonEmpty(l.Description, l.Name), OTP: req.OTP, Metadata: l.Metadata,
	})
	if err != nil {
		return err
	}
	if err := s.limitLinkStarts(w, r, l.ID, col.tx.CustomerPhone); err != nil {
		return err
	}
	col.tx.PaymentLink = &l.ID
	t, outboxID, err := s.store.CreateLinkPayment(ctx, store.NewTransaction{
		Transaction: col.tx, OTP: col.otp, Reason: "Payment requested on the payment link page",
	}, workflows.PaymentStart(activities.PaymentInput{TransactionID: col.tx.ID, Run: 1}))
	if err != nil {
		return err
	}
	return s.answerHostedPayment(ctx, w, t, col.network, outboxID)
}

// checkShownPrice refuses a payment whose page showed another price than the link's: the
// merchant changed the link's currency, or a FIXED link's amount, while the customer's page was
// open (or the amount was tampered with). The customer is never charged what the page did not
// show; the message gives the link's price, to reload the page with. A page that sends neither
// (an older page, a client of its own) is charged the link's price, as before.
func checkShownPrice(l sika.PaymentLink, req hostedPayRequest) error {
	var v sika.Validation
	price := func() string {
		if l.CustomerChoosesAmount() {
			return "is now in " + l.Currency
		}
		return "is now " + sika.FormatAmount(l.Amount.Decimal) + " " + l.Currency
	}
	if c := strings.ToUpper(strings.TrimSpace(req.Currency)); c != "" && c != l.Currency {
		v.Add("currency", "The price of this payment link "+price()+": reload the page to see it.")
	}
	if !l.CustomerChoosesAmount() && strings.TrimSpace(req.Amount) != "" {
		if d, err := parseAmount(req.Amount, l.Currency); err != nil || !d.Equal(l.Amount.Decimal) {
			v.Add("amount", "The price of this payment link "+price()+": reload the page to see it.")
		}
	}
	return v.Err()
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// getLinkPayment is what a link's page polls: one of its payments.
func (s *Server) getLinkPayment(w http.ResponseWriter, r *http.Request) error {
	l, err := s.linkPayments(r)
	if err != nil {
		return err
	}
	t, err := pathObject(r, "Transaction", s.store.Transaction)
	if err != nil {
		return err
	}
	if !l.owns(t) {
		return sika.NotFound("Transaction")
	}
	writeData(w, http.StatusOK, newHostedPayment(t))
	return nil
}
