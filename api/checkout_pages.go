package api

import (
	"bytes"
	"context"
	"net/http"
	"net/url"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web"
)

// hostedPageRoutes mounts the hosted pages (outside /api/v1) and their assets.
func (s *Server) hostedPageRoutes(root *mux.Router) {
	root.HandleFunc("/pay/{slug}/", s.checkoutPage).Methods(http.MethodGet)
	root.HandleFunc("/l/{slug}/", s.paymentLinkPage).Methods(http.MethodGet)
	root.Handle(web.StaticPrefix+"{file}", web.Static()).Methods(http.MethodGet)
}

// checkoutPage renders a session's hosted page.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	slug := mux.Vars(r)["slug"]
	c, err := s.store.CheckoutSessionBySlug(r.Context(), slug)
	if err != nil {
		s.hostedPageError(w, r, err)
		return
	}
	p := web.Page{Kind: web.KindSession, Lang: web.Lang(r), Title: "", Description: c.Description,
		Amount: &c.Amount.Decimal, Currency: c.Currency, Country: c.Country,
		PayURL: basePath + "/checkout/" + url.PathEscape(slug) + "/pay/", OTPURL: basePath + "/checkout/" + url.PathEscape(slug) + "/confirm-otp/",
		PollURL: basePath + "/checkout/" + url.PathEscape(slug) + "/status/", PredictURL: basePath + "/checkout/" + url.PathEscape(slug) + "/network/",
		Test: c.Environment == sika.EnvironmentTest}
	if c.CustomerPhone != "" {
		p.PhoneMask = sika.MaskPhone(c.CustomerPhone, c.Country)
	}
	if status := displayCheckoutStatus(c, s.cfg.Now()); status != sika.CheckoutPending {
		p.Closed = string(status)
	}
	s.renderHostedPage(w, r, p, c.Merchant, c.Environment)
}

// paymentLinkPage renders a link's hosted page.
func (s *Server) paymentLinkPage(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	slug := mux.Vars(r)["slug"]
	l, err := s.store.PaymentLinkBySlug(r.Context(), slug)
	if err != nil {
		s.hostedPageError(w, r, err)
		return
	}
	p := web.Page{Kind: web.KindLink, Lang: web.Lang(r), Title: l.Name, Description: l.Description, Currency: l.Currency,
		Country: l.Country, AskCustomer: true, AskAmount: l.CustomerChoosesAmount(),
		PayURL: basePath + "/links/" + url.PathEscape(slug) + "/pay/", OTPURL: basePath + "/links/" + url.PathEscape(slug) + "/confirm-otp/",
		PollURL: basePath + "/links/" + url.PathEscape(slug) + "/payments/", PredictURL: basePath + "/links/" + url.PathEscape(slug) + "/network/",
		Test: l.Environment == sika.EnvironmentTest}
	if !p.AskAmount {
		p.Amount = &l.Amount.Decimal
	}
	if l.MinAmount != nil && p.AskAmount {
		p.MinAmount = &l.MinAmount.Decimal
	}
	if !l.IsActive {
		p.Closed = "INACTIVE"
	}
	s.renderHostedPage(w, r, p, l.Merchant, l.Environment)
}

// renderHostedPage fills what every page shows (merchant, countries and networks) and writes it.
func (s *Server) renderHostedPage(w http.ResponseWriter, r *http.Request, p web.Page, merchantID uuid.UUID, env sika.Environment) {
	ctx := r.Context()
	m, err := s.store.MerchantByID(ctx, merchantID)
	if err != nil {
		s.hostedPageError(w, r, err)
		return
	}
	p.MerchantName = m.Name
	if err := s.fillNetworks(ctx, &p, env, m.Country); err != nil {
		s.hostedPageError(w, r, err)
		return
	}
	var buf bytes.Buffer
	if err := web.Render(&buf, withSwitch(r, p)); err != nil {
		s.hostedPageError(w, r, err)
		return
	}
	writeHostedPage(w, http.StatusOK, buf.Bytes())
}

// withSwitch is p with the link to the same page in the other language.
func withSwitch(r *http.Request, p web.Page) web.Page {
	q := r.URL.Query()
	if p.Lang == "en" {
		q.Set("lang", "fr")
	} else {
		q.Set("lang", "en")
	}
	p.SwitchURL = r.URL.Path + "?" + q.Encode()
	return p
}

// fillNetworks lists the countries with a network open in env and their networks; the
// preselected country is the page's, else the merchant's.
func (s *Server) fillNetworks(ctx context.Context, p *web.Page, env sika.Environment, merchantCountry string) error {
	networks, isos, err := s.store.HostedNetworks(ctx, env)
	if err != nil {
		return err
	}
	countries, err := s.store.ListCountries(ctx)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, c := range countries {
		names[c.ISOCode] = c.Name
	}
	seen := map[string]bool{}
	for i, n := range networks {
		iso := isos[i]
		p.Networks = append(p.Networks, web.Network{Code: n.Code, Name: n.Name, Country: iso,
			PrePaymentOTP: n.OTPKind == sika.OTPPrePayment, OTPInstructions: n.OTPInstructions})
		if !seen[iso] {
			seen[iso] = true
			p.Countries = append(p.Countries, web.Country{ISO: iso, Name: names[iso]})
		}
	}
	if p.Country == "" || !seen[p.Country] {
		p.Country = merchantCountry
	}
	return nil
}

// writeHostedPage answers a hosted page, rendered whole, with the pages' headers.
func writeHostedPage(w http.ResponseWriter, status int, page []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", web.ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(page)
}

// hostedPageError answers a plain page in the visitor's language: 404 for an unknown slug, 500
// otherwise (logged).
func (s *Server) hostedPageError(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusNotFound
	if sika.ErrorCode(err) != sika.CodeNotFound {
		logFrom(r.Context()).Error("hosted page", "err", err)
		status = http.StatusInternalServerError
	}
	p := web.Page{Lang: web.Lang(r), Error: "page_not_found"}
	if status != http.StatusNotFound {
		p.Error = "error_generic"
	}
	var buf bytes.Buffer
	if err := web.Render(&buf, withSwitch(r, p)); err != nil {
		logFrom(r.Context()).Error("hosted error page", "err", err)
		buf.Reset()
		buf.WriteString("<!doctype html><title>Sika</title><p>500</p>")
	}
	writeHostedPage(w, status, buf.Bytes())
}
