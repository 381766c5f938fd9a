package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// Sandbox numbers whose last three digits choose the outcome (operators.md): any other suffix
// succeeds, 001 is declined (collections) or has no recipient (payouts).
const (
	triggerSucceedingNumber = "97000123"
	triggerDecliningNumber  = "97000001"
	triggerPollEvery        = 300 * time.Millisecond
)

// triggerOptions is what a trigger sends; defaults fit the demo merchant of `make run` (Benin).
type triggerOptions struct {
	country, network, currency string
	amount                     decimal.Decimal
	expiresIn, timeout         time.Duration
}

// runTrigger is `sika trigger EVENT`: with a TEST key, it makes the sandbox produce the event
// for real through the public API (a sandbox payment, payout or checkout session whose outcome
// gives that event), waits for the event in the event log and prints its id. Nothing is
// forged: the event is the one every webhook endpoint and `sika listen` receive.
func runTrigger(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("trigger", flag.ContinueOnError)
	client := devFlags(fs, getenv)
	var o triggerOptions
	fs.StringVar(&o.country, "country", "BJ", "country of the payment or payout")
	fs.StringVar(&o.network, "network", "MTN_BJ", "mobile-money network of the payment or payout")
	fs.StringVar(&o.currency, "currency", "XOF", "currency")
	amount := fs.String("amount", "1000", "amount")
	fs.DurationVar(&o.expiresIn, "expires-in", 12*time.Second, "checkout.expired: the session's lifetime (TEST floor: 10s)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the event")
	// Flags may come after the event name too (sika trigger payment.succeeded --amount 500).
	var names []string
	rest := args
	for {
		if err := parseDevFlags(fs, rest, out); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names, rest = append(names, fs.Arg(0)), fs.Args()[1:]
	}
	if len(names) != 1 {
		return errors.New("usage: sika trigger payment.succeeded|payment.failed|payout.succeeded|checkout.expired [flags]")
	}
	var err error
	if o.amount, err = decimal.NewFromString(*amount); err != nil || !o.amount.IsPositive() {
		return fmt.Errorf("trigger: --amount %q is not a positive amount", *amount)
	}
	c, err := client()
	if err != nil {
		return err
	}
	if !strings.HasPrefix(c.key, sika.APIKeyPrefixTest) {
		return errors.New("sika trigger needs a TEST key (sk_test_…): it makes real payments, and with a LIVE key they would move real money")
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	typ := eventType(names[0])
	var ev triggeredEvent
	switch typ {
	case sika.EventTransactionSucceeded:
		ev, err = triggerPayment(ctx, c, o, triggerSucceedingNumber, typ, out)
	case sika.EventTransactionFailed:
		ev, err = triggerPayment(ctx, c, o, triggerDecliningNumber, typ, out)
	case sika.EventPayoutSucceeded:
		ev, err = triggerPayout(ctx, c, o, out)
	case sika.EventCheckoutSessionExpired:
		ev, err = triggerCheckoutExpiry(ctx, c, o, out)
	default:
		return fmt.Errorf("trigger: unknown event %q; one of payment.succeeded (transaction.succeeded), payment.failed (transaction.failed), payout.succeeded, checkout.expired (checkout_session.expired)", names[0])
	}
	if err != nil {
		return fmt.Errorf("trigger %s: %w", typ, err)
	}
	fmt.Fprintf(out, "Triggered %s: %s (for %s)\n", ev.Type, ev.ID, ev.Resource)
	return nil
}

// triggeredEvent is the event a trigger produced, as found in the event log.
type triggeredEvent struct {
	ID       string
	Type     sika.EventType
	Resource string
}

// triggerPayment makes a sandbox softpay to a number whose outcome gives typ, and waits for the
// event of its transaction.
func triggerPayment(ctx context.Context, c *devClient, o triggerOptions, number string, typ sika.EventType, out io.Writer) (triggeredEvent, error) {
	id, status, err := sandboxPayment(ctx, c, o, o.amount, number, out)
	if err != nil {
		return triggeredEvent{}, err
	}
	if want := map[sika.EventType]string{sika.EventTransactionSucceeded: "SUCCESS", sika.EventTransactionFailed: "FAILED"}[typ]; status != want {
		return triggeredEvent{}, fmt.Errorf("the sandbox payment ended %s, not %s", status, want)
	}
	return waitForEvent(ctx, c, typ, id)
}

// sandboxPayment makes a softpay and returns its transaction id and status once it is final.
func sandboxPayment(ctx context.Context, c *devClient, o triggerOptions, amount decimal.Decimal, number string, out io.Writer) (string, string, error) {
	var tx struct {
		ID string `json:"id"`
	}
	err := c.call(ctx, "POST", "/payments/softpay/", map[string]any{"amount": amount.String(), "currency": o.currency, "country": o.country,
		"network": o.network, "customer_phone": number, "customer_name": "Sika Trigger", "description": "sika trigger"}, uuid.NewString(), &tx)
	if err != nil {
		return "", "", fmt.Errorf("create the sandbox payment: %w", err)
	}
	fmt.Fprintf(out, "Sandbox payment %s of %s %s created; waiting for its outcome\n", tx.ID, amount, o.currency)
	status, err := waitForStatus(ctx, c, "/transactions/"+tx.ID+"/", "SUCCESS", "FAILED")
	if err != nil {
		return "", "", err
	}
	fmt.Fprintf(out, "Payment %s: %s\n", tx.ID, status)
	return tx.ID, status, nil
}

// triggerPayout pays out to a number that succeeds, first funding the TEST wallet with a
// sandbox payment when its available balance is short.
func triggerPayout(ctx context.Context, c *devClient, o triggerOptions, out io.Writer) (triggeredEvent, error) {
	var balances struct {
		Results []struct {
			Currency  string          `json:"currency"`
			Available decimal.Decimal `json:"available_amount"`
		} `json:"results"`
	}
	if err := c.call(ctx, "GET", "/merchant-balances/?page_size=100", nil, "", &balances); err != nil {
		return triggeredEvent{}, fmt.Errorf("read the balances: %w", err)
	}
	available := decimal.Zero
	for _, b := range balances.Results {
		if b.Currency == o.currency {
			available = available.Add(b.Available)
		}
	}
	// Twice the amount covers the payout's fee whatever the pricing.
	if available.LessThan(o.amount.Mul(decimal.NewFromInt(2))) {
		fmt.Fprintf(out, "The TEST wallet holds %s %s: funding it first with a sandbox payment\n", available, o.currency)
		_, status, err := sandboxPayment(ctx, c, o, o.amount.Mul(decimal.NewFromInt(3)), triggerSucceedingNumber, out)
		if err != nil {
			return triggeredEvent{}, err
		}
		if status != "SUCCESS" {
			return triggeredEvent{}, fmt.Errorf("the funding payment ended %s", status)
		}
	}
	var tx struct {
		ID string `json:"id"`
	}
	err := c.call(ctx, "POST", "/payouts/initialize/", map[string]any{"amount": o.amount.String(), "currency": o.currency, "country": o.country,
		"method": o.network, "recipient": triggerSucceedingNumber, "recipient_name": "Sika Trigger", "description": "sika trigger"}, uuid.NewString(), &tx)
	if err != nil {
		return triggeredEvent{}, fmt.Errorf("create the sandbox payout: %w", err)
	}
	fmt.Fprintf(out, "Sandbox payout %s of %s %s created; waiting for its outcome\n", tx.ID, o.amount, o.currency)
	status, err := waitForStatus(ctx, c, "/transactions/"+tx.ID+"/", "SUCCESS", "FAILED")
	if err != nil {
		return triggeredEvent{}, err
	}
	if status != "SUCCESS" {
		return triggeredEvent{}, fmt.Errorf("the payout ended %s", status)
	}
	return waitForEvent(ctx, c, sika.EventPayoutSucceeded, tx.ID)
}

// triggerCheckoutExpiry creates a checkout session that expires after o.expiresIn (TEST allows
// 10 seconds) and waits for the expiry workflow to expire it.
func triggerCheckoutExpiry(ctx context.Context, c *devClient, o triggerOptions, out io.Writer) (triggeredEvent, error) {
	var cs struct {
		ID        string    `json:"id"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	err := c.call(ctx, "POST", "/checkout-sessions/", map[string]any{"amount": o.amount.String(), "currency": o.currency, "country": o.country,
		"customer_email": "trigger@example.com", "customer_name": "Sika Trigger", "description": "sika trigger",
		"expires_at": time.Now().Add(o.expiresIn).UTC().Format(time.RFC3339Nano)}, "", &cs)
	if err != nil {
		return triggeredEvent{}, fmt.Errorf("create the checkout session: %w", err)
	}
	fmt.Fprintf(out, "Checkout session %s created; it expires at %s\n", cs.ID, cs.ExpiresAt.Local().Format("15:04:05"))
	if _, err := waitForStatus(ctx, c, "/checkout-sessions/"+cs.ID+"/", "EXPIRED"); err != nil {
		return triggeredEvent{}, err
	}
	return waitForEvent(ctx, c, sika.EventCheckoutSessionExpired, cs.ID)
}

// waitForStatus polls a resource until its status is one of final, and returns it.
func waitForStatus(ctx context.Context, c *devClient, path string, final ...string) (string, error) {
	for {
		var r struct {
			Status string `json:"status"`
		}
		if err := c.call(ctx, "GET", path, nil, "", &r); err != nil {
			return "", err
		}
		for _, f := range final {
			if r.Status == f {
				return r.Status, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("still %s after the timeout (%s)", r.Status, path)
		case <-time.After(triggerPollEvery):
		}
	}
}

// waitForEvent finds, in the newest page of the event log, the event of type typ about the
// resource id (it is recorded with the state change, so it is there once the status is).
func waitForEvent(ctx context.Context, c *devClient, typ sika.EventType, resource string) (triggeredEvent, error) {
	for {
		var page struct {
			Results []struct {
				ID   string          `json:"id"`
				Type sika.EventType  `json:"type"`
				Data json.RawMessage `json:"data"`
			} `json:"results"`
		}
		if err := c.call(ctx, "GET", "/events/?page_size=100", nil, "", &page); err != nil {
			return triggeredEvent{}, fmt.Errorf("read the event log: %w", err)
		}
		for _, e := range page.Results {
			var data struct {
				ID string `json:"id"`
			}
			if e.Type == typ && json.Unmarshal(e.Data, &data) == nil && data.ID == resource {
				return triggeredEvent{ID: e.ID, Type: e.Type, Resource: resource}, nil
			}
		}
		select {
		case <-ctx.Done():
			return triggeredEvent{}, fmt.Errorf("no %s event for %s in the event log", typ, resource)
		case <-time.After(triggerPollEvery):
		}
	}
}
