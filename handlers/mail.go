package handlers

import "acctapi/db"

// mailLocales are the languages of invitations.
var mailLocales = db.MailLocales

// invitation is what asks the store to mail an invitation in locale (the
// firm's when unset): nil when mail is off, so that nothing is queued and
// the answer says mailed: false.
func (h *Handler) invitation(locale field[string]) *db.Invitation {
	if !h.mail {
		return nil
	}
	return &db.Invitation{Locale: locale.Value}
}

// sessionMailResponse is the state of the mail that carried a session's
// link.
type sessionMailResponse struct {
	Status string     `json:"status"`
	Error  *string    `json:"error"`
	SentAt *timestamp `json:"sentAt"`
}

func newSessionMailResponse(st *db.SessionMailState) *sessionMailResponse {
	if st == nil {
		return nil
	}
	return &sessionMailResponse{Status: st.Status, Error: st.Error, SentAt: timestampPtr(st.SentAt)}
}
