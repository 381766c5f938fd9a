package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

const supportUsage = `usage:
  sika admin kyc list [--status PENDING|APPROVED|REJECTED]
  sika admin kyc approve|reject DOSSIER_ID --as STAFF_EMAIL [--note TEXT]
  sika admin payments stuck [--older-than 10m]
  sika admin payments reverify TRANSACTION_ID
  sika admin unclear-payouts [--older-than 15m]
  sika admin resolve TRANSACTION_ID --status FAILED|SUCCESS --reason TEXT --as STAFF_EMAIL   (proposes)
  sika admin refund-flag FLAG_ID [--amount AMOUNT] --reason TEXT --as STAFF_EMAIL   (proposes a REFUND_DUE flag's refund)
  sika admin settle-flag FLAG_ID --status SUCCESS|FAILED --reason TEXT --as STAFF_EMAIL   (proposes a re-held payout's end)
  sika admin approve|reject DECISION_ID --as APPROVER_EMAIL [--note TEXT]       (a second person)
  sika admin money-flags [--all]`

// workflowLink links a workflow in the Temporal UI, when one is configured.
func workflowLink(cfg Config, id string) string {
	if cfg.TemporalUIURL == "" || id == "" {
		return ""
	}
	return cfg.TemporalUIURL + "/namespaces/" + url.PathEscape(cfg.TemporalNamespace) + "/workflows/" + url.PathEscape(id)
}

// runKYCCommand lists the review queue, or approves or rejects a dossier as a staff member.
func runKYCCommand(ctx context.Context, cfg Config, args []string) error {
	verb, id, rest, err := verbAndID(args, "dossier", "approve", "reject")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("admin kyc", flag.ContinueOnError)
	status := fs.String("status", "PENDING", "dossiers in this status")
	as := fs.String("as", "", "email of the staff member deciding")
	note := fs.String("note", "", "review note")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, cfg.logger("text"))
	if err != nil {
		return err
	}
	defer st.Close()
	switch verb {
	case "list":
		items, n, err := st.KYCDossiersByStatus(ctx, sika.KYCDossierStatus(*status), store.PageRequest{Page: 1, PageSize: 100})
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DOSSIER\tMERCHANT\tTYPE\tSTATUS\tDOCUMENTS\tSUBMITTED")
		for _, d := range items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, d.Merchant, d.KYCType, d.Status, len(d.Documents), d.CreatedAt.Format(time.RFC3339))
		}
		_ = tw.Flush()
		fmt.Printf("%d dossier(s) %s\n", n, *status)
		return nil
	case "approve", "reject":
		member, err := staffMember(ctx, st, *as)
		if err != nil {
			return err
		}
		if !member.Can(sika.PermReviewKYC) {
			return sika.ErrStaffRole(sika.PermReviewKYC)
		}
		decision := sika.KYCDossierApproved
		if verb == "reject" {
			decision = sika.KYCDossierRejected
		}
		d, err := st.ReviewKYCDossier(ctx, id, member.ID, decision, *note)
		if err != nil {
			return err
		}
		fmt.Printf("dossier %s %s by %s (merchant %s)\n", d.ID, d.Status, member.Email, d.Merchant)
		return nil
	}
	return errors.New(supportUsage)
}

// runPaymentsCommand lists stuck transactions or re-verifies one at its gateway.
func runPaymentsCommand(ctx context.Context, cfg Config, args []string) error {
	verb, id, rest, err := verbAndID(args, "transaction", "reverify")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("admin payments", flag.ContinueOnError)
	olderThan := fs.Duration("older-than", 10*time.Minute, "PENDING for longer than this")
	if err := fs.Parse(rest); err != nil {
		return err
	}
	logger := cfg.logger("text")
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	switch verb {
	case "stuck":
		txs, err := st.StuckTransactions(ctx, *olderThan, 500)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TRANSACTION\tREFERENCE\tTYPE\tENV\tPENDING FOR\tWORKFLOW\tTEMPORAL UI")
		for _, t := range txs {
			wf := workflows.WorkflowIDOf(t)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Reference, t.Type, t.Environment,
				time.Since(t.CreatedAt).Round(time.Second), wf, workflowLink(cfg, wf))
		}
		_ = tw.Flush()
		fmt.Printf("%d transaction(s) PENDING for more than %s\n", len(txs), *olderThan)
		return nil
	case "reverify":
		t, err := st.Transaction(ctx, id)
		if err != nil {
			return err
		}
		tc, err := dialTemporal(ctx, cfg, logger, nil)
		if err != nil {
			return err
		}
		defer tc.Close()
		gws, err := newGatewayRouter(cfg, st.GatewayMemory())
		if err != nil {
			return err
		}
		rc, err := workflows.RecheckAtGateway(ctx, tc, st, gws, t)
		if err != nil {
			return err
		}
		after, err := st.Transaction(ctx, id)
		if err != nil {
			return err
		}
		wf := workflows.WorkflowIDOf(t)
		fmt.Printf("transaction %s (%s): record %s -> %s; gateway says %q%s\nworkflow %s %s\n", t.ID, t.Reference, t.Status,
			after.Status, rc.Gateway.Status, map[bool]string{true: " (DISAGREES with the record: investigate)"}[rc.Disagrees],
			wf, workflowLink(cfg, wf))
		return nil
	}
	return errors.New(supportUsage)
}

// runUnclearPayouts lists the payouts that await their operator's final word (support's queue,
// as GET /admin/payouts/unclear/): each with its attempts, the operator's last answers and its
// workflow.
func runUnclearPayouts(ctx context.Context, cfg Config, args []string) error {
	fs := flag.NewFlagSet("admin unclear-payouts", flag.ContinueOnError)
	olderThan := fs.Duration("older-than", 15*time.Minute, "unclear for longer than this")
	st, err := parseAndOpen(ctx, cfg, fs, args)
	if err != nil {
		return err
	}
	defer st.Close()
	payouts, err := st.UnclearPayouts(ctx, *olderThan, 500)
	if err != nil {
		return err
	}
	for _, d := range payouts {
		wf := workflows.WorkflowIDOf(d.Transaction)
		fmt.Printf("%s  %s  merchant %s  %s  %s %s to %s  PENDING for %s\n", d.ID, d.Reference, d.Merchant, d.Environment,
			sika.FormatAmount(d.DebitedAmount.Decimal), d.Currency, d.Recipient, time.Since(d.CreatedAt).Round(time.Second))
		for _, a := range d.Attempts {
			at := "never"
			if a.LastAnswerAt != nil {
				at = a.LastAnswerAt.UTC().Format(time.RFC3339)
			}
			fmt.Printf("    attempt %s at %s (run %d, #%d): %s; operator last answered %s at %s\n", a.ID, a.Gateway, a.Run, a.Sequence,
				a.Status, orNone(a.LastAnswer), at)
		}
		fmt.Printf("    workflow %s %s\n", wf, workflowLink(cfg, wf))
	}
	fmt.Printf("%d payout(s) awaiting the operator for more than %s; end one with: sika admin resolve TRANSACTION_ID --status FAILED|SUCCESS --reason TEXT --as STAFF_EMAIL\n",
		len(payouts), *olderThan)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// runResolve proposes the end of an unclear payout, as the staff member --as
// (api.ProposeResolution, as POST /admin/transactions/{id}/resolve/): another staff member, a
// money approver, applies it with `sika admin approve` (or rejects it).
func runResolve(ctx context.Context, cfg Config, args []string) error {
	return runProposeStatus(ctx, cfg, args, "resolve", "transaction", "FAILED (release the hold) or SUCCESS (the beneficiary was paid)", api.ProposeResolution)
}

// runProposeStatus proposes, as the staff member --as, that the transaction of the positional
// id (a payout, or a flag's) end --status SUCCESS or FAILED, with --reason; a money approver
// other than the proposer applies it with `sika admin approve`.
func runProposeStatus(ctx context.Context, cfg Config, args []string, command, idOf, statusHelp string,
	propose func(context.Context, *store.Store, uuid.UUID, api.SupportDecision, sika.Member) (store.MoneyDecision, error)) error {
	fs := flag.NewFlagSet("admin "+command, flag.ContinueOnError)
	status := fs.String("status", "", statusHelp)
	reason := fs.String("reason", "", "why (required; written to the status log and the audit trail)")
	as := fs.String("as", "", "email of the staff member proposing")
	id, err := oneID(fs, args, idOf)
	if err != nil {
		return err
	}
	decision := api.SupportDecision{Status: sika.TransactionStatus(strings.ToUpper(*status)), Reason: *reason}
	if err := decision.Validate(); err != nil {
		return cliError(err)
	}
	st, member, err := openAsStaff(ctx, cfg, *as)
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := propose(ctx, st, id, decision, member)
	if err != nil {
		return cliError(err)
	}
	fmt.Printf("proposed: decision %s, payout %s %s (audited); a money approver other than %s applies it with\n"+
		"  sika admin approve %s --as APPROVER_EMAIL\n", d.ID, d.Transaction, d.RequestedStatus, member.Email, d.ID)
	return nil
}

// runDecide approves (api.ApproveMoneyDecision: the resolution is applied) or rejects a waiting
// money decision, as the staff member --as, who must not be the one who proposed it.
func runDecide(ctx context.Context, cfg Config, verb string, args []string) error {
	fs := flag.NewFlagSet("admin "+verb, flag.ContinueOnError)
	as := fs.String("as", "", "email of the staff member deciding (a money approver, not the proposer)")
	note := fs.String("note", "", "why (required to reject)")
	id, st, member, err := oneIDAsStaff(ctx, cfg, fs, args, "decision", as)
	if err != nil {
		return err
	}
	defer st.Close()
	if verb == "reject" {
		d, err := api.RejectMoneyDecision(ctx, st, id, member, *note)
		if err != nil {
			return cliError(err)
		}
		fmt.Printf("decision %s rejected by %s (audited); payout %s unchanged\n", d.ID, member.Email, d.Transaction)
		return nil
	}
	srv, err := staffServer(ctx, cfg, st, true)
	if err != nil {
		return err
	}
	defer srv.close()
	a, err := srv.ApproveMoneyDecision(ctx, id, member)
	if err != nil {
		return cliError(err)
	}
	switch {
	case a.Refund != nil:
		r := a.Refund
		fmt.Printf("refund %s (%s) of %s %s issued, proposed by %s and approved by %s (audited): %s; the flag closes when it succeeds\n",
			r.ID, r.Reference, sika.FormatAmount(r.RequestedAmount.Decimal), r.Currency, a.Decision.ProposedByEmail, member.Email, r.Status)
		return nil
	case a.Reheld != nil:
		o := a.Reheld
		fmt.Printf("payout %s re-held after a late success: %s, proposed by %s and approved by %s (audited); held again %s, settled %s, released %s, not recovered %s\n",
			o.Transaction, o.Status, a.Decision.ProposedByEmail, member.Email, sika.FormatAmount(o.Held.Decimal), sika.FormatAmount(o.Settled.Decimal),
			sika.FormatAmount(o.Released.Decimal), sika.FormatAmount(o.Shortfall.Decimal))
		return nil
	case a.Resolution == nil:
		return fmt.Errorf("decision %s approved with nothing to show", id)
	}
	res := a.Resolution
	t := res.Transaction
	if res.DecidedBy == api.DecidedByOperator {
		fmt.Printf("payout %s (%s) is %s: the operator answered %s at the status read, which decided; the proposed %s was NOT applied\n",
			t.ID, t.Reference, t.Status, res.OperatorAnswer, res.RequestedStatus)
	} else {
		fmt.Printf("payout %s (%s) ended %s, proposed by %s and approved by %s, after a status read that answered %s (audited)\n",
			t.ID, t.Reference, t.Status, a.Decision.ProposedByEmail, member.Email, res.OperatorAnswer)
	}
	if t.FailureCode != "" {
		fmt.Printf("failure: %s: %s\n", t.FailureCode, t.FailureMessage)
	}
	fmt.Printf("workflow %s %s\n", res.WorkflowID, workflowLink(cfg, res.WorkflowID))
	return nil
}

// adminServer is the API's code for a staff command of the CLI: what a proposal or an
// approval does through the API is done by the same functions (api.Server's).
type adminServer struct {
	*api.Server
	close func()
}

// staffServer builds the API's code over st with the gateways (and, withTemporal, a Temporal
// client: an approval applies decisions through workflows and starts refunds).
func staffServer(ctx context.Context, cfg Config, st *store.Store, withTemporal bool) (adminServer, error) {
	logger := cfg.logger("text")
	gws, err := newGatewayRouter(cfg, st.GatewayMemory())
	if err != nil {
		return adminServer{}, err
	}
	c := api.Config{Gateways: gws, Logger: logger, TemporalUIURL: cfg.TemporalUIURL, TemporalNamespace: cfg.TemporalNamespace}
	closers := []func(){}
	if withTemporal {
		tc, err := dialTemporal(ctx, cfg, logger, nil)
		if err != nil {
			return adminServer{}, err
		}
		c.Temporal = tc
		closers = append(closers, tc.Close)
	}
	srv := api.NewServer(c, st)
	closers = append([]func(){srv.Close}, closers...)
	return adminServer{Server: srv, close: func() {
		for _, f := range closers {
			f()
		}
	}}, nil
}

// runRefundFlag proposes the refund of a REFUND_DUE flag, as the staff member --as
// (api.Server.ProposeFlagRefund, as POST /admin/money-flags/{id}/refund/), and prints its quote;
// a money approver other than the proposer issues it with `sika admin approve`.
func runRefundFlag(ctx context.Context, cfg Config, args []string) error {
	fs := flag.NewFlagSet("admin refund-flag", flag.ContinueOnError)
	amount := fs.String("amount", "", "what to give back (default: the flag's amount)")
	reason := fs.String("reason", "", "why (required; written to the audit trail and the refund's description)")
	as := fs.String("as", "", "email of the staff member proposing")
	id, st, member, err := oneIDAsStaff(ctx, cfg, fs, args, "flag", as)
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := staffServer(ctx, cfg, st, false)
	if err != nil {
		return err
	}
	defer srv.close()
	d, q, err := srv.ProposeFlagRefund(ctx, id, amount, *reason, member)
	if err != nil {
		return cliError(err)
	}
	v := q.View()
	fmt.Printf("proposed: decision %s, refund of %s %s to the customer of %s (fee %s, %s leaves the wallet, via %s; %s was left to refund) (audited)\n"+
		"a money approver other than %s issues it with\n  sika admin approve %s --as APPROVER_EMAIL\n",
		d.ID, sika.FormatAmount(v.Amount.Decimal), v.Currency, q.Collection.Reference, sika.FormatAmount(v.Fee.Decimal),
		sika.FormatAmount(v.Debited.Decimal), v.Via, sika.FormatAmount(v.Left.Decimal), member.Email, d.ID)
	return nil
}

// runSettleFlag proposes to settle (SUCCESS) or release (FAILED) a payout held again after its
// operator paid it past its release (api.ProposeReheldPayout, as
// POST /admin/money-flags/{id}/settle/); a money approver applies it with `sika admin approve`.
func runSettleFlag(ctx context.Context, cfg Config, args []string) error {
	return runProposeStatus(ctx, cfg, args, "settle-flag", "flag",
		"SUCCESS (the operator paid: the hold leaves the wallet) or FAILED (the hold returns to the wallet)", api.ProposeReheldPayout)
}

// verbAndID splits a command's args into its verb and, for the verbs of withID, the id that
// follows it (what names it in errors); rest is left for the flags.
func verbAndID(args []string, what string, withID ...string) (verb string, id uuid.UUID, rest []string, err error) {
	if len(args) == 0 {
		return "", uuid.Nil, nil, errors.New(supportUsage)
	}
	verb, rest = args[0], args[1:]
	if !slices.Contains(withID, verb) {
		return verb, uuid.Nil, rest, nil
	}
	if len(rest) == 0 {
		return "", uuid.Nil, nil, errors.New(supportUsage)
	}
	if id, err = uuid.Parse(rest[0]); err != nil {
		return "", uuid.Nil, nil, fmt.Errorf("%q is not a %s id", rest[0], what)
	}
	return verb, id, rest[1:], nil
}

// oneID parses flags around one positional id.
func oneID(fs *flag.FlagSet, args []string, what string) (uuid.UUID, error) {
	var rest []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		rest, args = args[:1], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return uuid.Nil, err
	}
	rest = append(rest, fs.Args()...)
	if len(rest) != 1 {
		return uuid.Nil, errors.New(supportUsage)
	}
	id, err := uuid.Parse(rest[0])
	if err != nil {
		return uuid.Nil, fmt.Errorf("%q is not a %s id", rest[0], what)
	}
	return id, nil
}

// parseAndOpen parses the flags of a command that takes no positional argument and opens the
// store.
func parseAndOpen(ctx context.Context, cfg Config, fs *flag.FlagSet, args []string) (*store.Store, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, errors.New(supportUsage)
	}
	return openStore(ctx, cfg, cfg.logger("text"))
}

// oneIDAsStaff parses the flags of a staff command around its one id (what names it) and
// opens the store as the staff member of the --as flag.
func oneIDAsStaff(ctx context.Context, cfg Config, fs *flag.FlagSet, args []string, what string, as *string) (uuid.UUID, *store.Store, sika.Member, error) {
	id, err := oneID(fs, args, what)
	if err != nil {
		return uuid.Nil, nil, sika.Member{}, err
	}
	st, member, err := openAsStaff(ctx, cfg, *as)
	return id, st, member, err
}

// openAsStaff opens the store and finds the staff member of --as.
func openAsStaff(ctx context.Context, cfg Config, email string) (*store.Store, sika.Member, error) {
	st, err := openStore(ctx, cfg, cfg.logger("text"))
	if err != nil {
		return nil, sika.Member{}, err
	}
	member, err := staffMember(ctx, st, email)
	if err != nil {
		st.Close()
		return nil, sika.Member{}, err
	}
	return st, member, nil
}

// staffMember is the staff member of email (the --as of a staff command).
func staffMember(ctx context.Context, st *store.Store, email string) (sika.Member, error) {
	member, _, err := st.MemberByEmail(ctx, email)
	if err != nil || !member.IsStaff {
		return sika.Member{}, errors.New("--as must be the email of a staff member (see sika admin bootstrap)")
	}
	return member, nil
}

// cliError spells out a validation error's fields (a business error reads well as it is).
func cliError(err error) error {
	var e *sika.Error
	if !errors.As(err, &e) || e.Code != sika.CodeValidation {
		return err
	}
	var parts []string
	for _, field := range slices.Sorted(maps.Keys(e.Fields)) {
		parts = append(parts, field+": "+strings.Join(e.Fields[field], " "))
	}
	return errors.New(strings.Join(parts, "; "))
}

// runMoneyFlags lists the money that needs a person (as GET /admin/money-flags/): the open flags
// oldest first, and with --all the resolved ones after them.
func runMoneyFlags(ctx context.Context, cfg Config, args []string) error {
	fs := flag.NewFlagSet("admin money-flags", flag.ContinueOnError)
	all := fs.Bool("all", false, "the resolved flags too")
	st, err := parseAndOpen(ctx, cfg, fs, args)
	if err != nil {
		return err
	}
	defer st.Close()
	flags, err := api.OpenFlagsFirst(ctx, st, *all, 500)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tKIND\tTRANSACTION\tMERCHANT\tENV\tAMOUNT\tCREATED\tRESOLVED\tREASON")
	for _, f := range flags {
		resolved := "open"
		if f.ResolvedAt != nil {
			resolved = f.ResolvedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s %s\t%s\t%s\t%s\n", f.ID, f.Kind, f.Transaction, f.Merchant, f.Environment,
			sika.FormatAmount(f.Amount.Decimal), f.Currency, f.CreatedAt.UTC().Format(time.RFC3339), resolved, f.Reason)
	}
	_ = tw.Flush()
	open := 0
	for _, f := range flags {
		if f.ResolvedAt == nil {
			open++
		}
	}
	fmt.Printf("%d flag(s), %d open\n", len(flags), open)
	return nil
}
