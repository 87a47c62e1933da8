package handlers

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
)

// principalResponse is the body of GET /v1/me: who the key speaks for and
// what it may do.
type principalResponse struct {
	Type                string            `json:"type"`
	AccountantID        string            `json:"accountantId"`
	ClientID            string            `json:"clientId,omitempty"`
	APIKeyID            string            `json:"apiKeyId"`
	RateLimitMax        int               `json:"rateLimitMax"`
	RateLimitTimeWindow int64             `json:"rateLimitTimeWindow"`
	Permissions         []auth.Permission `json:"permissions"`
}

// me answers GET /v1/me: who the key is, and its rate limit.
func (h *Handler) me(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	p := stateOf(r).principal
	perms := p.Permissions
	if perms == nil {
		perms = []auth.Permission{}
	}
	writeJSON(w, http.StatusOK, principalResponse{
		Type:                string(p.Kind),
		AccountantID:        p.FirmID,
		ClientID:            p.ClientID,
		APIKeyID:            p.KeyID,
		RateLimitMax:        p.RateLimitMax,
		RateLimitTimeWindow: p.RateLimitWindow.Milliseconds(),
		Permissions:         perms,
	})
}
