package main

// The developer CLI (`sika listen`, `sika trigger`, `sika logs tail`): commands a merchant's
// developer runs on a laptop against the public API with an API key. They need no database
// and no Temporal: only SIKA_API_KEY (or --api-key) and the API's address.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika"
)

// defaultBaseURL is where `make run` serves the API.
const defaultBaseURL = "http://127.0.0.1:8080/api/v1"

// devClient calls the merchant API with an API key.
type devClient struct {
	baseURL string
	key     string
	http    *http.Client
}

// devFlags declares the flags every developer command takes (--api-key, --base-url) on fs and
// returns what builds the client once fs is parsed.
// The key's flag has no default value: $SIKA_API_KEY is read after parsing, so that -h, which
// prints every flag's default, never prints the key.
func devFlags(fs *flag.FlagSet, getenv func(string) string) func() (*devClient, error) {
	key := fs.String("api-key", "", "API key (default $SIKA_API_KEY)")
	baseURL := fs.String("base-url", "", "API base URL (default $SIKA_BASE_URL, else the base_url of the running `sika dev` in $SIKA_STATE_DIR/dev.json, else "+defaultBaseURL+")")
	return func() (*devClient, error) {
		k := cmp.Or(*key, getenv("SIKA_API_KEY"))
		if k == "" {
			return nil, errors.New("an API key is needed: --api-key or SIKA_API_KEY")
		}
		base := cmp.Or(*baseURL, getenv("SIKA_BASE_URL"), devBaseURL(getenv), defaultBaseURL)
		return &devClient{baseURL: strings.TrimRight(base, "/"), key: k, http: &http.Client{Timeout: 30 * time.Second}}, nil
	}
}

// devBaseURL is the API address `sika dev` wrote to its dev.json (it moves off 8080 when that
// port is taken), or "" when there is none.
func devBaseURL(getenv func(string) string) string {
	return readDevInfo(filepath.Join(cmp.Or(getenv("SIKA_STATE_DIR"), ".sika"), "dev.json")).BaseURL
}

// parseDevFlags parses a developer command's flags; -h prints its usage and returns flag.ErrHelp.
func parseDevFlags(fs *flag.FlagSet, args []string, out io.Writer) error {
	fs.SetOutput(out)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 && fs.Name() != "trigger" {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// apiError is an API answer that is not a success: its status and the envelope's error.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("API answered %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("API answered %d %s: %s", e.Status, e.Code, e.Message)
}

// permanent reports whether retrying cannot help (a bad key, a refused request).
func (e *apiError) permanent() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests && e.Status != http.StatusRequestTimeout
}

// readAPIError decodes a failed answer's envelope.
func readAPIError(resp *http.Response) *apiError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &apiError{Status: resp.StatusCode, Message: strings.TrimSpace(string(raw))}
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && len(env.Error) > 0 {
		var business struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &business) == nil && business.Code != "" {
			e.Code, e.Message = business.Code, business.Message
		} else {
			e.Code, e.Message = string(sika.CodeValidation), string(env.Error)
		}
	}
	return e
}

// call sends a JSON request (body nil for none, with an Idempotency-Key when idem is set) and
// decodes the envelope's data into out (when not nil).
func (c *devClient) call(ctx context.Context, method, path string, body any, idem string, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readAPIError(resp)
	}
	if out == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("decode %s %s data: %w", method, path, err)
	}
	return nil
}

// sseMessage is one server-sent event.
type sseMessage struct {
	ID, Event string
	Data      []byte
}

// stream reads a server-sent event stream of the API from after lastID (none: from now), and
// hands each message to handle, until the stream ends, ctx ends or handle fails; opened is
// called once the API has accepted the stream. It returns the id of the last message handled
// and the server's retry delay.
func (c *devClient) stream(ctx context.Context, path, lastID string, opened func(), handle func(sseMessage) error) (string, time.Duration, error) {
	retry := time.Second
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.baseURL+path, nil)
	if err != nil {
		return lastID, retry, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	// No client timeout: the stream stays open; ctx ends it.
	resp, err := (&http.Client{Transport: c.http.Transport}).Do(req)
	if err != nil {
		return lastID, retry, fmt.Errorf("open %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return lastID, retry, readAPIError(resp)
	}
	opened()
	rd := bufio.NewReader(resp.Body)
	var msg sseMessage
	var data bytes.Buffer
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			if ctx.Err() != nil {
				return lastID, retry, ctx.Err()
			}
			return lastID, retry, fmt.Errorf("read %s: %w", path, err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if data.Len() == 0 && msg.ID != "" {
				// A position without a message (the stream's start): where to resume from.
				lastID = msg.ID
			} else if data.Len() > 0 {
				msg.Data = bytes.TrimSuffix(data.Bytes(), []byte("\n"))
				if err := handle(msg); err != nil {
					return lastID, retry, err
				}
				if msg.ID != "" {
					lastID = msg.ID
				}
			}
			msg, data = sseMessage{}, bytes.Buffer{}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			msg.ID = value
		case "event":
			msg.Event = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms > 0 {
				retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// follow keeps a stream open across drops: it reconnects after the server's retry delay
// (growing while the API stays unreachable) with the last id received, so that nothing is lost
// or repeated. It returns when ctx ends or on an answer retrying cannot change (a bad key).
func (c *devClient) follow(ctx context.Context, path string, log io.Writer, handle func(sseMessage) error) error {
	lastID := ""
	failures := 0
	for {
		connected := false
		var retry time.Duration
		var err error
		lastID, retry, err = c.stream(ctx, path, lastID, func() {
			connected = true
			if lastID == "" {
				fmt.Fprintln(log, "Connected; waiting for what happens from now on.")
			} else if strings.HasPrefix(lastID, "@") {
				fmt.Fprintln(log, "Reconnected; resuming where the stream was.")
			} else {
				fmt.Fprintf(log, "Reconnected; resuming after %s.\n", lastID)
			}
		}, func(m sseMessage) error {
			if err := handle(m); err != nil {
				return &handlerError{err}
			}
			return nil
		})
		if ctx.Err() != nil {
			return nil
		}
		var apiErr *apiError
		if errors.As(err, &apiErr) && apiErr.permanent() {
			return apiErr
		}
		var handleErr *handlerError
		if errors.As(err, &handleErr) {
			return handleErr.err
		}
		if connected {
			failures = 0
		}
		failures++
		wait := min(retry*time.Duration(1<<min(failures-1, 5)), 30*time.Second)
		fmt.Fprintf(log, "connection lost (%v); reconnecting in %s\n", err, wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// handlerError stops follow: the handler failed, not the stream.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }

// eventAliases maps the CLI's names of events to the contract's types (both spellings work).
var eventAliases = map[string]sika.EventType{
	"payment.succeeded": sika.EventTransactionSucceeded,
	"payment.failed":    sika.EventTransactionFailed,
	"payment.pending":   sika.EventTransactionPending,
	"checkout.expired":  sika.EventCheckoutSessionExpired,
	"checkout.paid":     sika.EventCheckoutSessionPaid,
}

// eventType resolves a CLI event name to the contract's type.
func eventType(name string) sika.EventType {
	name = strings.ToLower(strings.TrimSpace(name))
	if t, ok := eventAliases[name]; ok {
		return t
	}
	return sika.EventType(name)
}
