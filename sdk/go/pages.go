package sika

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
)

// ListPage is one page of a list route: `{count, next, previous, results}` for page-numbered lists,
// without `count` (nil) for cursor lists such as /transactions/ and /merchant-ledger-entries/.
// Next and Previous are absolute URLs, or nil at either end.
type ListPage[T any] struct {
	Count    *int    `json:"count"`
	Next     *string `json:"next"`
	Previous *string `json:"previous"`
	Results  []T     `json:"results"`
}

// Pages iterates over the pages of the list at path (relative to the base URL, as in the
// document: "/transactions/"), first to last, following each page's `next` as given (cursor and
// page-numbered lists alike). query (filters, page_size) applies to the first page; the next
// ones carry it in their `next`. T is the item type of the route (Transaction for
// /transactions/, MerchantLedgerEntry for /merchant-ledger-entries/, …). Iteration stops at the
// first error, which it yields.
//
//	for page, err := range sika.Pages[sika.Transaction](ctx, c, "/transactions/", url.Values{"status": {"SUCCESS"}}) {
func Pages[T any](ctx context.Context, c *Client, path string, query url.Values) iter.Seq2[*ListPage[T], error] {
	return func(yield func(*ListPage[T], error) bool) {
		rel, err := url.Parse(path)
		if err != nil {
			yield(nil, fmt.Errorf("sika: list path %q: %w", path, err))
			return
		}
		next := c.baseURL.JoinPath(rel.Path)
		if len(query) > 0 {
			next.RawQuery = query.Encode()
		}
		for next != nil {
			page, err := getPage[T](ctx, c, next.String())
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) {
				return
			}
			next = nil
			if page.Next != nil && *page.Next != "" {
				if next, err = url.Parse(*page.Next); err != nil {
					yield(nil, fmt.Errorf("sika: next page %q: %w", *page.Next, err))
					return
				}
			}
		}
	}
}

// All iterates over every item of the list at path, page after page (see Pages).
//
//	for t, err := range sika.All[sika.Transaction](ctx, c, "/transactions/", nil) {
func All[T any](ctx context.Context, c *Client, path string, query url.Values) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page, err := range Pages[T](ctx, c, path, query) {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.Results {
				if !yield(item, nil) {
					return
				}
			}
		}
	}
}

// getPage GETs one page through the client's transport (credentials, retries, errors) and
// decodes it from its envelope.
func getPage[T any](ctx context.Context, c *Client, pageURL string) (*ListPage[T], error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, fmt.Errorf("sika: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.doer.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var envelope struct {
		Data *ListPage[T] `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&envelope); err != nil {
		return nil, fmt.Errorf("sika: decode the page of %s: %w", pageURL, err)
	}
	if envelope.Data == nil {
		return nil, fmt.Errorf("sika: the answer of %s has no page", pageURL)
	}
	return envelope.Data, nil
}
