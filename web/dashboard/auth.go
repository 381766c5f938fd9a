package dashboard

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// merchantPicker lists the member's merchants to act for.
func (a *App) merchantPicker(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.render(w, r, http.StatusOK, "merchants", &view{visit: v, Title: "merchants_title", Nav: "merchants"})
}

// pickMerchant makes the session act for one of the member's merchants, in the environment the
// merchant lands in; another merchant's id is not found.
func (a *App) pickMerchant(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := uuid.Parse(strings.TrimSpace(r.PostFormValue("merchant")))
	if err != nil {
		return sika.NotFound("Merchant")
	}
	for i := range v.merchants {
		if v.merchants[i].ID == id {
			if err := a.actFor(r, v, &v.merchants[i], defaultEnvironment(v.merchants[i].Merchant)); err != nil {
				return err
			}
			webapp.Redirect(w, r, Prefix)
			return nil
		}
	}
	return sika.NotFound("Merchant")
}

// switchEnvironment moves the session between TEST and LIVE and returns to the page it was on.
func (a *App) switchEnvironment(w http.ResponseWriter, r *http.Request, v *visit) error {
	env := sika.Environment(strings.ToUpper(strings.TrimSpace(r.PostFormValue("environment"))))
	if !env.Valid() {
		return sika.FieldError("environment", "Must be TEST or LIVE.")
	}
	if err := a.actFor(r, v, v.merchant, env); err != nil {
		return err
	}
	webapp.Redirect(w, r, safeNext(r.PostFormValue("next")))
	return nil
}
