package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

const supportUsage = `usage:
  sika admin kyc list [--status PENDING|APPROVED|REJECTED]
  sika admin kyc approve|reject DOSSIER_ID --as STAFF_EMAIL [--note TEXT]
  sika admin payments stuck [--older-than 10m]
  sika admin payments reverify TRANSACTION_ID`

// workflowLink links a workflow in the Temporal UI, when one is configured.
func workflowLink(cfg Config, id string) string {
	if cfg.TemporalUIURL == "" || id == "" {
		return ""
	}
	return cfg.TemporalUIURL + "/namespaces/" + url.PathEscape(cfg.TemporalNamespace) + "/workflows/" + url.PathEscape(id)
}

// runKYCCommand lists the review queue, or approves or rejects a dossier as a staff member.
func runKYCCommand(ctx context.Context, cfg Config, args []string) error {
	if len(args) == 0 {
		return errors.New(supportUsage)
	}
	fs := flag.NewFlagSet("admin kyc", flag.ContinueOnError)
	status := fs.String("status", "PENDING", "dossiers in this status")
	as := fs.String("as", "", "email of the staff member deciding")
	note := fs.String("note", "", "review note")
	verb, rest := args[0], args[1:]
	var id uuid.UUID
	if verb == "approve" || verb == "reject" {
		if len(rest) == 0 {
			return errors.New(supportUsage)
		}
		var err error
		if id, err = uuid.Parse(rest[0]); err != nil {
			return fmt.Errorf("%q is not a dossier id", rest[0])
		}
		rest = rest[1:]
	}
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
		member, _, err := st.MemberByEmail(ctx, *as)
		if err != nil || !member.IsStaff {
			return errors.New("--as must be the email of a staff member (see sika admin bootstrap)")
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
	if len(args) == 0 {
		return errors.New(supportUsage)
	}
	fs := flag.NewFlagSet("admin payments", flag.ContinueOnError)
	olderThan := fs.Duration("older-than", 10*time.Minute, "PENDING for longer than this")
	verb, rest := args[0], args[1:]
	var id uuid.UUID
	if verb == "reverify" {
		if len(rest) == 0 {
			return errors.New(supportUsage)
		}
		var err error
		if id, err = uuid.Parse(rest[0]); err != nil {
			return fmt.Errorf("%q is not a transaction id", rest[0])
		}
		rest = rest[1:]
	}
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
		tc, err := dialTemporal(ctx, cfg, logger)
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
