package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// listLimit bounds every list of the console (the admin API's default).
const listLimit = 100

// stuckRow is a PENDING transaction with its workflow link.
type stuckRow struct {
	sika.Transaction
	WorkflowURL string
}

type stuckData struct {
	Minutes int
	Rows    []stuckRow
}

// minutesParam reads ?minutes= (a whole number of minutes, def when absent or bad).
func minutesParam(r *http.Request, def int) int {
	n, err := strconv.Atoi(r.URL.Query().Get("minutes"))
	if err != nil || n < 0 || n > 60*24*90 {
		return def
	}
	return n
}

// stuck lists the transactions PENDING for longer than ?minutes= (10), every merchant, oldest
// first (store.StuckTransactions, as GET /admin/transactions/stuck/).
func (a *App) stuck(w http.ResponseWriter, r *http.Request, v *visit) error {
	d := stuckData{Minutes: minutesParam(r, 10)}
	txs, err := a.cfg.Store.StuckTransactions(r.Context(), time.Duration(d.Minutes)*time.Minute, listLimit)
	if err != nil {
		return err
	}
	for _, t := range txs {
		d.Rows = append(d.Rows, stuckRow{Transaction: t, WorkflowURL: a.cfg.WorkflowURL(t)})
	}
	return a.render(w, r, http.StatusOK, "stuck", &view{visit: v, Title: "stuck_title", Nav: "stuck", Data: d})
}

// reverifyData is the outcome of a re-verify, shown in place of the button (htmx) or on the
// transaction page.
type reverifyData struct {
	ID      uuid.UUID
	Outcome Reverification
}

// reverify re-checks a transaction at its gateway with POST /admin/transactions/{id}/reverify/'s
// code, and shows the outcome.
func (a *App) reverify(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Transaction")
	if err != nil {
		return err
	}
	out, err := a.cfg.Reverify(r.Context(), v.Member, id)
	if err != nil {
		return err
	}
	d := reverifyData{ID: id, Outcome: out}
	if r.Header.Get("HX-Request") == "true" {
		return a.renderBlock(w, r, http.StatusOK, "stuck", "outcome", &view{visit: v, Data: d})
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+id.String()+"/?"+url.Values{"reverified": {out.GatewayStatus}}.Encode())
	return nil
}

// unclearData is the queue of payouts the operator leaves unclear.
type unclearData struct {
	Minutes int
	Rows    []unclearRow
}

type unclearRow struct {
	sika.TransactionDetail
	WorkflowURL string
}

// unclear lists the payouts awaiting their operator for longer than ?minutes= (15), with each
// attempt's answers and a resolve form (store.UnclearPayouts, as GET /admin/payouts/unclear/).
func (a *App) unclear(w http.ResponseWriter, r *http.Request, v *visit) error {
	d := unclearData{Minutes: minutesParam(r, 15)}
	rows, err := a.cfg.Store.UnclearPayouts(r.Context(), time.Duration(d.Minutes)*time.Minute, listLimit)
	if err != nil {
		return err
	}
	for _, t := range rows {
		d.Rows = append(d.Rows, unclearRow{TransactionDetail: t, WorkflowURL: a.cfg.WorkflowURL(t.Transaction)})
	}
	return a.render(w, r, http.StatusOK, "unclear", &view{visit: v, Title: "unclear_title", Nav: "unclear", Data: d})
}

// resolve proposes the end of an unclear payout, with a required reason (api.ProposeResolution,
// as POST /admin/transactions/{id}/resolve/): a money approver other than the proposer then
// approves it on the decisions page. Back to the transaction, which shows the proposal.
func (a *App) resolve(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Transaction")
	if err != nil {
		return err
	}
	if _, err := a.cfg.Store.Transaction(r.Context(), id); err != nil {
		return err
	}
	status := sika.TransactionStatus(strings.ToUpper(strings.TrimSpace(r.PostFormValue("status"))))
	if _, err := a.cfg.Propose(r.Context(), v.Member, id, status, r.PostFormValue("reason")); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+id.String()+"/?proposed=1")
	return nil
}

// decisionsData is the money decisions page: those waiting for a second person, then the latest
// decided ones.
type decisionsData struct {
	Pending, Decided []store.MoneyDecision
}

// decisions lists the money decisions waiting for approval, with approve and reject forms for a
// money approver (not on their own proposals), and the latest decided ones.
func (a *App) decisions(w http.ResponseWriter, r *http.Request, v *visit) error {
	var d decisionsData
	var err error
	if d.Pending, err = a.cfg.Store.MoneyDecisions(r.Context(), store.DecisionPending, uuid.Nil, listLimit); err != nil {
		return err
	}
	all, err := a.cfg.Store.MoneyDecisions(r.Context(), "", uuid.Nil, listLimit)
	if err != nil {
		return err
	}
	for _, m := range all {
		if m.Status != store.DecisionPending {
			d.Decided = append(d.Decided, m)
		}
	}
	return a.render(w, r, http.StatusOK, "decisions", &view{visit: v, Title: "decisions_title", Nav: "decisions", Data: d})
}

// approveDecision applies a waiting proposal as the second person (api.Server.ApproveMoneyDecision),
// and shows the transaction (or the flag) with what was decided and by whom.
func (a *App) approveDecision(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Money decision")
	if err != nil {
		return err
	}
	d, err := a.cfg.Store.MoneyDecision(r.Context(), id)
	if err != nil {
		return err
	}
	res, err := a.cfg.Approve(r.Context(), v.Member, id)
	if err != nil {
		return err
	}
	webapp.Redirect(w, r, approvedURL(d, res))
	return nil
}

// rejectDecision closes a waiting proposal with a required note (api.RejectMoneyDecision).
func (a *App) rejectDecision(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Money decision")
	if err != nil {
		return err
	}
	if err := a.cfg.Reject(r.Context(), v.Member, id, r.PostFormValue("note")); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"decisions/")
	return nil
}

// staffData is the staff page: every staff member with their role.
type staffData struct {
	Members []sika.Member
	Roles   []sika.StaffRole
	Changed string
}

// staffPage lists the staff with a form to give, change or take away a role (admins only).
func (a *App) staffPage(w http.ResponseWriter, r *http.Request, v *visit) error {
	members, err := a.cfg.Store.StaffMembers(r.Context())
	if err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "staff", &view{visit: v, Title: "staff_title", Nav: "staff",
		Data: staffData{Members: members, Roles: sika.StaffRoles, Changed: r.URL.Query().Get("changed")}})
}

// setStaffRole gives the member of the form's email the form's role ("none" takes it away),
// through store.SetStaffRole, which audits it and keeps the last admin.
func (a *App) setStaffRole(w http.ResponseWriter, r *http.Request, v *visit) error {
	email := strings.TrimSpace(r.PostFormValue("email"))
	if email == "" {
		return sika.FieldError("email", sika.MsgRequired)
	}
	role := sika.StaffRole(strings.ToUpper(strings.TrimSpace(r.PostFormValue("role"))))
	if role == "NONE" {
		role = ""
	}
	m, err := a.cfg.Store.SetStaffRole(r.Context(), email, role, v.Member)
	if err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"staff/?"+url.Values{"changed": {m.Email}}.Encode())
	return nil
}

// flags lists the money flags, open first (?all=1: the resolved ones too).
func (a *App) flags(w http.ResponseWriter, r *http.Request, v *visit) error {
	all := r.URL.Query().Get("all") == "1"
	flags, err := a.cfg.Store.MoneyFlags(r.Context(), all, listLimit)
	if err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "flags", &view{visit: v, Title: "flags_title", Nav: "flags",
		Data: struct {
			All  bool
			Rows []store.MoneyFlag
		}{all, flags}})
}

// search finds a transaction by its Sika reference or a gateway reference, every merchant;
// one match opens it.
func (a *App) search(w http.ResponseWriter, r *http.Request, v *visit) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	var rows []sika.Transaction
	if q != "" {
		if len(q) > 200 {
			return sika.FieldError("q", "Too long.")
		}
		var err error
		if rows, err = a.cfg.Store.TransactionsByReference(r.Context(), q, listLimit); err != nil {
			return err
		}
		if len(rows) == 1 {
			webapp.Redirect(w, r, Prefix+"transactions/"+rows[0].ID.String()+"/")
			return nil
		}
	}
	return a.render(w, r, http.StatusOK, "search", &view{visit: v, Title: "search_title", Nav: "search",
		Data: struct {
			Q    string
			Rows []sika.Transaction
		}{q, rows}})
}

// transactionData is a transaction of any merchant with its staff actions.
type transactionData struct {
	sika.TransactionDetail
	Merchant    sika.Merchant
	WorkflowURL string
	Actions     []store.StaffActionRecord
	Unclear     bool
	// Decisions are the money decisions on the transaction, newest first (a waiting one first
	// of all: the proposal a money approver decides).
	Decisions []store.MoneyDecision
	// Notice: what the action just done answered (re-verified, proposed, resolved).
	Proposed                                        bool
	Reverified, Resolved, DecidedBy, OperatorAnswer string
}

// Waiting is the transaction's money decision that waits for approval, if any.
func (d transactionData) Waiting() *store.MoneyDecision {
	for i := range d.Decisions {
		if d.Decisions[i].Status == store.DecisionPending {
			return &d.Decisions[i]
		}
	}
	return nil
}

func (a *App) transaction(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Transaction")
	if err != nil {
		return err
	}
	ctx := r.Context()
	t, err := a.cfg.Store.Transaction(ctx, id)
	if err != nil {
		return err
	}
	d := transactionData{WorkflowURL: a.cfg.WorkflowURL(t)}
	if d.TransactionDetail, err = a.cfg.Store.TransactionDetail(ctx, t.Merchant, t.Environment, t.ID); err != nil {
		return err
	}
	if d.Merchant, err = a.cfg.Store.MerchantByID(ctx, t.Merchant); err != nil {
		return err
	}
	if d.Actions, err = a.cfg.Store.StaffActions(ctx, t.ID, listLimit); err != nil {
		return err
	}
	d.Unclear = t.Status == sika.StatusPending && t.FlowDirection == sika.DirectionOutbound
	if d.Decisions, err = a.cfg.Store.MoneyDecisions(ctx, "", t.ID, listLimit); err != nil {
		return err
	}
	q := r.URL.Query()
	d.Proposed = q.Get("proposed") != ""
	d.Reverified, d.Resolved, d.DecidedBy, d.OperatorAnswer = q.Get("reverified"), q.Get("resolved"), q.Get("decided_by"), q.Get("operator_answer")
	return a.render(w, r, http.StatusOK, "transaction", &view{visit: v, Title: "transaction_title", Nav: "search", Data: d})
}

// actions lists the latest staff actions of everyone.
func (a *App) actions(w http.ResponseWriter, r *http.Request, v *visit) error {
	rows, err := a.cfg.Store.StaffActions(r.Context(), uuid.Nil, listLimit)
	if err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "actions", &view{visit: v, Title: "actions_title", Nav: "actions", Data: rows})
}

// kycQueue lists the dossiers of a status (?status=, PENDING by default), oldest first.
func (a *App) kycQueue(w http.ResponseWriter, r *http.Request, v *visit) error {
	status := sika.KYCDossierStatus(strings.ToUpper(r.URL.Query().Get("status")))
	switch status {
	case sika.KYCDossierPending, sika.KYCDossierApproved, sika.KYCDossierRejected:
	default:
		status = sika.KYCDossierPending
	}
	rows, _, err := a.cfg.Store.KYCDossiersByStatus(r.Context(), status, store.PageRequest{Page: 1, PageSize: listLimit})
	if err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "kyc", &view{visit: v, Title: "kyc_title", Nav: "kyc",
		Data: struct {
			Status string
			Rows   []sika.KYCDossier
		}{string(status), rows}})
}

// document is a dossier's document with where the console serves its file.
type document struct {
	sika.KYCDocument
	URL   string
	Image bool
}

type dossierData struct {
	sika.KYCDossier
	Merchant  sika.Merchant
	Documents []document
}

func (a *App) dossier(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "KYC dossier")
	if err != nil {
		return err
	}
	d := dossierData{}
	if d.KYCDossier, err = a.cfg.Store.KYCDossierForStaff(r.Context(), id); err != nil {
		return err
	}
	if d.Merchant, err = a.cfg.Store.MerchantByID(r.Context(), d.KYCDossier.Merchant); err != nil {
		return err
	}
	for _, doc := range d.KYCDossier.Documents {
		name := doc.FileURL[strings.LastIndex(doc.FileURL, "/")+1:]
		ext := name[strings.LastIndex(name, ".")+1:]
		d.Documents = append(d.Documents, document{KYCDocument: doc, URL: Prefix + "kyc/files/" + name, Image: ext != "pdf"})
	}
	return a.render(w, r, http.StatusOK, "dossier", &view{visit: v, Title: "dossier_title", Nav: "kyc", Data: d})
}

func (a *App) approveDossier(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.reviewDossier(w, r, v, sika.KYCDossierApproved)
}

func (a *App) rejectDossier(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.reviewDossier(w, r, v, sika.KYCDossierRejected)
}

// reviewDossier records the decision with its note through store.ReviewKYCDossier (as
// POST /admin/merchant-kyc/{id}/approve/ and reject/), which audits it.
func (a *App) reviewDossier(w http.ResponseWriter, r *http.Request, v *visit, decision sika.KYCDossierStatus) error {
	id, err := webapp.PathID(r, "KYC dossier")
	if err != nil {
		return err
	}
	note := strings.TrimSpace(r.PostFormValue("review_note"))
	if len([]rune(note)) > 2000 {
		return sika.FieldError("review_note", "Ensure this field has no more than 2000 characters.")
	}
	if decision == sika.KYCDossierRejected && note == "" {
		return sika.FieldError("review_note", "A rejection needs a note for the merchant.")
	}
	if _, err := a.cfg.Store.ReviewKYCDossier(r.Context(), id, v.Member.ID, decision, note); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"kyc/"+id.String()+"/")
	return nil
}

// kycFile serves a dossier's file inline to staff, with the API's checks (the name's hash
// and extension match a stored file of that content type).
func (a *App) kycFile(w http.ResponseWriter, r *http.Request, v *visit) error {
	vars := mux.Vars(r)
	return a.cfg.ServeKYCFile(w, r, vars["sha256"], vars["ext"])
}

// merchants finds merchants by name.
func (a *App) merchants(w http.ResponseWriter, r *http.Request, v *visit) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	rows, err := a.cfg.Store.SearchMerchants(r.Context(), q, listLimit)
	if err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "merchants", &view{visit: v, Title: "merchants_title", Nav: "merchants",
		Data: struct {
			Q    string
			Rows []sika.Merchant
		}{q, rows}})
}

type merchantData struct {
	sika.Merchant
	Dossiers      []sika.KYCDossier
	PayoutMethods []sika.PayoutMethod
	Actions       []store.StaffActionRecord
}

func (a *App) merchant(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Merchant")
	if err != nil {
		return err
	}
	ctx := r.Context()
	d := merchantData{}
	if d.Merchant, err = a.cfg.Store.MerchantByID(ctx, id); err != nil {
		return err
	}
	if d.Dossiers, _, err = a.cfg.Store.ListKYCDossiers(ctx, id, store.PageRequest{Page: 1, PageSize: listLimit}); err != nil {
		return err
	}
	if d.PayoutMethods, err = a.cfg.Store.PayoutMethodsForStaff(ctx, &id, listLimit); err != nil {
		return err
	}
	if d.Actions, err = a.cfg.Store.StaffActionsOfMerchant(ctx, id, listLimit); err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "merchant", &view{visit: v, Title: "merchant_title", Nav: "merchants", Data: d})
}

func (a *App) suspend(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.setSuspended(w, r, v, true)
}

func (a *App) unsuspend(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.setSuspended(w, r, v, false)
}

// setSuspended suspends or reinstates a merchant through store.SetMerchantSuspended (as
// POST /admin/merchants/{id}/suspend/ and unsuspend/), which audits it.
func (a *App) setSuspended(w http.ResponseWriter, r *http.Request, v *visit, suspended bool) error {
	id, err := webapp.PathID(r, "Merchant")
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if len([]rune(reason)) > 2000 {
		return sika.FieldError("reason", "Too long.")
	}
	if _, err := a.cfg.Store.SetMerchantSuspended(r.Context(), id, v.Member.ID, suspended, reason); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"merchants/"+id.String()+"/")
	return nil
}

// payoutMethods lists the payout methods awaiting verification, every merchant.
func (a *App) payoutMethods(w http.ResponseWriter, r *http.Request, v *visit) error {
	rows, err := a.cfg.Store.PayoutMethodsForStaff(r.Context(), nil, listLimit)
	if err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "payout_methods", &view{visit: v, Title: "payout_methods_title", Nav: "payout_methods", Data: rows})
}

// verifyPayoutMethod verifies (verified=true) or un-verifies a payout method through
// store.ReviewPayoutMethod (as PATCH /admin/merchant-payout-methods/{id}/), which audits it.
func (a *App) verifyPayoutMethod(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Payout method")
	if err != nil {
		return err
	}
	verified := r.PostFormValue("verified") != "false"
	m, err := a.cfg.Store.ReviewPayoutMethod(r.Context(), id, v.Member.ID, &verified, nil)
	if err != nil {
		return err
	}
	next := a.host.Kit.SafeNext(r.PostFormValue("next"))
	if next == Prefix {
		next = Prefix + "merchants/" + m.Merchant.String() + "/"
	}
	webapp.Redirect(w, r, next)
	return nil
}
