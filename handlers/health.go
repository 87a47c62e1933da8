package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"
)

type healthResponse struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// health answers GET /v1/health: 200 while the database and the file store
// answer, else 503. The check of a bucket is cached by the bucket.
func (h *Handler) health(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		h.log.ErrorContext(r.Context(), "health check failed", "request_id", stateOf(r).id, "error", err)
		h.fail(w, r, &apiError{http.StatusServiceUnavailable, "unavailable", "database_unavailable",
			"the database does not answer"})
		return
	}
	if err := h.files.Reachable(ctx); err != nil {
		h.log.ErrorContext(r.Context(), "health check failed", "request_id", stateOf(r).id, "error", err)
		h.fail(w, r, &apiError{http.StatusServiceUnavailable, "unavailable", "file_store_unavailable",
			"the file store does not answer"})
		return
	}
	writeJSON(w, http.StatusOK, healthResponse{Status: "ok", Version: h.version})
}
