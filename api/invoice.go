package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/sikahq/sika"
)

// transactionInvoice answers the PDF invoice of a successful inbound transaction (spec: never a
// payout, a PENDING or a FAILED one: 422 invoice_unavailable). It shows the amounts the customer
// saw (requested_amount, client_fee, debited_amount) and never the split of the fee
// (gateway_fee, platform_fee). Language: `?lang=fr|en`, else Accept-Language, else French.
func (s *Server) transactionInvoice(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id", "Transaction")
	if err != nil {
		return err
	}
	lang, err := invoiceLanguage(r)
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	t, err := s.store.TransactionByID(r.Context(), merchant, env, id)
	if err != nil {
		return err
	}
	if !t.HasInvoice() {
		return sika.Errorf(sika.CodeInvoiceUnavailable,
			"An invoice exists only for a successful inbound transaction; this one is %s and %s.", t.FlowDirection, t.Status)
	}
	inv := invoice{Transaction: t, Merchant: principalFrom(r.Context()).Merchant.Name, NetworkName: t.Network}
	if n, err := s.store.NetworkByCode(r.Context(), t.Network); err == nil {
		inv.NetworkName = n.Name
	}
	var buf bytes.Buffer
	if err := renderInvoice(&buf, inv, lang, s.cfg.Now()); err != nil {
		return fmt.Errorf("render invoice %s: %w", t.ID, err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.pdf"`, lang.fileStem, t.Reference))
	h.Set("Content-Language", lang.code)
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Language")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// invoiceLanguage is `lang` (fr or en) when given, else the preferred of fr and en in
// Accept-Language, else French.
func invoiceLanguage(r *http.Request) (*invoiceLabels, error) {
	if raw := strings.TrimSpace(r.URL.Query().Get("lang")); raw != "" {
		if l, ok := invoiceLanguages[strings.ToLower(raw)]; ok {
			return l, nil
		}
		return nil, sika.FieldError("lang", "Select a valid choice: fr, en.")
	}
	best, bestQ := invoiceLanguages["fr"], 0.0
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		l, ok := invoiceLanguages[primary]
		if !ok {
			continue
		}
		q := 1.0
		if v, found := strings.CutPrefix(strings.TrimSpace(params), "q="); found {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > bestQ {
			best, bestQ = l, q
		}
	}
	return best, nil
}
