package handlers

import (
	"context"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// maxName bounds the names of workspaces, folders and labels.
const maxName = 200

var nameRule = stringRule{presence: required, trim: true, min: 1, max: maxName}

type workspaceResponse struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	CreatedAt  timestamp  `json:"createdAt"`
	UpdatedAt  timestamp  `json:"updatedAt"`
	ArchivedAt *timestamp `json:"archivedAt"`
	ClientID   string     `json:"clientId"`
}

func newWorkspaceResponse(w *db.Workspace) workspaceResponse {
	return workspaceResponse{
		ID: w.ID, Name: w.Name, CreatedAt: timestampOf(w.CreatedAt), UpdatedAt: timestampOf(w.UpdatedAt),
		ArchivedAt: timestampPtr(w.ArchivedAt), ClientID: w.ClientID,
	}
}

type memberResponse struct {
	CreatedAt   timestamp          `json:"createdAt"`
	UpdatedAt   timestamp          `json:"updatedAt"`
	WorkspaceID string             `json:"workspaceId"`
	IsMuted     bool               `json:"isMuted"`
	UserID      string             `json:"userId"`
	User        memberUserResponse `json:"user"`
}

type memberUserResponse struct {
	ID        string  `json:"id"`
	Email     string  `json:"email"`
	FirstName *string `json:"firstName"`
	LastName  *string `json:"lastName"`
	Image     *string `json:"image"`
}

func newMemberResponse(m *db.Member) memberResponse {
	return memberResponse{
		CreatedAt: timestampOf(m.CreatedAt), UpdatedAt: timestampOf(m.UpdatedAt), WorkspaceID: m.WorkspaceID,
		IsMuted: m.IsMuted, UserID: m.UserID,
		User: memberUserResponse{ID: m.User.ID, Email: m.User.Email, FirstName: m.User.FirstName, LastName: m.User.LastName, Image: m.User.Image},
	}
}

type folderResponse struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	WorkspaceID string    `json:"workspaceId"`
	ParentID    *string   `json:"parentId"`
	CreatedAt   timestamp `json:"createdAt"`
	UpdatedAt   timestamp `json:"updatedAt"`
}

func newFolderResponse(f *db.Folder) folderResponse {
	return folderResponse{ID: f.ID, Name: f.Name, WorkspaceID: f.WorkspaceID, ParentID: f.ParentID,
		CreatedAt: timestampOf(f.CreatedAt), UpdatedAt: timestampOf(f.UpdatedAt)}
}

type labelResponse struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	WorkspaceID string    `json:"workspaceId"`
	CreatedAt   timestamp `json:"createdAt"`
	UpdatedAt   timestamp `json:"updatedAt"`
}

func newLabelResponse(l *db.Label) labelResponse {
	return labelResponse{ID: l.ID, Name: l.Name, WorkspaceID: l.WorkspaceID,
		CreatedAt: timestampOf(l.CreatedAt), UpdatedAt: timestampOf(l.UpdatedAt)}
}

// listWorkspaces answers GET /v1/workspaces.
func (h *Handler) listWorkspaces(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	serveList(h, w, r, clientOf, db.WorkspaceSorts, h.store.ListWorkspaces, newWorkspaceResponse)
}

// createWorkspace answers POST /v1/workspaces.
func (h *Handler) createWorkspace(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var name field[string]
	if !h.readBody(w, r, func(body *object) { name = body.string("name", nameRule) }) {
		return
	}
	ws, err := h.store.CreateWorkspace(r.Context(), stateOf(r).clientID, name.Value)
	respond(h, w, r, http.StatusCreated, ws, err, newWorkspaceResponse)
}

// renameWorkspace answers PATCH /v1/workspaces/{id}.
func (h *Handler) renameWorkspace(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var name field[string]
	id, ok := h.readIDAndBody(w, r, p, func(body *object) { name = body.string("name", nameRule) })
	if !ok {
		return
	}
	ws, err := h.store.RenameWorkspace(r.Context(), stateOf(r).clientID, id, name.Value)
	respond(h, w, r, http.StatusOK, ws, err, newWorkspaceResponse)
}

// listMembers answers GET /v1/workspaces/{id}/members: a bare array.
func (h *Handler) listMembers(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.pathID(w, r, p)
	if !ok {
		return
	}
	members, err := h.store.ListMembers(r.Context(), stateOf(r).clientID, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]memberResponse, len(members))
	for i, m := range members {
		out[i] = newMemberResponse(m)
	}
	writeJSON(w, http.StatusOK, out)
}

// memberRequest reads the workspace id and the body's userId of the member
// endpoints; on a bad request it answers and returns false.
func (h *Handler) memberRequest(w http.ResponseWriter, r *http.Request, p httprouter.Params) (workspaceID, userID string, ok bool) {
	var user field[string]
	workspaceID, ok = h.readIDAndBody(w, r, p, func(body *object) { user = body.id("userId", required) })
	return workspaceID, user.Value, ok
}

// addMember answers POST /v1/workspaces/{id}/members.
func (h *Handler) addMember(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	workspaceID, userID, ok := h.memberRequest(w, r, p)
	if !ok {
		return
	}
	m, err := h.store.AddMember(r.Context(), stateOf(r).clientID, workspaceID, userID)
	respond(h, w, r, http.StatusCreated, m, err, newMemberResponse)
}

// removeMember answers DELETE /v1/workspaces/{id}/members.
func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	workspaceID, userID, ok := h.memberRequest(w, r, p)
	if !ok {
		return
	}
	if err := h.store.RemoveMember(r.Context(), stateOf(r).clientID, workspaceID, userID); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deletedResponse{Object: "workspace_member", Deleted: true, ID: userID})
}

// listFolders answers GET /v1/workspaces/{id}/folders.
func (h *Handler) listFolders(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	listInWorkspace(h, w, r, p, db.FolderSorts, h.store.ListFolders, newFolderResponse)
}

// listLabels answers GET /v1/workspaces/{id}/labels.
func (h *Handler) listLabels(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	listInWorkspace(h, w, r, p, db.LabelSorts, h.store.ListLabels, newLabelResponse)
}

// listInWorkspace answers a list of the records of the workspace in the id
// path parameter.
func listInWorkspace[T, R any](h *Handler, w http.ResponseWriter, r *http.Request, p httprouter.Params, sorts []string,
	list func(ctx context.Context, clientID, workspaceID string, req db.PageRequest) (*db.Page[T], error), convert func(T) R) {
	var v validator
	id := v.pathID(p, "id")
	req := pageRequest(v.query(r.URL.Query()), sorts)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := list(r.Context(), stateOf(r).clientID, id, req)
	respond(h, w, r, http.StatusOK, page, err, listOf(convert))
}

// createFolder answers POST /v1/workspaces/{id}/folders.
func (h *Handler) createFolder(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var name, parentID field[string]
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		name = body.string("name", nameRule)
		parentID = body.id("parentId", nullable)
	})
	if !ok {
		return
	}
	f, err := h.store.CreateFolder(r.Context(), stateOf(r).clientID, id, name.Value, valueOrNil(parentID))
	respond(h, w, r, http.StatusCreated, f, err, newFolderResponse)
}

// createLabel answers POST /v1/workspaces/{id}/labels.
func (h *Handler) createLabel(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var name field[string]
	id, ok := h.readIDAndBody(w, r, p, func(body *object) { name = body.string("name", nameRule) })
	if !ok {
		return
	}
	l, err := h.store.CreateLabel(r.Context(), stateOf(r).clientID, id, name.Value)
	respond(h, w, r, http.StatusCreated, l, err, newLabelResponse)
}
