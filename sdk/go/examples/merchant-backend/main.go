// Command merchant-backend is a minimal merchant backend on the Sika Go client: it sells an
// order through a hosted checkout session, receives Sika's webhook, verifies it, and marks the
// order paid. It does what sdk/typescript/examples/merchant-backend.mjs does.
//
//	cd sdk/go && go run ./examples/merchant-backend         # after `make run`: reads .sika/dev.json
//	cd sdk/go && go run ./examples/merchant-backend -demo   # also plays the customer in TEST, then exits
//
// Routes:
//
//	POST /orders      {"amount": "5000", "customer_name": "…", "customer_email": "…"}
//	                  → {"order": {…}, "checkout_url": "…"}: send the customer there
//	GET  /orders/{id} → the order, "status": "awaiting_payment" | "paid"
//	POST /webhooks    Sika's deliveries (Standard Webhooks signatures)
//
// Settings: SIKA_BASE_URL, SIKA_API_KEY (a TEST or LIVE key of scope PAYIN or BOTH) and
// SIKA_WEBHOOK_SECRET (the endpoint's signing_secret), PORT (default 3000; 0 picks a free one).
// Without them it takes the base URL and the TEST key from `make run`'s .sika/dev.json (found
// from the current directory up, or -dev-json PATH), logs in as the demo merchant, registers its
// own /webhooks URL as a TEST endpoint to get a secret, and removes it when it stops.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	sika "github.com/sikahq/sika/sdk/go"
)

// devJSON is the part of `make run`'s .sika/dev.json the example reads.
type devJSON struct {
	BaseURL  string `json:"base_url"`
	Merchant struct {
		Email    string `json:"email"`
		Password string `json:"password"`
		APIKeys  struct {
			TestBoth string `json:"test_both"`
		} `json:"api_keys"`
	} `json:"merchant"`
}

// order is one of the shop's orders, kept in memory.
type order struct {
	ID              string `json:"id"`
	Amount          string `json:"amount"`
	Currency        string `json:"currency"`
	Status          string `json:"status"` // awaiting_payment, paid
	CheckoutSession string `json:"checkout_session"`
	Transaction     string `json:"transaction,omitempty"`
	PaidAt          string `json:"paid_at,omitempty"`
}

// shop is the merchant backend: its orders, the Sika client and the webhook secret.
type shop struct {
	sika          *sika.Client
	webhookSecret string

	mu     sync.Mutex
	orders map[string]*order
	seen   map[string]bool // webhook-id: a delivery may come more than once
}

func main() {
	demo := flag.Bool("demo", false, "create an order, pay it as a TEST customer, wait for the webhook, then exit")
	devPath := flag.String("dev-json", "", "the dev.json of `make run` (default: .sika/dev.json from the current directory up)")
	flag.Parse()
	log.SetFlags(0)
	if err := run(*demo, *devPath); err != nil {
		log.Fatal(err)
	}
}

func run(demo bool, devPath string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	baseURL, apiKey := os.Getenv("SIKA_BASE_URL"), os.Getenv("SIKA_API_KEY")
	var dev *devJSON
	if apiKey == "" {
		var err error
		if dev, err = readDevJSON(devPath); err != nil {
			return err
		}
		baseURL, apiKey = dev.BaseURL, dev.Merchant.APIKeys.TestBoth
	}
	client, err := sika.New(sika.Options{BaseURL: baseURL, APIKey: apiKey})
	if err != nil {
		return err
	}
	s := &shop{sika: client, webhookSecret: os.Getenv("SIKA_WEBHOOK_SECRET"), orders: map[string]*order{}, seen: map[string]bool{}}

	port := os.Getenv("PORT")
	if port == "" {
		port = "3000"
		if demo {
			port = "0"
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return err
	}
	shopURL := "http://" + ln.Addr().String()
	server := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = server.Serve(ln) }()
	defer server.Close()
	log.Printf("merchant backend on %s (Sika at %s)", shopURL, baseURL)

	// Without a secret, register this backend's /webhooks as a TEST endpoint (a dashboard call).
	if s.webhookSecret == "" {
		if dev == nil {
			return errors.New("set SIKA_WEBHOOK_SECRET, or run after `make run` (dev.json)")
		}
		remove, secret, err := registerWebhook(ctx, dev, shopURL+"/webhooks")
		if err != nil {
			return err
		}
		defer remove()
		s.webhookSecret = secret
	}

	if demo {
		return s.demo(ctx, shopURL)
	}
	<-ctx.Done()
	return nil
}

func (s *shop) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", s.createOrder)
	mux.HandleFunc("GET /orders/{id}", s.getOrder)
	mux.HandleFunc("POST /webhooks", s.receiveWebhook)
	return mux
}

// createOrder creates an order and its checkout session; the customer pays at checkout_url.
func (s *shop) createOrder(w http.ResponseWriter, r *http.Request) {
	var input struct {
		Amount        string `json:"amount"`
		CustomerName  string `json:"customer_name"`
		CustomerEmail string `json:"customer_email"`
	}
	_ = json.NewDecoder(r.Body).Decode(&input) // every field has a default
	o := &order{ID: uuid.NewString(), Amount: or(input.Amount, "5000"), Currency: "XOF", Status: "awaiting_payment"}
	country := "BJ"
	description := "Order " + o.ID[:8]
	metadata := map[string]any{"order_id": o.ID}
	resp, err := s.sika.CreateCheckoutSessionWithResponse(r.Context(), nil, sika.CreateCheckoutSessionJSONRequestBody{
		Amount:        o.Amount,
		Currency:      o.Currency,
		Country:       &country,
		CustomerName:  or(input.CustomerName, "Koffi Mensah"),
		CustomerEmail: sika.Email(or(input.CustomerEmail, "koffi@example.com")),
		Description:   &description,
		Metadata:      &metadata,
	})
	if err != nil {
		// An *sika.Error carries the API's code: say it, without the key or the customer's data.
		var apiErr *sika.Error
		if errors.As(err, &apiErr) {
			writeJSON(w, http.StatusBadGateway, map[string]string{"error": string(apiErr.Code) + ": " + apiErr.Message})
			return
		}
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	session := resp.JSON201.Data
	o.CheckoutSession = session.Id.String()
	s.mu.Lock()
	s.orders[o.ID] = o
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"order": o, "checkout_url": session.CheckoutUrl, "slug": session.Slug})
}

func (s *shop) getOrder(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, ok := s.orders[r.PathValue("id")]
	var copied order
	if ok {
		copied = *o
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such order"})
		return
	}
	writeJSON(w, http.StatusOK, copied)
}

// receiveWebhook verifies a delivery on its raw body, then marks the order of a paid checkout
// session paid, once.
func (s *shop) receiveWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	event, err := sika.VerifyWebhook(s.webhookSecret, body, r.Header)
	if err != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "bad signature"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[event.Id] {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if event.Type == sika.EventTypeCheckoutSessionPaid {
		var session sika.CheckoutSession
		if err := event.DecodeData(&session); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		orderID, _ := session.Metadata["order_id"].(string)
		if o := s.orders[orderID]; o != nil && o.Status != "paid" {
			o.Status = "paid"
			if session.Transaction != nil {
				o.Transaction = session.Transaction.String()
			}
			if session.PaidAt != nil {
				o.PaidAt = session.PaidAt.Format(time.RFC3339)
			}
			log.Printf("order %s paid (checkout session %s, transaction %s)", o.ID, session.Id, o.Transaction)
		}
	}
	s.seen[event.Id] = true
	w.WriteHeader(http.StatusNoContent)
}

// demo creates an order, pays it on the hosted page's API (what the page calls) with a sandbox
// number ending 123, and waits until the webhook marked the order paid.
func (s *shop) demo(ctx context.Context, shopURL string) error {
	started := time.Now()
	var created struct {
		Order       order  `json:"order"`
		CheckoutURL string `json:"checkout_url"`
		Slug        string `json:"slug"`
	}
	resp, err := http.Post(shopURL+"/orders", "application/json", strings.NewReader(`{"amount": "5000"}`))
	if err != nil {
		return err
	}
	err = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("create an order: HTTP %d %v", resp.StatusCode, err)
	}
	log.Printf("order %s: pay at %s", created.Order.ID, created.CheckoutURL)
	payment, err := s.sika.PayCheckoutSessionWithResponse(ctx, created.Slug, sika.PayCheckoutSessionJSONRequestBody{
		Network: "MTN_BJ", CustomerPhone: "97000123",
	})
	if err != nil {
		return fmt.Errorf("pay the checkout session: %w", err)
	}
	log.Printf("customer paying: transaction %s %s", payment.JSON201.Data.Id, payment.JSON201.Data.Status)
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		s.mu.Lock()
		paid := s.orders[created.Order.ID].Status == "paid"
		s.mu.Unlock()
		if paid {
			log.Printf("order %s is paid %d ms after it was created", created.Order.ID, time.Since(started).Milliseconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("order %s not paid within 90 s", created.Order.ID)
}

// registerWebhook logs in as the demo merchant and registers url as a TEST webhook endpoint;
// it answers a function that removes it, and the endpoint's signing secret.
func registerWebhook(ctx context.Context, dev *devJSON, url string) (func(), string, error) {
	anonymous, err := sika.New(sika.Options{BaseURL: dev.BaseURL})
	if err != nil {
		return nil, "", err
	}
	login, err := anonymous.LoginWithResponse(ctx, sika.LoginJSONRequestBody{Email: sika.Email(dev.Merchant.Email), Password: dev.Merchant.Password})
	if err != nil {
		return nil, "", fmt.Errorf("log in as the demo merchant: %w", err)
	}
	dashboard, err := sika.New(sika.Options{BaseURL: dev.BaseURL, APIKey: login.JSON200.Data.AccessToken, Environment: sika.EnvironmentTEST})
	if err != nil {
		return nil, "", err
	}
	description := "examples/merchant-backend (Go)"
	created, err := dashboard.CreateWebhookWithResponse(ctx, nil, sika.CreateWebhookJSONRequestBody{Url: url, Description: &description})
	if err != nil {
		return nil, "", fmt.Errorf("register the webhook endpoint: %w", err)
	}
	endpoint := created.JSON201.Data
	log.Printf("registered webhook endpoint %s for %s", endpoint.Id, url)
	remove := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = dashboard.DeleteWebhookWithResponse(ctx, endpoint.Id, nil)
	}
	return remove, endpoint.SigningSecret, nil
}

// readDevJSON reads path, or .sika/dev.json in the current directory or the nearest parent.
func readDevJSON(path string) (*devJSON, error) {
	if path == "" {
		dir, _ := os.Getwd()
		for {
			candidate := filepath.Join(dir, ".sika", "dev.json")
			if _, err := os.Stat(candidate); err == nil {
				path = candidate
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return nil, errors.New("no .sika/dev.json here or above: run `make run` first, or set SIKA_BASE_URL, SIKA_API_KEY and SIKA_WEBHOOK_SECRET")
			}
			dir = parent
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var dev devJSON
	if err := json.Unmarshal(b, &dev); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &dev, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
