package handlers

import (
	"net/http"

	"acctapi/auth"
	"acctapi/db"
)

// mailLocales are the languages of invitations.
var mailLocales = db.MailLocales

// invitation is what asks the store to mail an invitation in locale (the
// firm's when unset): nil when mail is off, so that nothing is queued and
// the answer says mailed: false. A key without mail:send may not mail one.
func (h *Handler) invitation(r *http.Request, locale field[string]) (*db.Invitation, error) {
	if !h.mail {
		return nil, nil
	}
	if err := mayMail(r); err != nil {
		return nil, err
	}
	return &db.Invitation{Locale: locale.Value}, nil
}

// mayMail refuses a request that would queue a mail when its key lacks
// mail:send: mailing in the firm's name is a permission of its own, which
// client keys hold only when minted with it.
func mayMail(r *http.Request) error {
	if !stateOf(r).principal.Can(auth.MailSend) {
		return errMissingScope(auth.MailSend)
	}
	return nil
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
