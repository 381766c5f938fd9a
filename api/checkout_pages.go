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
	root.HandleFunc("/pay/{slug}/", s.hostedPage(s.checkoutPage)).Methods(http.MethodGet)
	root.HandleFunc("/l/{slug}/", s.hostedPage(s.paymentLinkPage)).Methods(http.MethodGet)
	root.Handle(web.StaticPrefix+"{file}", web.Static()).Methods(http.MethodGet)
}

// hostedPage serves the hosted page that page renders for the path's slug; an error (an
// unknown slug, a failed read) answers hostedPageError's page instead.
func (s *Server) hostedPage(page func(w http.ResponseWriter, r *http.Request, slug string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		routeName(r)
		if err := page(w, r, mux.Vars(r)["slug"]); err != nil {
			s.hostedPageError(w, r, err)
		}
	}
}

// checkoutPage renders a session's hosted page.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request, slug string) error {
	c, err := s.store.CheckoutSessionBySlug(r.Context(), slug)
	if err != nil {
		return err
	}
	p := web.Page{Kind: web.KindSession, Lang: web.Lang(r), Title: "", Description: c.Description,
		Amount: &c.Amount.Decimal, Currency: c.Currency, Country: c.Country, Test: c.Environment == sika.EnvironmentTest}
	setHostedCalls(&p, "/checkout/", slug, "status/")
	if c.CustomerPhone != "" {
		p.PhoneMask = sika.MaskPhone(c.CustomerPhone, c.Country)
	}
	if status := displayCheckoutStatus(c, s.cfg.Now()); status != sika.CheckoutPending {
		p.Closed = string(status)
	}
	return s.renderHostedPage(w, r, p, c.Merchant, c.Environment)
}

// paymentLinkPage renders a link's hosted page.
func (s *Server) paymentLinkPage(w http.ResponseWriter, r *http.Request, slug string) error {
	l, err := s.store.PaymentLinkBySlug(r.Context(), slug)
	if err != nil {
		return err
	}
	p := web.Page{Kind: web.KindLink, Lang: web.Lang(r), Title: l.Name, Description: l.Description, Currency: l.Currency,
		Country: l.Country, AskCustomer: true, AskAmount: l.CustomerChoosesAmount(), Test: l.Environment == sika.EnvironmentTest}
	setHostedCalls(&p, "/links/", slug, "payments/")
	if !p.AskAmount {
		p.Amount = &l.Amount.Decimal
	}
	if l.MinAmount != nil && p.AskAmount {
		p.MinAmount = &l.MinAmount.Decimal
	}
	if !l.IsActive {
		p.Closed = "INACTIVE"
	} else if l.UsedUp() {
		p.Closed = "USED_UP"
	}
	return s.renderHostedPage(w, r, p, l.Merchant, l.Environment)
}

// setHostedCalls sets the API calls of a hosted page, under the session's or link's path
// (prefix and slug): pay, confirm an OTP, poll (at poll), predict the network.
func setHostedCalls(p *web.Page, prefix, slug, poll string) {
	base := basePath + prefix + url.PathEscape(slug) + "/"
	p.PayURL, p.OTPURL, p.PollURL, p.PredictURL = base+"pay/", base+"confirm-otp/", base+poll, base+"network/"
}

// renderHostedPage fills what every page shows (merchant, countries and networks) and writes
// it; it writes nothing when it returns an error.
func (s *Server) renderHostedPage(w http.ResponseWriter, r *http.Request, p web.Page, merchantID uuid.UUID, env sika.Environment) error {
	ctx := r.Context()
	m, err := s.store.MerchantByID(ctx, merchantID)
	if err != nil {
		return err
	}
	p.MerchantName = m.Name
	if err := s.fillNetworks(ctx, &p, env, m.Country); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := web.Render(&buf, withSwitch(r, p)); err != nil {
		return err
	}
	writeHostedPage(w, http.StatusOK, buf.Bytes())
	return nil
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
