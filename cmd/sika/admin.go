package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
)

func runAdmin(ctx context.Context, cfg Config, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "check-ledger":
			return runCheckLedger(ctx, cfg)
		case "kyc":
			return runKYCCommand(ctx, cfg, args[1:])
		case "payments":
			return runPaymentsCommand(ctx, cfg, args[1:])
		case "unclear-payouts":
			return runUnclearPayouts(ctx, cfg, args[1:])
		case "resolve":
			return runResolve(ctx, cfg, args[1:])
		case "approve", "reject":
			return runDecide(ctx, cfg, args[0], args[1:])
		case "money-flags":
			return runMoneyFlags(ctx, cfg, args[1:])
		case "refund-flag":
			return runRefundFlag(ctx, cfg, args[1:])
		case "settle-flag":
			return runSettleFlag(ctx, cfg, args[1:])
		case "payload-key":
			return runPayloadKey(cfg)
		}
	}
	if len(args) == 0 || args[0] != "bootstrap" {
		return errors.New("usage: sika admin bootstrap [--email EMAIL] [--name NAME] | sika admin check-ledger\n" + supportUsage)
	}
	fs := flag.NewFlagSet("admin bootstrap", flag.ContinueOnError)
	email := fs.String("email", "admin@sika.local", "email of the staff member")
	name := fs.String("name", "Sika Admin", "full name of the staff member")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	logger := cfg.logger("text")
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	password, created, err := bootstrapMember(ctx, st, *email, *name, sika.StaffAdmin, "")
	if err != nil {
		return err
	}
	verb := "created"
	if !created {
		verb = "already existed; password reset"
	}
	fmt.Printf("staff member %s\nemail:    %s\npassword: %s\n", verb, *email, password)
	return nil
}

// bootstrapMember makes sure a member with this email exists and can log in with a password it
// returns; role is its staff role ("" for none), given when the member has none yet. keep is a password to keep when it is still the member's (so that `sika dev` prints
// the same credentials on every run); otherwise a new random password is set.
func bootstrapMember(ctx context.Context, st *store.Store, email, name string, role sika.StaffRole, keep string) (password string, created bool, err error) {
	member, hash, err := st.MemberByEmail(ctx, email)
	exists := err == nil
	if err != nil && sika.ErrorCode(err) != sika.CodeNotFound {
		return "", false, err
	}
	if exists && keep != "" && member.IsStaff == (role != "") && sika.PasswordMatches(hash, keep) {
		return keep, false, nil
	}
	if password, err = newPassword(); err != nil {
		return "", false, err
	}
	newHash, err := sika.HashPassword(password)
	if err != nil {
		return "", false, fmt.Errorf("hash password: %w", err)
	}
	if exists {
		return password, false, st.SetMemberPassword(ctx, member.ID, newHash, role)
	}
	if _, _, err := st.RegisterMember(ctx, email, newHash, name, role, nil); err != nil {
		return "", false, fmt.Errorf("create member %s: %w", email, err)
	}
	return password, true, nil
}

// newPassword returns a random password of 20 base62 characters (about 119 bits).
func newPassword() (string, error) {
	p, err := sika.RandomBase62(20)
	if err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return p, nil
}

// runCheckLedger verifies that every wallet equals the sums of its ledger entries and that the
// entries chain; it prints the first discrepancy and fails on any.
func runCheckLedger(ctx context.Context, cfg Config) error {
	st, err := openStore(ctx, cfg, cfg.logger("text"))
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := st.CheckLedger(ctx)
	if err != nil {
		return err
	}
	if d != nil {
		fmt.Printf("wallet %s: %s\n", d.Wallet, d.Problem)
		return exitCode(1)
	}
	fmt.Println("every wallet equals its ledger")
	return nil
}

// runPayloadKey prints a new Temporal payload key (id:base64key) and the ring with it first:
// the rotation of SIKA_PAYLOAD_KEYS (docs/security.md). Old keys stay in the ring while
// histories encrypted with them are kept.
func runPayloadKey(cfg Config) error {
	k, err := payloadcodec.NewKey(time.Now())
	if err != nil {
		return err
	}
	ring := k
	if cfg.PayloadKeys != nil {
		ring += "," + cfg.PayloadKeys.Secret()
	}
	fmt.Printf("new key:  %s\n%s=%s\n", k, payloadcodec.EnvKeys, ring)
	return nil
}
