package dashboard

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/sikahq/sika/web/webapp"
)

// call runs a route of the JSON API for the visit's member, merchant and environment (Config.API)
// and decodes its data into out (nil: ignore it). An error of the API comes back as the
// *sika.Error the API answered (its code and message, or the invalid fields), for the page to
// show beside the form.
func (a *App) call(r *http.Request, v *visit, method, path string, query url.Values, body any, idempotencyKey string, out any) error {
	return a.send(r, v, webapp.APICall{Method: method, Path: path, Query: query, Body: body, IdempotencyKey: idempotencyKey}, out)
}

// send is call for any APICall (a raw body, say), run for the visit's member, merchant and
// environment whatever the call says.
func (a *App) send(r *http.Request, v *visit, c webapp.APICall, out any) error {
	if a.cfg.API == nil {
		return fmt.Errorf("dashboard: no API configured for %s %s", c.Method, c.Path)
	}
	if v.merchant == nil {
		return fmt.Errorf("dashboard: %s %s without a merchant", c.Method, c.Path)
	}
	c.Member, c.Merchant = v.Member, v.merchant.ID
	if c.Environment == "" {
		c.Environment = v.env
	}
	ans, err := a.cfg.API(r, c)
	if err != nil {
		return err
	}
	return ans.Decode(out)
}
