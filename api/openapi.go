package api

import "net/http"

// openAPIDocument serves the OpenAPI 3.1 document.
func (s *Server) openAPIDocument(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}

// docsPage renders the document.
func (s *Server) docsPage(w http.ResponseWriter, r *http.Request) {
	routeName(r)
}
