package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sikahq/sika/cmd/sikabench-history/historybench"
)

// bench sends the scenarios to the API.
type bench struct {
	base   string
	d      *historybench.Dataset
	pool   *pgxpool.Pool
	client *http.Client
	n      int
	only   string // a group's first word, or "" for all
	logf   func(string, ...any)
}

// scenario is a kind of request; next gives the path and query of each request (it may follow
// the links of the previous answer, handed to observe).
type scenario struct {
	group, name string
	next        func(r *rand.Rand) string
	observe     func(body []byte)
}

// result is the latencies of one scenario.
type result struct {
	scenario
	latencies []time.Duration
	rows      int // results over all measured requests
}

const (
	groupList     = "list"
	groupSearch   = "search"
	groupAttempts = "attempts and status logs"
)

// searchSamples are values of real rows of the big merchant in LIVE, to search for.
type searchSamples struct {
	references, gatewayRefs, phones, emails, names, linkSlugs, sessionSlugs []string
}

func (b *bench) samples(ctx context.Context) (searchSamples, []string, error) {
	var s searchSamples
	rows, err := b.pool.Query(ctx, `SELECT id::text, reference, gateway_reference, customer_phone, customer_email, customer_name,
			coalesce(payment_link_slug, ''), coalesce(checkout_session_slug, '')
		FROM transactions TABLESAMPLE SYSTEM (1) REPEATABLE (42)
		WHERE merchant_id = $1 AND environment = 'LIVE' LIMIT 3000`, b.d.Main.ID)
	if err != nil {
		return s, nil, err
	}
	defer rows.Close()
	var ids []string
	add := func(list *[]string, v string) {
		if v != "" {
			*list = append(*list, v)
		}
	}
	for rows.Next() {
		var id, ref, gw, phone, email, name, link, session string
		if err := rows.Scan(&id, &ref, &gw, &phone, &email, &name, &link, &session); err != nil {
			return s, nil, err
		}
		ids = append(ids, id)
		add(&s.references, ref)
		add(&s.gatewayRefs, gw)
		add(&s.phones, phone)
		add(&s.emails, email)
		add(&s.names, name)
		add(&s.linkSlugs, link)
		add(&s.sessionSlugs, session)
	}
	return s, ids, rows.Err()
}

// pageLinks is the part of a cursor page the walks follow.
type pageLinks struct {
	Data struct {
		Next     *string           `json:"next"`
		Previous *string           `json:"previous"`
		Results  []json.RawMessage `json:"results"`
	} `json:"data"`
}

// walk is a scenario that follows next for pages pages, then previous back, then starts again.
func walk(group, name, first string, pages int) scenario {
	var cur string
	forward, steps := true, 0
	var links pageLinks
	return scenario{group: group, name: name,
		next: func(*rand.Rand) string {
			switch {
			case cur == "" || steps >= pages:
				cur, forward, steps = first, true, 0
			case forward && links.Data.Next != nil && steps < pages/2:
				cur = *links.Data.Next
			case links.Data.Previous != nil:
				forward = false
				cur = *links.Data.Previous
			default:
				cur, forward, steps = first, true, 0
			}
			steps++
			return cur
		},
		observe: func(body []byte) {
			links = pageLinks{}
			_ = json.Unmarshal(body, &links)
		},
	}
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

func fixed(group, name, path string) scenario {
	return scenario{group: group, name: name, next: func(*rand.Rand) string { return path }}
}

func (b *bench) scenarios(s searchSamples, ids []string) []scenario {
	const tx = "/api/v1/transactions/?"
	window := func(r *rand.Rand, days int) string {
		span := b.d.End.Sub(b.d.Start) - time.Duration(days)*24*time.Hour
		from := b.d.Start.Add(time.Duration(r.Int64N(int64(span)))).Truncate(time.Second)
		return "created_at__gte=" + from.Format(time.RFC3339) + "&created_at__lte=" + from.AddDate(0, 0, days).Format(time.RFC3339)
	}
	list := []scenario{
		fixed(groupList, "first page", tx),
		fixed(groupList, "first page, page_size=200", tx+"page_size=200"),
		walk(groupList, "next x10 then previous x10", tx, 20),
		walk(groupList, "status=FAILED: next x10 then previous x10", tx+"status=FAILED", 20),
		{group: groupList, name: "created_at__lte (deep position)", next: func(r *rand.Rand) string {
			at := b.d.Start.Add(time.Duration(r.Int64N(int64(b.d.End.Sub(b.d.Start)))))
			return tx + "created_at__lte=" + at.Format(time.RFC3339)
		}},
		{group: groupList, name: "7-day window", next: func(r *rand.Rand) string { return tx + window(r, 7) }},
		fixed(groupList, "merchant=self", tx+"merchant="+b.d.Main.ID.String()),
	}
	for _, v := range []string{"SUCCESS", "FAILED", "PENDING", "CANCELLED"} {
		list = append(list, fixed(groupList, "status="+v, tx+"status="+v))
	}
	for _, v := range []string{"PAIEMENT", "RECHARGE", "RETRAIT", "TRANSFERT"} {
		list = append(list, fixed(groupList, "transaction_type="+v, tx+"transaction_type="+v))
	}
	for _, v := range []string{"INBOUND", "OUTBOUND"} {
		list = append(list, fixed(groupList, "flow_direction="+v, tx+"flow_direction="+v))
	}
	for _, v := range []string{"XOF", "XAF", "CDF", "GNF"} {
		list = append(list, fixed(groupList, "currency="+v, tx+"currency="+v))
	}
	for _, v := range []string{"BJ", "CI", "CM", "CD", "GN"} {
		list = append(list, fixed(groupList, "country="+v, tx+"country="+v))
	}
	for _, v := range []string{"MTN_BJ", "WAVE_CI", "MOOV_CI", "VODACOM_CD", "MTN_GN"} {
		list = append(list, fixed(groupList, "network="+v, tx+"network="+v))
	}
	list = append(list,
		fixed(groupList, "status=FAILED&network=MOOV_BJ", tx+"status=FAILED&network=MOOV_BJ"),
		fixed(groupList, "status=PENDING&transaction_type=TRANSFERT", tx+"status=PENDING&transaction_type=TRANSFERT"),
		fixed(groupList, "flow_direction=OUTBOUND&currency=XAF", tx+"flow_direction=OUTBOUND&currency=XAF"),
		scenario{group: groupList, name: "status=PENDING&country=TG&30-day window", next: func(r *rand.Rand) string {
			return tx + "status=PENDING&country=TG&" + window(r, 30)
		}},
	)

	search := func(name string, values func(r *rand.Rand) string) scenario {
		return scenario{group: groupSearch, name: name, next: func(r *rand.Rand) string {
			return tx + "search=" + url.QueryEscape(values(r))
		}}
	}
	national := func(phone string) string { return phone[len(phone)-8:] }
	spaced := func(phone string) string {
		n := national(phone)
		return phone[:len(phone)-8] + " " + n[:2] + " " + n[2:4] + " " + n[4:6] + " " + n[6:]
	}
	var surnames []string // of three characters or more: a shorter search is refused
	for _, name := range s.names {
		if last := name[strings.LastIndex(name, " ")+1:]; len([]rune(last)) >= 3 {
			surnames = append(surnames, last)
		}
	}
	list = append(list,
		search("reference (exact)", func(r *rand.Rand) string { return pick(r, s.references) }),
		search("reference (random part)", func(r *rand.Rand) string { ref := pick(r, s.references); return ref[len(ref)-10:] }),
		search("gateway reference", func(r *rand.Rand) string { return pick(r, s.gatewayRefs) }),
		search("phone, national number", func(r *rand.Rand) string { return national(pick(r, s.phones)) }),
		search("phone, +cc with spaces", func(r *rand.Rand) string { return spaced(pick(r, s.phones)) }),
		search("email local part", func(r *rand.Rand) string { e := pick(r, s.emails); return e[:strings.IndexByte(e, '@')] }),
		search("full name (~0.05% of rows)", func(r *rand.Rand) string { return pick(r, s.names) }),
		search("surname (~2% of rows)", func(r *rand.Rand) string { return pick(r, surnames) }),
		search("'gmail' (~40% of rows)", func(*rand.Rand) string { return "gmail" }),
		search("payment-link slug (~0.1%)", func(r *rand.Rand) string { return pick(r, s.linkSlugs) }),
		search("slug prefix (~1% of rows)", func(r *rand.Rand) string { return fmt.Sprintf("boutique-%02d", r.IntN(10)) }),
		search("checkout-session slug", func(r *rand.Rand) string { return pick(r, s.sessionSlugs) }),
		search("no match", func(r *rand.Rand) string { return "ZQ" + historybench.RandomString(r, "XYZW", 6) }),
		scenario{group: groupSearch, name: "surname & status=FAILED", next: func(r *rand.Rand) string {
			return tx + "status=FAILED&search=" + url.QueryEscape(pick(r, surnames))
		}},
	)

	const at, logs = "/api/v1/transaction-attempts/?", "/api/v1/transaction-status-logs/?"
	list = append(list,
		fixed(groupAttempts, "attempts: first page", at),
		walk(groupAttempts, "attempts: next x10 then previous x10", at, 20),
		fixed(groupAttempts, "attempts: status=PENDING", at+"status=PENDING"),
		fixed(groupAttempts, "attempts: gateway=sandbox-b", at+"gateway=sandbox-b"),
		scenario{group: groupAttempts, name: "attempts: transaction=<id>", next: func(r *rand.Rand) string { return at + "transaction=" + pick(r, ids) }},
		fixed(groupAttempts, "status logs: first page", logs),
		fixed(groupAttempts, "status logs: to_status=FAILED", logs+"to_status=FAILED"),
		fixed(groupAttempts, "status logs: to_status=CANCELLED", logs+"to_status=CANCELLED"),
		fixed(groupAttempts, "status logs: triggered_by=ADMIN", logs+"triggered_by=ADMIN"),
		fixed(groupAttempts, "status logs: triggered_by=WEBHOOK_CALLBACK", logs+"triggered_by=WEBHOOK_CALLBACK"),
		scenario{group: groupAttempts, name: "status logs: transaction=<id>", next: func(r *rand.Rand) string { return logs + "transaction=" + pick(r, ids) }},
	)
	return list
}

// runScenarios sends each scenario 10 times to warm up, then b.n times measured.
func (b *bench) runScenarios(ctx context.Context) ([]result, error) {
	s, ids, err := b.samples(ctx)
	if err != nil {
		return nil, fmt.Errorf("sample rows: %w", err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	var out []result
	for _, sc := range b.scenarios(s, ids) {
		if b.only != "" && !strings.HasPrefix(sc.group, b.only) {
			continue
		}
		res := result{scenario: sc}
		for i := 0; i < 10+b.n; i++ {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			target := sc.next(r)
			if !strings.HasPrefix(target, "http") {
				target = b.base + target
			}
			begin := time.Now()
			body, err := b.get(ctx, target, b.d.Main.Live)
			elapsed := time.Since(begin)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sc.name, err)
			}
			if sc.observe != nil {
				sc.observe(body)
			}
			if i >= 10 {
				res.latencies = append(res.latencies, elapsed)
				var p pageLinks
				_ = json.Unmarshal(body, &p)
				res.rows += len(p.Data.Results)
			}
		}
		b.logf("%-45s p99 %s", sc.group+": "+sc.name, percentile(res.latencies, 0.99))
		out = append(out, res)
	}
	return out, nil
}

func (b *bench) get(ctx context.Context, target, key string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", target, resp.StatusCode, body)
	}
	return body, nil
}
