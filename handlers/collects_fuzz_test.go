package handlers

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// FuzzCollectLink sends a fuzzed token, item id and file to the public
// collect route the first byte chooses: the view, an upload or a submit.
// An answer is never a 500; a token that is not the fixture's is the one
// 404 of an unknown link; an accepted upload is a file of the item, with the
// bytes sent; nothing of another collect or tenant is ever answered.
func FuzzCollectLink(f *testing.F) {
	for _, in := range []struct {
		selector          byte
		token, item, name string
		content           []byte
	}{
		{0, "$S", "", "", nil}, {1, "$S", "$I", "statement.pdf", []byte("%PDF-1.7")}, {2, "$S", "", "", nil},
		{1, "$S", "$J", "x.pdf", []byte("x")}, {1, "$S", "$i", "x.pdf", []byte("x")}, {1, "$s", "$i", "x.pdf", []byte("x")},
		{0, "$s", "", "", nil}, {0, "$E", "", "", nil}, {1, "$S", "not-an-id", "", nil}, {1, "$S", "$I", "", []byte{}},
		{1, "$S", "$I", "caf\xc3.pdf", []byte("a")}, {1, "$S", "$I", strings.Repeat("n", 300), []byte("a")},
		{0, "", "", "", nil}, {0, "%2e%2e", "", "", nil}, {0, strings.Repeat("A", 43), "", "", nil},
		{0, "$S=", "", "", nil}, {0, "$S\x00", "", "", nil}, {1 | 0x80, "$S", "$I%00", "a", []byte("a")},
		{2, "$E", "", "", nil}, {2, strings.Repeat("_", 43), "", "", nil},
	} {
		f.Add(in.selector, in.token, in.item, in.name, in.content)
	}
	// The limiter's clock moves a minute at each look, so that no input
	// meets a limit: the limits have tests of their own.
	var ticks atomic.Int64
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	fx := newFuzzLinkFixture(f, func(c *Config) {
		c.Limiter = auth.NewLimiter(func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Minute) })
	})
	f.Fuzz(func(t *testing.T, selector byte, token, item, name string, content []byte) {
		api := fx.on(t)
		token, item = fx.expand(token), fx.expand(item)
		escape := func(s string) string {
			if selector&0x80 != 0 {
				return s
			}
			return url.PathEscape(s)
		}
		base := "/v1/collect-sessions/" + escape(token)
		var res *response
		switch int(selector&0x7f) % 3 {
		case 0:
			res = fx.send(t, api, http.MethodGet, base, "", nil)
		case 1:
			body := flBody(t, flFilePart(name, "", content))
			res = fx.send(t, api, http.MethodPost, base+"/items/"+escape(item)+"/files", flMultipart, body)
		default:
			res = fx.send(t, api, http.MethodPost, base+"/submit", "", nil)
		}
		if res == nil {
			return
		}
		fuzzCheckAnswer(t, api, res, []int{http.StatusOK, http.StatusCreated, http.StatusBadRequest, http.StatusNotFound,
			http.StatusMethodNotAllowed, http.StatusConflict, http.StatusGone, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity})
		own := token == fx.token || token == fx.expired
		forbidden := []string{fx.otherItem, fx.otherCollect, fx.collect, fx.ws, fx.folder, api.client.ID, api.other.client.ID}
		if token == fx.otherToken {
			forbidden = []string{fx.item, fx.item2, fx.otherCollect, fx.collect, fx.ws, fx.folder, api.client.ID, api.other.client.ID}
		}
		for _, id := range forbidden {
			if bytes.Contains(res.body, []byte(id)) && !strings.Contains(strings.ToLower(item), id) {
				t.Fatalf("answered %d %s, naming %s", res.status, res.body, id)
			}
		}
		upload := int(selector&0x7f)%3 == 1
		switch {
		case !own && token != fx.otherToken && (token == "" || strings.Contains(token, "/") || upload && strings.Contains(item, "/")):
			// Another route, or none: the router matches the decoded path,
			// where an escaped slash is a slash, in the token or the item.
			if res.status < 400 {
				t.Fatalf("path %q answered %d %s", base, res.status, res.body)
			}
		case !own && token != fx.otherToken:
			wantError(t, res, http.StatusNotFound, "not_found", "not_found", "no collect for this link: check that it was copied whole")
		case token == fx.expired:
			wantCollectExpired(t, res)
		case res.status == http.StatusCreated && own:
			fx.checkUpload(t, api, res, item, content)
		case res.status == http.StatusCreated && strings.ToLower(item) != fx.otherItem:
			t.Fatalf("another firm's link took an upload to item %q", item)
		case res.status == http.StatusOK && int(selector&0x7f)%3 == 2:
			// Submitted: reopen it, so that later inputs can upload again.
			clientID, collectID := api.client.ID, fx.collect
			if !own {
				clientID, collectID = api.other.client.ID, fx.otherCollect
			}
			open := db.CollectOpen
			if _, err := api.store.UpdateCollect(context.Background(), clientID, collectID,
				db.CollectUpdate{Status: db.Update[string]{Set: true, Value: &open}}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// fuzzLinkFixture is one API for FuzzCollectLink: a collect of the first
// client with a link, an expired link, and another client's collect.
type fuzzLinkFixture struct {
	base                                *testAPI
	ws, folder, collect, item, item2    string
	token, expired                      string
	otherCollect, otherItem, otherToken string
}

func newFuzzLinkFixture(f *testing.F, configure func(*Config)) *fuzzLinkFixture {
	api := newTestAPI(f, configure)
	ctx := context.Background()
	fx := &fuzzLinkFixture{base: api, ws: api.mustCreateWorkspace(api.client.ID, "Fuzz")}
	fx.folder = api.mustCreateFolder(api.client.ID, fx.ws, "Folder")
	collect, err := api.store.CreateCollect(ctx, api.client.ID, db.CollectCreate{WorkspaceID: fx.ws, Title: "Fuzz",
		Items: []db.CollectItemCreate{{Title: "Statement", Required: true, FolderID: &fx.folder}, {Title: "Receipts"}}})
	if err != nil {
		f.Fatal(err)
	}
	fx.collect, fx.item, fx.item2 = collect.ID, collect.Items[0].ID, collect.Items[1].ID
	session := func(clientID, collectID string, lifetime time.Duration) string {
		token, hash, err := auth.NewCollectToken()
		if err != nil {
			f.Fatal(err)
		}
		if _, err := api.store.CreateCollectSession(ctx, clientID, collectID,
			db.CollectSessionCreate{ExpiresAt: api.clock.Now().Add(lifetime), TokenHash: hash}); err != nil {
			f.Fatal(err)
		}
		return token
	}
	fx.token = session(api.client.ID, fx.collect, 90*24*time.Hour)
	fx.expired = session(api.client.ID, fx.collect, -time.Second)
	otherWS := api.mustCreateWorkspace(api.other.client.ID, "Other")
	other, err := api.store.CreateCollect(ctx, api.other.client.ID, db.CollectCreate{WorkspaceID: otherWS, Title: "Other",
		Items: []db.CollectItemCreate{{Title: "Other"}}})
	if err != nil {
		f.Fatal(err)
	}
	fx.otherCollect, fx.otherItem = other.ID, other.Items[0].ID
	fx.otherToken = session(api.other.client.ID, other.ID, 90*24*time.Hour)
	return fx
}

func (fx *fuzzLinkFixture) on(t *testing.T) *testAPI {
	api := *fx.base
	api.t = t
	return &api
}

// expand replaces the placeholders: $S the link, $E the expired link, $s
// another firm's link, $I and $J the items, $i another firm's item.
func (fx *fuzzLinkFixture) expand(s string) string {
	return strings.NewReplacer("$S", fx.token, "$E", fx.expired, "$s", fx.otherToken,
		"$I", fx.item, "$J", fx.item2, "$i", fx.otherItem).Replace(s)
}

// send sends a request without a key; nil when the path is not one a client
// can send.
func (fx *fuzzLinkFixture) send(t *testing.T, api *testAPI, method, path, contentType string, body []byte) *response {
	t.Helper()
	if _, err := url.ParseRequestURI(path); err != nil || strings.ContainsAny(path, "?# ") || !validHeaderValue(path) {
		return nil
	}
	req, err := http.NewRequest(method, api.server.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return api.flSend(t, req)
}

// checkUpload checks an accepted upload: a file of the item sent, in the
// item's folder, with the bytes sent, and the item RECEIVED with it.
func (fx *fuzzLinkFixture) checkUpload(t *testing.T, api *testAPI, res *response, item string, content []byte) {
	t.Helper()
	var up clUploadedFile
	res.decode(t, &up)
	item = strings.ToLower(item)
	if item != fx.item && item != fx.item2 {
		t.Fatalf("an upload to item %q was accepted", item)
	}
	c, err := api.store.FindCollect(context.Background(), api.client.ID, fx.collect)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range c.Items {
		has := false
		for _, id := range it.FileIDs {
			has = has || id == up.ID
		}
		if has != (it.ID == item) || it.ID == item && it.Status != db.ItemReceived {
			t.Fatalf("after an upload to %s: item %+v", item, it)
		}
	}
	f, err := api.store.FindFile(context.Background(), api.client.ID, up.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size != int64(len(content)) || f.WorkspaceID != fx.ws || (item == fx.item) != (f.FolderID != nil) {
		t.Fatalf("uploaded file %+v, want %d bytes in workspace %s", f, len(content), fx.ws)
	}
	stored, err := api.files.OpenFile(up.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer stored.Close()
	var got bytes.Buffer
	if _, err := got.ReadFrom(stored); err != nil || !bytes.Equal(got.Bytes(), content) {
		t.Fatalf("stored bytes differ from the upload's (%v)", err)
	}
}
