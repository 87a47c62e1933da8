package handlers

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// maxPersonName bounds first and last names.
const maxPersonName = 100

var personName = stringRule{trim: true, name: true, min: 1, max: maxPersonName}

// clientUserResponse is a client user as the API answers it; firstName and
// lastName only when provided, absent rather than null otherwise.
type clientUserResponse struct {
	ID        string    `json:"id"`
	CreatedAt timestamp `json:"createdAt"`
	Email     string    `json:"email"`
	FirstName *string   `json:"firstName,omitempty"`
	LastName  *string   `json:"lastName,omitempty"`
	Roles     []string  `json:"roles"`
}

func newClientUserResponse(u *db.ClientUser) clientUserResponse {
	return clientUserResponse{ID: u.ID, CreatedAt: timestampOf(u.CreatedAt), Email: u.Email,
		FirstName: u.FirstName, LastName: u.LastName, Roles: []string{u.Role}}
}

// invitedClientUserResponse is a new client user, and whether the
// invitation was queued for mailing.
type invitedClientUserResponse struct {
	clientUserResponse
	Mailed bool `json:"mailed"`
}

// inviteUser answers POST /v1/users.
func (h *Handler) inviteUser(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var email, role, first, last, locale field[string]
	var workspaceIDs field[[]string]
	if !h.readBody(w, r, func(body *object) {
		email = body.email("email", required)
		role = body.enum("role", db.ClientRoles, required)
		workspaceIDs = body.ids("workspaceIds", optional)
		first = body.string("firstName", personName)
		last = body.string("lastName", personName)
		locale = body.enum("locale", mailLocales, optional)
	}) {
		return
	}
	invitation, err := h.invitation(r, locale)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	in := db.ClientUserInvite{
		Email: email.Value, Role: role.Value, FirstName: valueOrNil(first), LastName: valueOrNil(last),
		WorkspaceIDs: workspaceIDs.Value, Mail: invitation,
	}
	u, err := h.store.InviteClientUser(r.Context(), stateOf(r).clientID, in)
	respond(h, w, r, http.StatusCreated, u, err, func(u *db.ClientUser) invitedClientUserResponse {
		return invitedClientUserResponse{newClientUserResponse(u), in.Mail != nil}
	})
}

// updateUser answers PATCH /v1/users/{id}.
func (h *Handler) updateUser(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var role field[string]
	id, ok := h.readIDAndBody(w, r, p, func(body *object) { role = body.enum("role", db.ClientRoles, required) })
	if !ok {
		return
	}
	u, err := h.store.SetClientUserRole(r.Context(), stateOf(r).clientID, id, role.Value)
	respond(h, w, r, http.StatusOK, u, err, newClientUserResponse)
}
