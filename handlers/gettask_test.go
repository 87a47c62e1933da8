package handlers

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	"acctapi/auth"
)

// taskWithAssets is GET /v1/tasks/{id}'s answer: a Task and its files.
type taskWithAssets struct {
	taskBody
	AssetFileIDs []string `json:"assetFileIds"`
}

func (api *testAPI) getTask(t *testing.T, key, clientID, id string) taskWithAssets {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/tasks/" + id, key: key, clientID: clientID})
	if res.status != http.StatusOK {
		t.Fatalf("GET /v1/tasks/%s: got %d %s, want 200", id, res.status, res.body)
	}
	if got, want := cuKeys(t, res.body), append(slices.Clone(taskFields[:1]), append([]string{"assetFileIds"}, taskFields[1:]...)...); !reflect.DeepEqual(got, want) {
		t.Errorf("fields: got %v, want %v", got, want)
	}
	var out taskWithAssets
	admStrict(t, res.body, &out)
	return out
}

func TestGetTask(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	task := api.createTask(t, api.clientKey, api.client.ID, map[string]any{"title": "March receipts", "workspaceId": ws, "text": "all of them"})

	t.Run("without files", func(t *testing.T) {
		got := api.getTask(t, api.clientKey, api.client.ID, task.ID)
		if got.String() != task.String() || got.AssetFileIDs == nil || len(got.AssetFileIDs) != 0 {
			t.Errorf("got %s with files %v, want %s with assetFileIds []", got, got.AssetFileIDs, task)
		}
	})

	t.Run("with the files attached, by either key", func(t *testing.T) {
		a, b := api.mustCreateFile(api.client.ID, ws, ""), api.mustCreateFile(api.client.ID, ws, "")
		api.clock.Advance(60e9)
		updated := api.patchTask(t, api.clientKey, api.client.ID, task.ID, map[string]any{"assetFileIds": []string{b, a, b}})
		want := []string{a, b}
		slices.Sort(want)
		for _, key := range []string{api.clientKey, api.accountantKey} {
			got := api.getTask(t, key, api.client.ID, task.ID)
			if got.String() != updated.String() || !slices.Equal(got.AssetFileIDs, want) {
				t.Errorf("got %s with files %v, want %s with files %v", got, got.AssetFileIDs, updated, want)
			}
		}
		api.patchTask(t, api.clientKey, api.client.ID, task.ID, map[string]any{"assetFileIds": []string{}})
		if got := api.getTask(t, api.clientKey, api.client.ID, task.ID); len(got.AssetFileIDs) != 0 {
			t.Errorf("after detaching: files %v, want none", got.AssetFileIDs)
		}
	})

	t.Run("refused", func(t *testing.T) {
		path := "/v1/tasks/" + task.ID
		noRead := api.mustMintKey(api.firm.ID, auth.KeySpec{ClientID: api.client.ID, Permissions: []string{"tasks:write"}})
		wantError(t, api.do(request{method: "GET", path: path, clientID: api.client.ID}), http.StatusUnauthorized, "auth_error", "unauthorized", "")
		wantError(t, api.do(request{method: "GET", path: path, key: noRead, clientID: api.client.ID}), http.StatusForbidden, "auth_error", "missing_scope", "")
		// Another client's task, another firm's, and no task at all are one 404.
		for _, c := range []struct{ key, clientID, path string }{
			{api.otherClientClientKey, api.otherClient.ID, path},
			{api.accountantKey, api.otherClient.ID, path},
			{api.other.accountantKey, api.other.client.ID, path},
			{api.clientKey, api.client.ID, "/v1/tasks/" + missingTaskID},
		} {
			wantError(t, api.do(request{method: "GET", path: c.path, key: c.key, clientID: c.clientID}), http.StatusNotFound, "not_found", "not_found", "")
		}
		wantError(t, api.do(request{method: "GET", path: path, key: api.accountantKey}), http.StatusBadRequest, "bad_request", "missing_client_id", "")
		if res := api.do(request{method: "GET", path: "/v1/tasks/not-an-id", key: api.clientKey, clientID: api.client.ID}); res.status != http.StatusUnprocessableEntity {
			t.Errorf("malformed id: got %d %s, want 422", res.status, res.body)
		}
		api.do(request{method: "DELETE", path: path, key: api.clientKey, clientID: api.client.ID})
		wantError(t, api.do(request{method: "GET", path: path, key: api.clientKey, clientID: api.client.ID}), http.StatusNotFound, "not_found", "not_found", "")
	})
}
