package handlers

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"

	"github.com/julienschmidt/httprouter"
)

// The interactive reference at /v1/docs is Swagger UI rendering the served
// document. Its built files (swagger-ui/) come from the npm package
// swagger-ui-dist, fetched by scripts/fetch-reference-assets.sh, and are
// embedded so that the page needs no other host.
//
//go:embed reference/init.js reference/reference.css reference/swagger-ui
var referenceFiles embed.FS

//go:embed reference/index.html
var referencePage []byte

// referenceCSP lets the reference page load its scripts, styles and the
// document from this server only: no inline script or style, no other host.
// Images may also be data: URLs, which are no request: Swagger UI's
// stylesheet draws two icons with inline SVG.
const referenceCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// referenceAsset is one file the reference page loads.
type referenceAsset struct {
	contentType string
	etag        string
	body        []byte
}

// referenceAssets maps the names under /v1/docs/ to their files: the page's
// script and styles, Swagger UI's bundle, styles and icon, and their
// licenses.
var referenceAssets = func() map[string]referenceAsset {
	types := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
		".png": "image/png",
	}
	assets := map[string]referenceAsset{}
	for _, name := range []string{"reference/init.js", "reference/reference.css", "reference/swagger-ui/swagger-ui-bundle.js",
		"reference/swagger-ui/swagger-ui.css", "reference/swagger-ui/favicon-32x32.png",
		"reference/swagger-ui/swagger-ui-bundle.js.LICENSE.txt",
		"reference/swagger-ui/LICENSE", "reference/swagger-ui/NOTICE"} {
		body, err := fs.ReadFile(referenceFiles, name)
		if err != nil {
			panic(err) // the embed directive above names every one of them
		}
		ct, ok := types[path.Ext(name)]
		if !ok {
			ct = "text/plain; charset=utf-8"
		}
		sum := sha256.Sum256(body)
		assets[path.Base(name)] = referenceAsset{ct, `"` + hex.EncodeToString(sum[:16]) + `"`, body}
	}
	return assets
}()

// reference answers GET /v1/docs with the page of the interactive reference.
func (h *Handler) reference(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	w.Header().Set("Content-Security-Policy", referenceCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(referencePage)
}

// referenceFile answers GET /v1/docs/:asset with a file of the reference.
// The files change only with the binary: browsers keep them and ask again
// with the ETag they hold in If-None-Match, answered 304 while it matches.
func (h *Handler) referenceFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	name := p.ByName("asset")
	a, ok := referenceAssets[name]
	if !ok {
		h.fail(w, r, errNotFound(fmt.Sprintf("no reference file %q", name)))
		return
	}
	header := w.Header()
	header.Set("Content-Security-Policy", referenceCSP)
	header.Set("Content-Type", a.contentType)
	header.Set("Cache-Control", "no-cache")
	header.Set("ETag", a.etag)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(a.body)
}
