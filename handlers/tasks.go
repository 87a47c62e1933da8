package handlers

import (
	"net/http"
	"net/url"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// Limits on task fields, documented in the OpenAPI document.
const (
	maxTaskTitle = 500
	maxTaskText  = 100_000
)

// taskResponse is a task as the API answers it: every field present, null
// where empty.
type taskResponse struct {
	ID                  string     `json:"id"`
	Title               string     `json:"title"`
	Text                *string    `json:"text"`
	Status              string     `json:"status"`
	DueDate             *timestamp `json:"dueDate"`
	WorkspaceID         string     `json:"workspaceId"`
	CreatedByID         *string    `json:"createdById"`
	ActorType           string     `json:"actorType"`
	ParentID            *string    `json:"parentId"`
	DestinationFolderID *string    `json:"destinationFolderId"`
	CreatedAt           timestamp  `json:"createdAt"`
	UpdatedAt           timestamp  `json:"updatedAt"`
}

func newTaskResponse(t *db.Task) taskResponse {
	return taskResponse{
		ID: t.ID, Title: t.Title, Text: t.Text, Status: t.Status, DueDate: timestampPtr(t.DueDate),
		WorkspaceID: t.WorkspaceID, CreatedByID: t.CreatedByID, ActorType: t.ActorType,
		ParentID: t.ParentID, DestinationFolderID: t.DestinationFolderID,
		CreatedAt: timestampOf(t.CreatedAt), UpdatedAt: timestampOf(t.UpdatedAt),
	}
}

var (
	taskTitle    = stringRule{trim: true, min: 1, max: maxTaskTitle}
	newTaskTitle = stringRule{presence: required, trim: true, min: 1, max: maxTaskTitle}
	taskText     = stringRule{text: true, max: maxTaskText}
)

// listTasks answers GET /v1/tasks.
func (h *Handler) listTasks(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	filter, req, err := taskListQuery(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.store.ListTasks(r.Context(), stateOf(r).clientID, filter, req)
	respond(h, w, r, http.StatusOK, page, err, newTaskPageResponse)
}

func taskListQuery(values url.Values) (db.TaskFilter, db.PageRequest, error) {
	var v validator
	q := v.query(values)
	filter := db.TaskFilter{WorkspaceID: q.id("workspaceId"), ParentID: q.id("parentId")}
	req := pageRequest(q, db.TaskSorts)
	return filter, req, v.err()
}

// createTask answers POST /v1/tasks.
func (h *Handler) createTask(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var in db.TaskCreate
	if !h.readBody(w, r, func(body *object) { in = taskCreate(body) }) {
		return
	}
	task, err := h.store.CreateTask(r.Context(), stateOf(r).clientID, in)
	respond(h, w, r, http.StatusCreated, task, err, newTaskResponse)
}

// taskCreate reads the fields of a new task.
func taskCreate(body *object) db.TaskCreate {
	title := body.string("title", newTaskTitle)
	workspaceID := body.id("workspaceId", required)
	text := body.string("text", taskText)
	due := body.time("dueDate", optional)
	parentID := body.id("parentId", optional)
	return db.TaskCreate{
		WorkspaceID: workspaceID.Value, Title: title.Value, Text: valueOrNil(text),
		DueDate: valueOrNil(due), ParentID: valueOrNil(parentID),
	}
}

// updateTask answers PATCH /v1/tasks/{id}.
func (h *Handler) updateTask(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var u db.TaskUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) { u = taskUpdate(body) })
	if !ok {
		return
	}
	task, err := h.store.UpdateTask(r.Context(), stateOf(r).clientID, id, u)
	respond(h, w, r, http.StatusOK, task, err, newTaskResponse)
}

// taskUpdate reads the fields a task update sets.
func taskUpdate(body *object) db.TaskUpdate {
	return db.TaskUpdate{
		Title:               update(body.string("title", taskTitle)),
		Text:                update(body.string("text", taskText)),
		DueDate:             update(body.time("dueDate", nullable)),
		Status:              update(body.enum("status", db.TaskStatuses, optional)),
		DestinationFolderID: update(body.id("destinationFolderId", nullable)),
		AssetFileIDs:        update(body.ids("assetFileIds", optional)),
		ParentID:            update(body.id("parentId", nullable)),
	}
}

// taskWithAssetsResponse is a task read on its own: with the ids of the
// files attached to it, which the task's other answers leave out.
type taskWithAssetsResponse struct {
	taskResponse
	AssetFileIDs []string `json:"assetFileIds"`
}

// getTask answers GET /v1/tasks/{id}.
func (h *Handler) getTask(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.GetTask, func(t *db.TaskWithAssets) taskWithAssetsResponse {
		return taskWithAssetsResponse{newTaskResponse(t.Task), t.AssetFileIDs}
	})
}

// deleteTask answers DELETE /v1/tasks/{id}.
func (h *Handler) deleteTask(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.DeleteTask, newTaskResponse)
}
