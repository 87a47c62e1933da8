package handlers

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/julienschmidt/httprouter"
)

//go:embed openapi.json
var openAPISource []byte

// openAPIDocument returns the embedded OpenAPI document with its servers URL
// set to the base URL this server is reached at.
func openAPIDocument(baseURL string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPISource, &doc); err != nil {
		return nil, fmt.Errorf("embedded openapi.json: %w", err)
	}
	doc["servers"] = []map[string]string{{"url": baseURL}}
	return json.MarshalIndent(doc, "", "  ")
}

// openAPI answers GET /v1/openapi.json.
func (h *Handler) openAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(h.openapi)
}
