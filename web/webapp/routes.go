package webapp

import (
	"net/http"

	"github.com/gorilla/mux"
)

// Route is a method and path template an app serves.
type Route struct{ Method, Path string }

// Routes lists every method and path template of an app's router, so that a test can check
// that it covers them all.
func Routes(router *mux.Router) []Route {
	var out []Route
	_ = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, _ := route.GetMethods()
		for _, m := range methods {
			out = append(out, Route{Method: m, Path: tpl})
		}
		return nil
	})
	return out
}

// Serve serves an app's request: every answer carries the security headers, and a ?lang=
// query first records the language choice and comes back without it.
func (k *Kit) Serve(w http.ResponseWriter, r *http.Request, router http.Handler) {
	k.SecurityHeaders(w, r)
	if k.SwitchLanguage(w, r) {
		return
	}
	router.ServeHTTP(w, r)
}
