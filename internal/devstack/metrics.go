package devstack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// PersistenceCalls reads a Temporal server's Prometheus metrics at url (TemporalOptions.MetricsPort):
// its persistence calls per operation, every service summed, visibility's prefixed "visibility ".
// The server's reporter publishes on its own tick, about a second behind.
func PersistenceCalls(ctx context.Context, url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read the dev server's metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read the dev server's metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read the dev server's metrics: %s", resp.Status)
	}
	calls := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		prefix := ""
		switch {
		case strings.HasPrefix(l, "persistence_requests{"):
		case strings.HasPrefix(l, "visibility_persistence_requests{"):
			prefix = "visibility "
		default:
			continue
		}
		_, rest, ok := strings.Cut(l, `operation="`)
		op, _, ok2 := strings.Cut(rest, `"`)
		n, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if !ok || !ok2 || err != nil {
			return nil, fmt.Errorf("read the dev server's metrics: unreadable line %q", l)
		}
		calls[prefix+op] += n
	}
	return calls, nil
}
