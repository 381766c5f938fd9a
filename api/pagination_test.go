package api

import (
	"fmt"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

func TestPageNumberPagination(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	for i := 0; i < 105; i++ {
		_, err := testStore.AddIPWhitelistEntry(t.Context(), acct.Merchant.ID, sika.EnvironmentTest,
			netip.MustParsePrefix(fmt.Sprintf("10.0.%d.%d/32", i/200, i%200+1)), "")
		require.NoError(t, err)
	}
	h := acct.dashboard(sika.EnvironmentTest)
	type pg struct {
		Count    int
		Next     *string
		Previous *string
		Results  []sika.IPWhitelistEntry
	}

	var p pg
	ts.call(t, "GET", "/api/v1/ip-whitelist/", nil, h...).data(t, &p)
	assert.Equal(t, 105, p.Count)
	assert.Len(t, p.Results, 20, "default page size")
	require.NotNil(t, p.Next)
	assert.Equal(t, ts.url+"/api/v1/ip-whitelist/?page=2", *p.Next, "next is absolute")
	assert.Nil(t, p.Previous)

	ts.call(t, "GET", "/api/v1/ip-whitelist/?page_size=1000", nil, h...).data(t, &p)
	assert.Len(t, p.Results, 100, "page_size above the maximum is clamped to 100")
	require.NotNil(t, p.Next)
	assert.Contains(t, *p.Next, "page=2")

	// Following next visits every row once.
	seen := map[uuid.UUID]bool{}
	url := "/api/v1/ip-whitelist/?page_size=30"
	for pages := 0; url != ""; pages++ {
		require.Less(t, pages, 10)
		var p pg
		ts.call(t, "GET", url, nil, h...).data(t, &p)
		for _, e := range p.Results {
			assert.False(t, seen[e.ID], "row %s seen twice", e.ID)
			seen[e.ID] = true
		}
		url = ""
		if p.Next != nil {
			url = *p.Next
		}
	}
	assert.Len(t, seen, 105)

	ts.call(t, "GET", "/api/v1/ip-whitelist/?page=99", nil, h...).data(t, &p)
	assert.Empty(t, p.Results)
	assert.Nil(t, p.Next)
	require.NotNil(t, p.Previous)
	assert.Contains(t, *p.Previous, "page=6", "previous of a page past the end is the last page")

	ts.call(t, "GET", "/api/v1/ip-whitelist/?page=10000&page_size=100", nil, h...).data(t, &p)
	assert.Empty(t, p.Results, "the last page allowed answers, empty")

	for q, want := range map[string]string{"page=0": sika.MsgMinOne, "page=-1": sika.MsgMinOne, "page=abc": sika.MsgInteger,
		"page=1.5": sika.MsgInteger, "page_size=0": sika.MsgMinOne, "page_size=-5": sika.MsgMinOne, "page_size=x": sika.MsgInteger,
		"page=": sika.MsgInteger, "page=10001": msgMaxPage, "page=92233720368547760": msgMaxPage,
		"page=9223372036854775807": msgMaxPage, "page=99999999999999999999": msgMaxPage} {
		r := ts.call(t, "GET", "/api/v1/ip-whitelist/?"+q, nil, h...)
		assert.Equal(t, 400, r.Status, q)
		assert.Len(t, r.fields(), 1, q)
		for field, msgs := range r.fields() {
			assert.Contains(t, []string{"page", "page_size"}, field)
			assert.Equal(t, []string{want}, msgs, q)
		}
	}
}

func TestCursors(t *testing.T) {
	ts := newTestServer(t)
	c := Cursor{CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC), ID: uuid.New(), Backward: true}
	raw := ts.encodeCursor(c)
	got, err := ts.decodeCursor(raw)
	require.NoError(t, err)
	assert.Equal(t, c, got)

	// Tampering with any byte, truncating, or another server's key: a 400, never a 500.
	other := newTestServer(t, func(cfg *Config) { cfg.JWTSecret = []byte("another secret of thirty-two bytes or more") })
	bad := []string{raw[:len(raw)-1], raw + "A", "", "not-base64!!", other.encodeCursor(c)}
	for i := 0; i < len(raw); i++ {
		b := []byte(raw)
		b[i] ^= 0x01
		bad = append(bad, string(b))
	}
	for _, s := range bad {
		_, err := ts.decodeCursor(s)
		require.Error(t, err, "cursor %q", s)
		assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err))
	}

	req := httptest.NewRequest("GET", "/api/v1/transactions/?page_size=500&cursor="+raw, nil)
	cp, err := ts.parseCursorPage(req)
	require.NoError(t, err)
	assert.Equal(t, maxCursorPageSize, cp.PageSize)
	assert.Equal(t, c, *cp.Cursor)
	cp, err = ts.parseCursorPage(httptest.NewRequest("GET", "/api/v1/transactions/", nil))
	require.NoError(t, err)
	assert.Equal(t, defaultCursorPageSize, cp.PageSize)
	assert.Nil(t, cp.Cursor)
	_, err = ts.parseCursorPage(httptest.NewRequest("GET", "/api/v1/transactions/?cursor=xyz", nil))
	assert.Error(t, err)
	_, err = ts.parseCursorPage(httptest.NewRequest("GET", "/api/v1/transactions/?page_size=0", nil))
	assert.Error(t, err)
}

func TestCursorPageLinks(t *testing.T) {
	ts := newTestServer(t)
	rows := []any{Cursor{CreatedAt: time.Unix(300, 0), ID: uuid.New()}, Cursor{CreatedAt: time.Unix(200, 0), ID: uuid.New()}}
	keyOf := func(v any) Cursor { return v.(Cursor) }
	req := httptest.NewRequest("GET", "/api/v1/transactions/?status=SUCCESS", nil)

	first := ts.newCursorPage(req, cursorPageRequest{PageSize: 2}, rows, true, keyOf)
	require.NotNil(t, first.Next)
	assert.Nil(t, first.Previous, "the first page has no previous")
	assert.Contains(t, *first.Next, "status=SUCCESS", "filters are kept")
	next := parseLinkCursor(t, ts, *first.Next)
	assert.False(t, next.Backward)
	assert.Equal(t, rows[1].(Cursor).ID, next.ID)

	middle := ts.newCursorPage(req, cursorPageRequest{PageSize: 2, Cursor: &next}, rows, true, keyOf)
	require.NotNil(t, middle.Previous)
	prev := parseLinkCursor(t, ts, *middle.Previous)
	assert.True(t, prev.Backward)
	assert.Equal(t, rows[0].(Cursor).ID, prev.ID)

	last := ts.newCursorPage(req, cursorPageRequest{PageSize: 2, Cursor: &next}, rows, false, keyOf)
	assert.Nil(t, last.Next, "no next after the last page")
	assert.NotNil(t, last.Previous)

	back := Cursor{CreatedAt: time.Unix(100, 0), ID: uuid.New(), Backward: true}
	newest := ts.newCursorPage(req, cursorPageRequest{PageSize: 2, Cursor: &back}, rows, false, keyOf)
	assert.Nil(t, newest.Previous, "walking back to the newest rows ends the previous links")
	assert.NotNil(t, newest.Next)
}

func parseLinkCursor(t *testing.T, ts *testServer, link string) Cursor {
	t.Helper()
	req := httptest.NewRequest("GET", link, nil)
	c, err := ts.decodeCursor(req.URL.Query().Get("cursor"))
	require.NoError(t, err)
	return c
}
