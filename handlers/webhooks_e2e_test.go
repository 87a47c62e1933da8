package handlers

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"acctapi/db"
)

// whChange is one change made through the API and the events it must emit.
type whChange struct {
	name   string
	events []string
}

// whMakeEveryChange makes, through the API with the firm's accountant key,
// one change of every kind the API has, in a new client of the firm, and
// returns the changes with the events each must emit, in order, and the
// client.
func whMakeEveryChange(t *testing.T, api *testAPI) ([]whChange, string) {
	t.Helper()
	key := api.accountantKey
	var changes []whChange
	call := func(name string, events []string, req request, status int) map[string]any {
		t.Helper()
		api.clock.Advance(time.Minute)
		req.key = key
		res := api.do(req)
		if res.status != status {
			t.Fatalf("%s: got %d %s, want %d", name, res.status, res.body, status)
		}
		var out map[string]any
		if err := json.Unmarshal(res.body, &out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		changes = append(changes, whChange{name, events})
		return out
	}
	client := call("create a client", []string{db.EventClientCreated},
		request{method: "POST", path: "/v1/admin/clients", body: map[string]any{"name": "Müller & Söhne GmbH", "type": "legal_person"}}, http.StatusCreated)
	clientID := client["id"].(string)
	call("rename the client", []string{db.EventClientUpdated},
		request{method: "PATCH", path: "/v1/admin/clients/" + clientID, body: map[string]any{"name": "Müller & Söhne AG", "legalName": "Müller & Söhne AG"}}, http.StatusOK)
	accountant := call("invite an accountant user", []string{db.EventAccountantUserInvited},
		request{method: "POST", path: "/v1/admin/users", body: map[string]any{"email": "erika@firm.example", "role": "admin", "firstName": "Erika"}}, http.StatusCreated)
	call("change the accountant user's role", []string{db.EventAccountantUserUpdated},
		request{method: "PATCH", path: "/v1/admin/users/" + accountant["id"].(string), body: map[string]any{"role": "user"}}, http.StatusOK)
	ws := call("create a workspace", []string{db.EventWorkspaceCreated},
		request{method: "POST", path: "/v1/workspaces", clientID: clientID, body: map[string]any{"name": "Bookkeeping 2026"}}, http.StatusCreated)
	wsID := ws["id"].(string)
	call("rename the workspace", []string{db.EventWorkspaceUpdated},
		request{method: "PATCH", path: "/v1/workspaces/" + wsID, clientID: clientID, body: map[string]any{"name": "Bookkeeping FY2026"}}, http.StatusOK)
	user := call("invite a client user into the workspace", []string{db.EventUserInvited, db.EventWorkspaceMemberAdded},
		request{method: "POST", path: "/v1/users", clientID: clientID, body: map[string]any{"email": "max@mueller.example", "role": "user",
			"firstName": "Max", "lastName": "Müller", "workspaceIds": []string{wsID}}}, http.StatusCreated)
	userID := user["id"].(string)
	call("make the client user an admin", []string{db.EventUserUpdated},
		request{method: "PATCH", path: "/v1/users/" + userID, clientID: clientID, body: map[string]any{"role": "admin"}}, http.StatusOK)
	call("remove the user from the workspace", []string{db.EventWorkspaceMemberRemoved},
		request{method: "DELETE", path: "/v1/workspaces/" + wsID + "/members", clientID: clientID, body: map[string]any{"userId": userID}}, http.StatusOK)
	call("add the user to the workspace again", []string{db.EventWorkspaceMemberAdded},
		request{method: "POST", path: "/v1/workspaces/" + wsID + "/members", clientID: clientID, body: map[string]any{"userId": userID}}, http.StatusCreated)
	task := call("create a task", []string{db.EventTaskCreated},
		request{method: "POST", path: "/v1/tasks", clientID: clientID, body: map[string]any{"title": "Upload the March bank statements",
			"workspaceId": wsID, "dueDate": "2026-12-15T00:00:00Z"}}, http.StatusCreated)
	taskID := task["id"].(string)
	call("finish the task", []string{db.EventTaskUpdated},
		request{method: "PATCH", path: "/v1/tasks/" + taskID, clientID: clientID, body: map[string]any{"status": "ACCEPTED", "title": "Upload the March bank statements (received)"}}, http.StatusOK)
	api.clock.Advance(time.Minute)
	res := api.flMustUpload(t, key, clientID, flField("workspaceId", wsID), flField("taskId", taskID),
		flFilePart("bank-statement-2026-03.pdf", "application/pdf", []byte("%PDF-1.7 statement")))
	if res.ID == "" {
		t.Fatalf("upload: no file id")
	}
	changes = append(changes, whChange{"upload a document", []string{db.EventFileCreated}})
	call("delete the task", []string{db.EventTaskDeleted},
		request{method: "DELETE", path: "/v1/tasks/" + taskID, clientID: clientID}, http.StatusOK)
	return changes, clientID
}
