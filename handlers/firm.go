package handlers

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// firmLocales are the languages a firm's collects and invitations may
// default to.
var firmLocales = []string{"en", "de"}

// firmResponse is the firm as the API answers it.
type firmResponse struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	MailFromName *string   `json:"mailFromName"`
	Locale       string    `json:"locale"`
	CreatedAt    timestamp `json:"createdAt"`
	UpdatedAt    timestamp `json:"updatedAt"`
}

func newFirmResponse(f *db.Firm) firmResponse {
	return firmResponse{
		ID: f.ID, Name: f.Name, MailFromName: f.MailFromName, Locale: f.Locale,
		CreatedAt: timestampOf(f.CreatedAt), UpdatedAt: timestampOf(f.UpdatedAt),
	}
}

// mailFromName is a mail's sender name: a name, so without control
// characters, which would also forge header lines.
var mailFromName = stringRule{presence: nullable, trim: true, min: 1, max: maxName}

// getFirm answers GET /v1/firm: the key's firm.
func (h *Handler) getFirm(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	f, err := h.store.GetFirm(r.Context(), stateOf(r).principal.FirmID)
	respond(h, w, r, http.StatusOK, f, err, newFirmResponse)
}

// updateFirm answers PATCH /v1/firm.
func (h *Handler) updateFirm(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var u db.FirmUpdate
	if !h.readBody(w, r, func(body *object) {
		u = db.FirmUpdate{
			Name:         update(body.string("name", stringRule{trim: true, min: 1, max: maxName})),
			MailFromName: update(body.string("mailFromName", mailFromName)),
			Locale:       update(body.enum("locale", firmLocales, optional)),
		}
	}) {
		return
	}
	f, err := h.store.UpdateFirm(r.Context(), stateOf(r).principal.FirmID, u)
	respond(h, w, r, http.StatusOK, f, err, newFirmResponse)
}
