package gateway

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed openapi.json
var openAPI []byte

//go:embed web
var web embed.FS

// dashboard serves the dashboard's static files (public: they hold no
// data). Its pages may run only their own scripts and talk only to this
// gateway.
func (g *Gateway) dashboard(w http.ResponseWriter, r *http.Request) {
	if !method(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	switch name {
	case "":
		name = "index.html"
	case "favicon.ico":
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !strings.HasPrefix(name, "assets/") && name != "index.html" {
		writeError(w, http.StatusNotFound, "not_found", "no such page: "+r.URL.Path)
		return
	}
	sub, _ := fs.Sub(web, "web")
	b, err := fs.ReadFile(sub, name)
	if err != nil {
		writeError(w, http.StatusNotFound, "not_found", "no such page: "+r.URL.Path)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-cache")
	switch path.Ext(name) {
	case ".html":
		h.Set("Content-Type", "text/html; charset=utf-8")
	case ".js":
		h.Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		h.Set("Content-Type", "text/css; charset=utf-8")
	}
	w.Write(b)
}
