package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/webhook"
)

// listenForwardTimeout bounds the local endpoint's answer, as a real delivery does (contract §9).
const listenForwardTimeout = 15 * time.Second

// runListen is `sika listen --forward-to URL [--events a,b]`: it follows the key's event stream
// (GET /events/stream/) and forwards each event to the local URL as a webhook delivery signed
// with a secret made for this session (Standard Webhooks, as package webhook signs real
// deliveries), printing each event and the local answer. A drop is resumed from the last event
// received: nothing lost, nothing twice.
func runListen(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	client := devFlags(fs, getenv)
	forwardTo := fs.String("forward-to", "", "local URL that receives the events, e.g. http://localhost:3000/webhooks (required)")
	events := fs.String("events", "", "comma-separated event types to forward (default all), e.g. transaction.succeeded,payout.succeeded")
	if err := parseDevFlags(fs, args, out); err != nil {
		return err
	}
	c, err := client()
	if err != nil {
		return err
	}
	if *forwardTo == "" || !(strings.HasPrefix(*forwardTo, "http://") || strings.HasPrefix(*forwardTo, "https://")) {
		return errors.New("listen: --forward-to needs an http(s) URL, e.g. http://localhost:3000/webhooks")
	}
	only := map[sika.EventType]bool{}
	for name := range strings.SplitSeq(*events, ",") {
		if name = strings.TrimSpace(name); name != "" {
			only[eventType(name)] = true
		}
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return fmt.Errorf("make the session's signing secret: %w", err)
	}
	fmt.Fprintf(out, "Ready. Forwarding events to %s\nWebhook signing secret of this session: %s\n(verify with it while sika listen runs; Ctrl-C to stop)\n", *forwardTo, secret)
	local := &http.Client{Timeout: listenForwardTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c.follow(ctx, "/events/stream/", out, func(m sseMessage) error {
		if len(only) > 0 && !only[sika.EventType(m.Event)] {
			return nil
		}
		status := forwardEvent(ctx, local, *forwardTo, secret, m)
		fmt.Fprintf(out, "%s  %-28s %s  -> %s\n", time.Now().Format("2006-01-02 15:04:05"), m.Event, m.ID, status)
		return nil
	})
}

// forwardEvent posts one event to the local URL as a signed delivery and describes the answer.
// A failure is shown, not retried: the developer sees it and fixes the handler.
func forwardEvent(ctx context.Context, local *http.Client, url, secret string, m sseMessage) string {
	header, err := webhook.Headers([]string{secret}, m.ID, time.Now(), m.Data)
	if err != nil {
		return "not sent: " + err.Error()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(m.Data))
	if err != nil {
		return "not sent: " + err.Error()
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sika-listen")
	start := time.Now()
	resp, err := local.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return fmt.Sprintf("%d %s (%d ms)", resp.StatusCode, http.StatusText(resp.StatusCode), time.Since(start).Milliseconds())
}
