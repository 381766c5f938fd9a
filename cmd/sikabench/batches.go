package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sikahq/sika"
)

// batchItems is the size of the bench's payout batch: the most one batch may hold.
const batchItems = sika.MaxPayoutBatchItems

// batchFigures is what one sandbox batch of batchItems payouts took.
type batchFigures struct {
	items     int
	accept    time.Duration // POST /payout-batches/ sent → 201 read (validation, pricing, hold)
	complete  time.Duration // 201 read → the batch ended (every item's payout final)
	status    sika.PayoutBatchStatus
	succeeded int
	failed    int
}

// itemsPerSecond is the batch's throughput from its acceptance to its end.
func (b *batchFigures) itemsPerSecond() float64 {
	if b.complete <= 0 {
		return 0
	}
	return float64(b.succeeded+b.failed) / b.complete.Seconds()
}

// runBatches sends one batch of batchItems payouts (XOF 1000 on MTN_BJ to numbers ending in 123,
// which the sandbox pays after one tick) through POST /payout-batches/ with a PAYOUT key, then
// reads the batch until it ends: the time to accept, the items per second, the time to complete.
func runBatches(ctx context.Context, t *target, o options) (*batchFigures, error) {
	key, err := payoutKey(ctx, t, "batches")
	if err != nil {
		return nil, err
	}
	items := make([]map[string]string, batchItems)
	for i := range items {
		items[i] = map[string]string{"amount": "1000", "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
			"phone": fmt.Sprintf("97%03d123", i), "reference": fmt.Sprintf("bench-%04d", i), "description": "sikabench batch"}
	}
	body, err := json.Marshal(map[string]any{"description": "sikabench", "items": items})
	if err != nil {
		return nil, err
	}
	progress("batches: one batch of %d payouts", batchItems)
	f := &batchFigures{items: batchItems}
	start := time.Now()
	var created struct {
		Data sika.PayoutBatch `json:"data"`
	}
	if err := batchCall(ctx, t, key.Secret, http.MethodPost, "/payout-batches/", body, http.StatusCreated, &created); err != nil {
		return nil, err
	}
	accepted := time.Now()
	f.accept = accepted.Sub(start)
	progress("batches: accepted in %s; waiting for it to end", f.accept.Round(time.Millisecond))
	deadline := accepted.Add(30*time.Minute + 2*o.tick)
	for {
		var got struct {
			Data sika.PayoutBatch `json:"data"`
		}
		if err := batchCall(ctx, t, key.Secret, http.MethodGet, "/payout-batches/"+created.Data.ID.String()+"/", nil, http.StatusOK, &got); err != nil {
			return nil, err
		}
		if got.Data.Status.Final() {
			f.complete, f.status = time.Since(accepted), got.Data.Status
			for _, p := range got.Data.Progress {
				switch p.Status {
				case sika.ItemSucceeded:
					f.succeeded += p.Count
				case sika.ItemFailed:
					f.failed += p.Count
				}
			}
			return f, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("batches: batch %s still %s after %s: %+v", got.Data.Reference, got.Data.Status, time.Since(accepted).Round(time.Second), got.Data.Progress)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// batchCall makes one call of the batches part and decodes its answer into out.
func batchCall(ctx context.Context, t *target, secret, method, path string, body []byte, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, t.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", fmt.Sprintf("sikabench-batch-%d", time.Now().UnixNano()))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("batches: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("batches: %s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("batches: %s %s answered %d: %.500s", method, path, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

func (c *combined) printBatches(w io.Writer) {
	b := c.batches
	fmt.Fprintf(w, "\n== PAYOUT BATCH: POST /payout-batches/ with %d items (XOF 1000 on MTN_BJ to numbers ending in 123: paid after one tick)\n", b.items)
	c.printSettled(w, "batches")
	line(w, "accept", "%s (every item validated and priced, the total held, the batch written: 201 read)", b.accept.Round(time.Millisecond))
	line(w, "complete", "%s from the 201 to the batch's end (%s: %d SUCCESS, %d FAILED)", b.complete.Round(time.Millisecond), b.status, b.succeeded, b.failed)
	line(w, "throughput", "%.1f items/s (items ended / time to complete)", b.itemsPerSecond())
}
