// Command sika is the one binary of the service:
//
//	sika dev                 the whole service on its embedded default (Postgres, Temporal, API, worker)
//	sika cluster             the Temporal server and API and worker replicas behind one address
//	sika api                 the HTTP API
//	sika worker              the Temporal worker
//	sika migrate             apply the database migrations
//	sika sandbox             the sandbox operator that TEST payments go to
//	sika admin bootstrap     create (or reset) a staff member and print its credentials
//	sika stack -- CMD ARGS   run CMD with a throw-away Postgres and Temporal (used by make test)
//	sika listen|trigger|logs the developer CLI, against the API with an API key
//
// Configuration comes only from environment variables (see config.go and docs/configuration.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sikahq/sika/workflows"
)

const usage = `usage: sika <command>

commands:
  dev                 run the whole service on its embedded default (make run)
  cluster             the Temporal server, API and worker replicas behind one address (make cluster): [-apis 2] [-workers 2]
  api                 serve the HTTP API
  worker              run the Temporal worker
  migrate             apply database migrations
  sandbox             serve the sandbox operator (TEST gateways)
  admin bootstrap     create or reset a staff member: [--email EMAIL] [--name NAME]
  admin check-ledger  verify every wallet against its ledger (non-zero exit on a discrepancy)
  admin kyc list|approve|reject   the KYC review queue (approve/reject: --as STAFF_EMAIL [--note])
  admin payments stuck|reverify   PENDING transactions with their workflows; re-check one at its gateway
  admin unclear-payouts   payouts that await their operator: [--older-than 15m]
  admin resolve ID        propose the end of an unclear payout: --status FAILED|SUCCESS --reason TEXT --as STAFF_EMAIL
  admin approve|reject ID a second staff member (a money approver) applies or rejects the proposal: --as EMAIL [--note TEXT]
  admin money-flags       second successes (refund due) and payouts paid after release: [--all]
  admin refund-flag ID    propose a REFUND_DUE flag's refund: [--amount AMOUNT] --reason TEXT --as STAFF_EMAIL
  admin settle-flag ID    propose a re-held payout's end: --status SUCCESS|FAILED --reason TEXT --as STAFF_EMAIL
  admin payload-key       a new Temporal payload key, and SIKA_PAYLOAD_KEYS with it first (rotation)
  stack -- CMD ...    run CMD with a private Postgres and Temporal (make test)

developer commands (an API key in --api-key or SIKA_API_KEY; the API at --base-url or
SIKA_BASE_URL, default http://127.0.0.1:8080/api/v1):
  listen --forward-to URL [--events a,b]   forward the merchant's events, live and signed with a
                      per-session whsec_ secret printed at start, to a local URL
  trigger EVENT       TEST key only: make the sandbox produce EVENT for real: payment.succeeded,
                      payment.failed, payout.succeeded, checkout.expired (or the contract's names)
  logs tail           the merchant's API requests as they happen
`

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0) // -h: the flag set has printed its usage
		}
		var exit exitCode
		if errors.As(err, &exit) {
			os.Exit(int(exit))
		}
		fmt.Fprintln(os.Stderr, "sika:", err)
		os.Exit(1)
	}
}

// exitCode carries a child's exit status through run.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func run(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return exitCode(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The developer commands talk to the API only: no server configuration.
	switch args[0] {
	case "listen":
		return runListen(ctx, args[1:], os.Getenv, os.Stdout)
	case "trigger":
		return runTrigger(ctx, args[1:], os.Getenv, os.Stdout)
	case "logs":
		return runLogs(ctx, args[1:], os.Getenv, os.Stdout)
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	workflows.TaskQueue = cfg.TaskQueue
	workflows.RecheckInterval = cfg.RecheckInterval
	if len(cfg.WebhookSchedule) > 0 {
		workflows.WebhookSchedule = cfg.WebhookSchedule
	}
	switch args[0] {
	case "dev":
		return runDev(ctx, cfg)
	case "cluster":
		return runCluster(ctx, cfg, args[1:])
	case "api":
		return runAPICommand(ctx, cfg)
	case "worker":
		return runWorkerCommand(ctx, cfg)
	case "migrate":
		return runMigrate(ctx, cfg)
	case "sandbox":
		return runSandboxCommand(ctx, cfg)
	case "admin":
		return runAdmin(ctx, cfg, args[1:])
	case "stack":
		return runStack(ctx, cfg, args[1:])
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
