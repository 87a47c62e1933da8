package handlers

import (
	"bytes"
	"net/http"
	"slices"
	"testing"
)

// clRemove takes a file back through a link, without a key.
func (api *testAPI) clRemove(token, itemID, fileID string) *response {
	return api.do(request{method: "DELETE", path: "/v1/collect-sessions/" + token + "/items/" + itemID + "/files/" + fileID})
}

func TestCollectFileRemoved(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.clientKey, api.client.ID)
	hook := api.mustCreateWebhook(api.accountantKey, map[string]any{"url": "https://hooks.example.com/c", "events": []string{"collect.item_file_removed"}})
	c := api.clMustCreate(t, f)
	statements, receipts := c.Items[0].ID, c.Items[1].ID
	token := api.clMustSession(t, f, c.ID, map[string]any{}).Token
	first := api.clMustUpload(t, token, statements, flFilePart("wrong.pdf", "application/pdf", []byte("%PDF-1.7 wrong")))
	second := api.clMustUpload(t, token, statements, flFilePart("right.pdf", "application/pdf", []byte("%PDF-1.7 right")))
	receipt := api.clMustUpload(t, token, receipts, flFilePart("receipt.pdf", "application/pdf", []byte("%PDF-1.7 receipt")))

	t.Run("one of two files: the item stays received", func(t *testing.T) {
		api.clock.Advance(60e9)
		res := api.clRemove(token, statements, first.ID)
		if res.status != http.StatusOK {
			t.Fatalf("DELETE: got %d %s, want 200", res.status, res.body)
		}
		var v clView
		res.decode(t, &v)
		if it := v.Collect.Items[0]; it.Status != "RECEIVED" || len(it.Files) != 1 || it.Files[0].ID != second.ID {
			t.Errorf("item after taking one back: %+v, want RECEIVED with %s alone", it, second.ID)
		}
		if _, again := api.clView(t, token); len(again.Collect.Items[0].Files) != 1 {
			t.Errorf("the view read again: %+v", again.Collect.Items[0])
		}
	})

	t.Run("the last file: the item is pending again, the file stays the firm's", func(t *testing.T) {
		res := api.clRemove(token, statements, second.ID)
		var v clView
		res.decode(t, &v)
		if it := v.Collect.Items[0]; res.status != http.StatusOK || it.Status != "PENDING" || len(it.Files) != 0 {
			t.Errorf("item after taking its last file back: %d %+v, want PENDING without files", res.status, it)
		}
		got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
		if it := got.Items[0]; it.Status != "PENDING" || len(it.FileIDs) != 0 || !slices.Equal(got.Items[1].FileIDs, []string{receipt.ID}) {
			t.Errorf("the collect as the firm reads it: %+v", got.Items)
		}
		for _, id := range []string{first.ID, second.ID} {
			if res := api.do(request{method: "GET", path: "/v1/files/" + id, key: api.accountantKey, clientID: api.client.ID}); res.status != http.StatusOK {
				t.Errorf("GET /v1/files/%s after it was taken back: %d, want 200", id, res.status)
			}
		}
	})

	t.Run("collect.item_file_removed", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/webhooks/" + hook.ID + "/deliveries", key: api.accountantKey})
		var page admPage[whDelivery]
		res.decode(t, &page)
		if len(page.Data) != 2 {
			t.Fatalf("deliveries: %d, want 2", len(page.Data))
		}
		for _, d := range page.Data {
			payload := fmQuery(t, api, `SELECT payload FROM webhook_events WHERE id = ?`, d.EventID)
			if d.EventType != "collect.item_file_removed" || !bytes.Contains(payload, []byte(`"itemId":"`+statements+`"`)) {
				t.Errorf("event %s: %s", d.EventType, payload)
			}
		}
	})

	t.Run("not found", func(t *testing.T) {
		other := api.clMustCreate(t, f)
		otherToken := api.clMustSession(t, f, other.ID, map[string]any{}).Token
		otherFile := api.clMustUpload(t, otherToken, other.Items[0].ID, flFilePart("o.pdf", "application/pdf", []byte("%PDF-1.7 o")))
		firmFile := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", f.workspaceID),
			flFilePart("firm.pdf", "application/pdf", []byte("%PDF-1.7 firm")))
		for name, path := range map[string][3]string{
			"a file of another item":          {token, statements, receipt.ID},
			"a file taken back already":       {token, statements, first.ID},
			"a file of another collect":       {token, statements, otherFile.ID},
			"the other collect's file here":   {otherToken, other.Items[0].ID, receipt.ID},
			"a file the firm uploaded":        {token, statements, firmFile.ID},
			"an item of another collect":      {token, other.Items[0].ID, otherFile.ID},
			"a malformed file id":             {token, statements, "not-an-id"},
			"a token that reaches no collect": {"x" + token[1:], statements, receipt.ID},
		} {
			res := api.clRemove(path[0], path[1], path[2])
			if res.status != http.StatusNotFound {
				t.Errorf("%s: got %d %s, want 404", name, res.status, res.body)
			}
		}
		if _, v := api.clView(t, otherToken); len(v.Collect.Items[0].Files) != 1 {
			t.Errorf("the other collect's file went: %+v", v.Collect.Items[0])
		}
	})

	t.Run("submitted, then closed", func(t *testing.T) {
		api.clMustUpload(t, token, statements, flFilePart("right.pdf", "application/pdf", []byte("%PDF-1.7 right")))
		if res := api.do(request{method: "POST", path: "/v1/collect-sessions/" + token + "/submit"}); res.status != http.StatusOK {
			t.Fatalf("submit: %d %s", res.status, res.body)
		}
		wantError(t, api.clRemove(token, receipts, receipt.ID), http.StatusConflict, "conflict", "conflict", "")
		clDecodeCollect(t, api.clDo(f, "PATCH", "/v1/collects/"+c.ID, map[string]any{"status": "CLOSED"}), http.StatusOK)
		wantCollectExpired(t, api.clRemove(token, receipts, receipt.ID))
		if _, v := api.clView(t, token); v.Collect.Title != "" {
			t.Errorf("a closed collect's view answered")
		}
		got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK)
		if !slices.Equal(got.Items[1].FileIDs, []string{receipt.ID}) {
			t.Errorf("the receipt after refused removals: %v", got.Items[1].FileIDs)
		}
	})
}
