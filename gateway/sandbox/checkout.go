package sandbox

import (
	"html/template"
	"net/http"
	"net/url"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
)

// checkoutPath is where a redirect network's customer approves a collection.
func checkoutPath(gatewayName, reference string) string {
	return "/gw/" + url.PathEscape(gatewayName) + "/checkout/" + url.PathEscape(reference)
}

// checkoutPage answers GET /gw/{name}/checkout/{reference}: the page a redirect network's
// customer opens. It needs no credentials, like an operator's payment page.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	name, reference := r.PathValue("name"), r.PathValue("reference")
	s.mu.Lock()
	op := s.ops[opKey{name, kindCollection, reference}]
	var page checkoutData
	if op != nil {
		manual := "/sandbox/pushes/" + url.PathEscape(reference)
		query := "?" + url.Values{"gateway": {name}, "kind": {string(kindCollection)}}.Encode()
		page = checkoutData{
			Gateway:     name,
			Reference:   reference,
			Amount:      op.amount.StringFixed(2),
			Currency:    op.currency,
			Number:      sika.MaskPhone(op.msisdn, op.country),
			Description: op.description,
			Status:      string(op.status),
			FailureCode: op.failureCode,
			Pending:     op.status == gateway.StatusPending,
			ApproveURL:  manual + "/approve" + query,
			DeclineURL:  manual + "/decline" + query,
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	if op == nil {
		w.WriteHeader(http.StatusNotFound)
		page = checkoutData{Gateway: name, Reference: reference, Missing: true}
	}
	_ = checkoutTemplate.Execute(w, page) // the customer may be gone
}

type checkoutData struct {
	Gateway, Reference, Amount, Currency, Number, Description string
	Status, FailureCode, ApproveURL, DeclineURL               string
	Pending, Missing                                          bool
}

var checkoutTemplate = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sandbox payment · {{.Gateway}}</title>
<style>
body{font-family:system-ui,-apple-system,sans-serif;background:#f4f5f7;color:#1d2433;margin:0}
main{max-width:24rem;margin:3rem auto;background:#fff;border-radius:12px;padding:1.5rem 1.75rem;box-shadow:0 2px 12px rgba(0,0,0,.08)}
.badge{display:inline-block;font-size:.75rem;font-weight:600;letter-spacing:.04em;background:#fff4d6;color:#7a5a00;border-radius:999px;padding:.15rem .6rem}
h1{font-size:1.6rem;margin:.75rem 0 1rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem;margin:0 0 1.25rem}
dt{color:#667085}dd{margin:0;font-weight:500;word-break:break-all}
.actions{display:flex;gap:.75rem}.actions form{flex:1}
button{width:100%;font-size:1rem;font-weight:600;border:0;border-radius:8px;padding:.75rem;cursor:pointer}
#approve{background:#12b76a;color:#fff}#decline{background:#f2f4f7;color:#b42318}
</style>
</head>
<body>
<main>
<span class="badge">TEST · {{.Gateway}}</span>
{{if .Missing}}
<h1>Unknown payment</h1>
<p>No payment with reference <strong>{{.Reference}}</strong> waits on this gateway.</p>
{{else}}
<h1 id="amount">{{.Amount}} {{.Currency}}</h1>
<dl>
<dt>Number</dt><dd id="number">{{.Number}}</dd>
{{if .Description}}<dt>For</dt><dd>{{.Description}}</dd>{{end}}
<dt>Reference</dt><dd>{{.Reference}}</dd>
<dt>Status</dt><dd id="status">{{.Status}}{{if .FailureCode}} ({{.FailureCode}}){{end}}</dd>
</dl>
{{if .Pending}}
<div class="actions">
<form method="post" action="{{.ApproveURL}}"><input type="hidden" name="return" value="checkout"><button id="approve" type="submit">Approve</button></form>
<form method="post" action="{{.DeclineURL}}"><input type="hidden" name="return" value="checkout"><button id="decline" type="submit">Decline</button></form>
</div>
{{end}}
{{end}}
</main>
</body>
</html>
`))

// resolveByHand answers POST /sandbox/pushes/{reference}/approve and …/decline: a person or a
// test plays the customer. Optional ?gateway= and ?kind= pick among operations that share the
// reference. A form posted from the checkout page (return=checkout) is sent back to it.
func (s *Server) resolveByHand(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if err := r.ParseForm(); err != nil {
			writeError(w, invalidRequest("could not read the form: %v", err))
			return
		}
		reference, gatewayName := r.PathValue("reference"), r.Form.Get("gateway")
		view, e := s.resolveManually(reference, gatewayName, gateway.CallbackKind(r.Form.Get("kind")), approve)
		if _, known := s.gateways[gatewayName]; known && r.Form.Get("return") == "checkout" &&
			(e == nil || e == errAlreadyFinal) {
			http.Redirect(w, r, checkoutPath(gatewayName, reference), http.StatusSeeOther)
			return
		}
		answer(w, view, e)
	}
}

func (s *Server) resolveManually(reference, gatewayName string, kind gateway.CallbackKind, approve bool) (OperationView, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return OperationView{}, errClosed
	}
	found := s.findLocked(reference, gatewayName, kind)
	if len(found) == 0 {
		return OperationView{}, errNotFound
	}
	var pending []*operation
	for _, op := range found {
		if !op.status.Final() {
			pending = append(pending, op)
		}
	}
	switch len(pending) {
	case 0:
		return OperationView{}, errAlreadyFinal
	case 1:
	default:
		return OperationView{}, errAmbiguousRef
	}
	op := pending[0]
	if approve {
		s.resolveLocked(op, succeeded, "approved by hand")
	} else {
		s.resolveLocked(op, declinedByHand, "declined by hand")
	}
	return op.view(), nil
}
