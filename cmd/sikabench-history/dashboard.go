package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sikahq/sika/web/dashboard"
)

// The dashboard part (-dashboard): the big merchant's member signs in to the dashboard served
// by the same API process, switches to TEST (exactly -export-rows transactions of one
// merchant), and every page the dashboard serves with a GET is measured: its server time (one
// request at a time on loopback, p50 and p95 over -n requests after warm-up) and its weight
// (the HTML, and the bytes of JavaScript and CSS it loads, as sent gzipped and unpacked).

// dashboardPassword is the members' password of the data set (historybench.Dataset).
const dashboardPassword = "history bench password"

// dashboardPage is one measured page.
type dashboardPage struct {
	path      string
	latencies []time.Duration
	html      int // bytes of the page itself, unpacked
	// js and css are the bytes of the scripts and stylesheets the page loads: wire (gzip, as a
	// browser that takes it receives them) and raw.
	jsWire, jsRaw, cssWire, cssRaw int
	assets                         []string
}

// dashboardClient is a browser without JavaScript signed in to the dashboard.
type dashboardClient struct {
	base   string
	client *http.Client
	csrf   string
}

var (
	csrfFieldPattern  = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	scriptPattern     = regexp.MustCompile(`<script[^>]* src="([^"]+)"`)
	stylesheetPattern = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)"`)
	txLinkPattern     = regexp.MustCompile(`href="(/dashboard/transactions/[0-9a-f-]{36}/)"`)
)

// signIn logs in with the login form and switches the session to env.
func signIn(ctx context.Context, base, email, env string) (*dashboardClient, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &dashboardClient{base: base, client: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	page, status, err := c.get(ctx, dashboard.Prefix+"login/")
	if err != nil || status != http.StatusOK {
		return nil, fmt.Errorf("login page: %d %w", status, err)
	}
	token, err := csrfOf(page)
	if err != nil {
		return nil, err
	}
	if status, err := c.post(ctx, dashboard.Prefix+"login/", url.Values{"csrf_token": {token}, "email": {email},
		"password": {dashboardPassword}, "next": {dashboard.Prefix}}); err != nil || status != http.StatusSeeOther {
		return nil, fmt.Errorf("login: %d %w", status, err)
	}
	home, status, err := c.get(ctx, dashboard.Prefix)
	if err != nil || status != http.StatusOK {
		return nil, fmt.Errorf("home after login: %d %w", status, err)
	}
	if c.csrf, err = csrfOf(home); err != nil {
		return nil, err
	}
	if status, err := c.post(ctx, dashboard.Prefix+"environment/", url.Values{"csrf_token": {c.csrf}, "environment": {env},
		"next": {dashboard.Prefix}}); err != nil || status != http.StatusSeeOther {
		return nil, fmt.Errorf("switch to %s: %d %w", env, status, err)
	}
	return c, nil
}

func csrfOf(page []byte) (string, error) {
	m := csrfFieldPattern.FindSubmatch(page)
	if m == nil {
		return "", errors.New("no csrf_token in the page")
	}
	return string(m[1]), nil
}

func (c *dashboardClient) get(ctx context.Context, path string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, 0, err
	}
	return c.do(req)
}

func (c *dashboardClient) post(ctx context.Context, path string, form url.Values) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, status, err := c.do(req)
	return status, err
}

func (c *dashboardClient) do(req *http.Request) ([]byte, int, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

// assetSize is the bytes of a static file: as sent to a browser that takes gzip, and raw.
func (c *dashboardClient) assetSize(ctx context.Context, path string) (wire, raw int, err error) {
	for _, gzip := range []bool{true, false} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
		if err != nil {
			return 0, 0, err
		}
		// Set by hand, the header keeps the transport from unpacking the body: what is counted
		// is what travels.
		req.Header.Set("Accept-Encoding", map[bool]string{true: "gzip", false: "identity"}[gzip])
		body, status, err := c.do(req)
		if err != nil || status != http.StatusOK {
			return 0, 0, fmt.Errorf("%s: %d %w", path, status, err)
		}
		if gzip {
			wire = len(body)
		} else {
			raw = len(body)
		}
	}
	return wire, raw, nil
}

// dashboardPaths are the pages to measure: every GET route of the dashboard without a path
// variable (a new page is measured without changing this file), but the login form and the
// CSV export (a download, measured by the export part), and the detail of one transaction.
func dashboardPaths(ctx context.Context, c *dashboardClient) ([]string, error) {
	var paths []string
	for _, r := range dashboard.New(dashboard.Config{}).Routes() {
		if r.Method != http.MethodGet || strings.Contains(r.Path, "{") || r.Path == dashboard.Prefix+"login/" ||
			r.Path == dashboard.Prefix+"merchants/" || strings.HasSuffix(r.Path, "/export/") {
			continue
		}
		paths = append(paths, r.Path)
	}
	slices.Sort(paths)
	list, _, err := c.get(ctx, dashboard.Prefix+"transactions/")
	if err != nil {
		return nil, err
	}
	if m := txLinkPattern.FindSubmatch(list); m != nil {
		paths = append(paths, string(m[1]))
	}
	return paths, nil
}

// runDashboard measures every page for the big merchant's TEST history.
func runDashboard(ctx context.Context, base string, n int, logf func(string, ...any)) ([]dashboardPage, error) {
	c, err := signIn(ctx, base, "history-0@sika.local", "TEST")
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	paths, err := dashboardPaths(ctx, c)
	if err != nil {
		return nil, err
	}
	sizes := map[string][2]int{}
	var out []dashboardPage
	for _, path := range paths {
		p := dashboardPage{path: path}
		for i := range n + 5 { // 5 warm-up requests
			begin := time.Now()
			body, status, err := c.get(ctx, path)
			took := time.Since(begin)
			if err != nil || status != http.StatusOK {
				return nil, fmt.Errorf("GET %s: %d %w", path, status, err)
			}
			if i >= 5 {
				p.latencies = append(p.latencies, took)
			}
			p.html = len(body)
			if i == 0 {
				for _, m := range append(scriptPattern.FindAllSubmatch(body, -1), stylesheetPattern.FindAllSubmatch(body, -1)...) {
					p.assets = append(p.assets, string(m[1]))
				}
			}
		}
		for _, asset := range p.assets {
			sz, ok := sizes[asset]
			if !ok {
				wire, raw, err := c.assetSize(ctx, asset)
				if err != nil {
					return nil, err
				}
				sz = [2]int{wire, raw}
				sizes[asset] = sz
			}
			if strings.HasSuffix(asset, ".css") {
				p.cssWire, p.cssRaw = p.cssWire+sz[0], p.cssRaw+sz[1]
			} else {
				p.jsWire, p.jsRaw = p.jsWire+sz[0], p.jsRaw+sz[1]
			}
		}
		logf("dashboard %s: p50 %s ms", path, ms(percentile(p.latencies, .5)))
		out = append(out, p)
	}
	return out, nil
}

// printDashboardReport prints the pages' server time and weight.
func printDashboardReport(w io.Writer, o options, pages []dashboardPage) {
	fmt.Fprintf(w, "\nsikabench-history -dashboard: the big merchant's TEST environment, %d transactions; %d measured GETs per page, one at a time on loopback (after 5 warm-up)\n\n",
		o.exportRows, o.n)
	fmt.Fprintf(w, "%-66s %8s %8s %8s %9s %14s %14s\n", "page", "p50 ms", "p95 ms", "max ms", "HTML B", "JS B gz/raw", "CSS B gz/raw")
	for _, p := range pages {
		fmt.Fprintf(w, "%-66s %8s %8s %8s %9d %14s %14s\n", p.path, ms(percentile(p.latencies, .5)), ms(percentile(p.latencies, .95)),
			ms(slices.Max(p.latencies)), p.html, fmt.Sprintf("%d/%d", p.jsWire, p.jsRaw), fmt.Sprintf("%d/%d", p.cssWire, p.cssRaw))
	}
	fmt.Fprintln(w)
	for _, p := range pages {
		fmt.Fprintf(w, "%s loads %s\n", p.path, strings.Join(p.assets, ", "))
	}
}
