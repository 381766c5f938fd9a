package api

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sikahq/sika"
)

// healthz answers while the process serves HTTP.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	writeData(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when every dependency (Postgres, Temporal) answers within 2 s, and 503
// naming the ones that do not.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	var down []string
	names := make([]string, 0, len(s.cfg.ReadinessChecks))
	for name := range s.cfg.ReadinessChecks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		checks[name] = "ok"
		if err := s.cfg.ReadinessChecks[name](ctx); err != nil {
			logFrom(r.Context()).Warn("readiness check failed", "check", name, "err", err)
			checks[name] = "unavailable"
			down = append(down, name)
		}
	}
	if len(down) > 0 {
		writeError(w, r, sika.Errorf(sika.CodeServiceUnavailable, "Not ready: %s unavailable.", strings.Join(down, ", ")))
		return
	}
	writeData(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks})
}

func (s *Server) metricsHandler() http.Handler {
	return promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})
}
