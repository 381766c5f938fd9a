package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"
)

// requestLogEntry is one message of GET /request-logs/stream/.
type requestLogEntry struct {
	Method         string    `json:"method"`
	Path           string    `json:"path"`
	Status         int       `json:"status"`
	LatencyMS      float64   `json:"latency_ms"`
	IdempotencyKey *string   `json:"idempotency_key"`
	RequestID      string    `json:"request_id"`
	CreatedAt      time.Time `json:"created_at"`
}

// runLogs is `sika logs tail`: the key's merchant's API requests of its environment as they
// happen (GET /request-logs/stream/), one line each, resumed without loss after a drop.
func runLogs(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	if len(args) == 0 || args[0] != "tail" {
		return fmt.Errorf("usage: sika logs tail [--api-key KEY] [--base-url URL]")
	}
	fs := flag.NewFlagSet("logs tail", flag.ContinueOnError)
	client := devFlags(fs, getenv)
	if err := parseDevFlags(fs, args[1:], out); err != nil {
		return err
	}
	c, err := client()
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "Tailing API requests (Ctrl-C to stop)")
	return c.follow(ctx, "/request-logs/stream/", out, func(m sseMessage) error {
		var e requestLogEntry
		if err := json.Unmarshal(m.Data, &e); err != nil {
			fmt.Fprintf(out, "unreadable request log %s: %v\n", m.ID, err)
			return nil
		}
		idem := "-"
		if e.IdempotencyKey != nil {
			idem = *e.IdempotencyKey
		}
		fmt.Fprintf(out, "%s  %-6s %-45s %d  %7.1f ms  idempotency-key=%s  request-id=%s\n", e.CreatedAt.Local().Format("2006-01-02 15:04:05"),
			e.Method, e.Path, e.Status, e.LatencyMS, idem, e.RequestID)
		return nil
	})
}
