package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fuzzLists are the list endpoints; a fuzzed input's first byte chooses one.
var fuzzLists = []string{"/v1/tasks", "/v1/workspaces", "/v1/workspaces/$W/members", "/v1/workspaces/$W/folders",
	"/v1/workspaces/$W/labels", "/v1/admin/clients", "/v1/admin/users", "/v1/webhooks", "/v1/webhooks/$H/deliveries",
	"/v1/collects", "/v1/collects/$K/sessions"}

// fuzzPage is a list answer.
type fuzzPage struct {
	Data       []map[string]any `json:"data"`
	Pagination struct {
		Limit          int     `json:"limit"`
		Total          int     `json:"total"`
		NextCursor     *string `json:"nextCursor"`
		PreviousCursor *string `json:"previousCursor"`
	} `json:"pagination"`
}

func (p *fuzzPage) firstID() string {
	if len(p.Data) == 0 {
		return ""
	}
	id, _ := p.Data[0]["id"].(string)
	return id
}

// fuzzList GETs a list with the raw query and checks what every answer
// must be; it returns the page of a 200, nil otherwise.
func fuzzList(t *testing.T, fx *fuzzFixture, api *testAPI, list, rawQuery string) *fuzzPage {
	t.Helper()
	res := api.do(request{method: "GET", path: list + "?" + rawQuery, key: fx.acct, clientID: api.client.ID})
	fuzzCheckAnswer(t, api, res, []int{http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity})
	if res.status != http.StatusOK {
		return nil
	}
	var page fuzzPage
	if strings.HasSuffix(list, "/members") {
		// Members are a bare array, not a page.
		res.decode(t, &page.Data)
	} else {
		res.decode(t, &page)
	}
	for _, item := range page.Data {
		for _, other := range []string{fx.otherWS, fx.otherTask, api.other.client.ID, fx.otherHook} {
			if item["id"] == other || item["workspaceId"] == other || item["clientId"] == other || item["webhookId"] == other {
				t.Fatalf("%s?%s lists %v of the other firm", list, rawQuery, item)
			}
		}
	}
	if strings.HasSuffix(list, "/members") {
		return nil
	}
	return &page
}

// withCursor is the query with its cursor replaced.
func withCursor(query url.Values, cursor string) string {
	q := url.Values{}
	for name, values := range query {
		q[name] = values
	}
	q.Set("cursor", cursor)
	return q.Encode()
}

// FuzzListQuery sends a fuzzed query string to the list endpoint the first
// byte chooses. An answer is never a 500; a page holds at most its limit of
// items, matching the filters, and its cursors lead to the pages they name.
func FuzzListQuery(f *testing.F) {
	for i, queries := range [][]string{
		{"", "limit=2", "limit=2&cursor=$T&sort=dueDate&order=asc", "workspaceId=$W&parentId=$T&sort=status",
			"sort=title&order=asc&limit=100", "workspaceId=$w", "parentId=$t", "cursor=$t", "limit=0", "limit=101",
			"limit=1.0", "limit=1e1", "limit=0x10", "limit=NaN", "limit=99999999999999999999999", "sort=priority",
			"cursor=cnosuchtask00000", "workspaceId=%00", "limit=2&limit=x", "%zz=1&limit=3"},
		{"limit=2&order=asc", "cursor=$W&limit=1", "sort=updatedAt"},
		{"limit=abc", ""},
		{"limit=2&cursor=$F", "order=sideways"},
		{"limit=2&cursor=$L&order=asc", "sort=name"},
		{"limit=2&sort=name&order=asc", "cursor=$C", "cursor=$c"},
		{"limit=2&sort=email", "sort=lastName&order=asc&limit=3", "cursor=$M&sort=firstName"},
		{"limit=2&sort=updatedAt&order=asc", "cursor=$H&limit=1", "cursor=$h", "sort=url", "limit=3&order=desc"},
		{"limit=2", "limit=2&order=asc&cursor=$D", "cursor=$D&limit=1&sort=createdAt&order=desc", "sort=updatedAt", "cursor=$H", "cursor=$h"},
		// Ids and values with a NUL, other control characters or bytes that
		// are not UTF-8: refused as malformed, never echoed.
		{"cursor=$T%00", "workspaceId=$W%0A", "parentId=$T%FF", "sort=%00%1B[2J", "order=asc%C2%85", "workspaceId=$W\x00"},
		{"cursor=$W%00&limit=1", "sort=%FF"},
		{"limit=2", "limit=2&sort=title&order=asc", "workspaceId=$W&taskId=$T&status=OPEN", "status=SUBMITTED", "sort=dueDate&cursor=$K",
			"status=open", "workspaceId=$w", "cursor=$T"},
		{"limit=2", "limit=1&order=asc", "cursor=$K", "sort=title"},
	} {
		for _, q := range queries {
			f.Add(byte(i), q)
		}
	}
	fx := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, selector byte, rawQuery string) {
		api := fx.on(t)
		list := fx.expand(fuzzLists[int(selector)%len(fuzzLists)])
		rawQuery = fx.expand(rawQuery)
		if strings.ContainsAny(rawQuery, "# \x7f") || strings.ContainsFunc(rawQuery, func(r rune) bool { return r < ' ' || r > '~' }) {
			// Not a query a client can send unescaped; its escaped form is.
			rawQuery = url.PathEscape(rawQuery)
		}
		page := fuzzList(t, fx, api, list, rawQuery)
		if page == nil {
			return
		}
		query, _ := url.ParseQuery(rawQuery)
		p := page.Pagination
		limit := defaultLimit
		if s := query.Get("limit"); query.Has("limit") {
			n, _ := strconv.ParseFloat(s, 64)
			limit = int(n)
		}
		if p.Limit != limit || len(page.Data) > limit || p.Total < len(page.Data) {
			t.Fatalf("%s?%s: %d items, limit %d, total %d; want limit %d", list, rawQuery, len(page.Data), p.Limit, p.Total, limit)
		}
		filters := map[string][]string{"/v1/tasks": {"workspaceId", "parentId"}, "/v1/collects": {"workspaceId", "taskId"}}
		for _, filter := range filters[list] {
			// Only tasks and collects have filters; other lists ignore these parameters.
			if query.Has(filter) {
				for _, item := range page.Data {
					if item[filter] != strings.ToLower(query.Get(filter)) {
						t.Fatalf("%s?%s lists %v", list, rawQuery, item)
					}
				}
			}
		}
		if !query.Has("cursor") && p.PreviousCursor != nil {
			t.Errorf("%s?%s: the first page has a previous cursor %s", list, rawQuery, *p.PreviousCursor)
		}
		if p.NextCursor != nil {
			if len(page.Data) != limit {
				t.Errorf("%s?%s: %d items and a next page, want a full page of %d", list, rawQuery, len(page.Data), limit)
			}
			next := fuzzList(t, fx, api, list, withCursor(query, *p.NextCursor))
			if next == nil || next.firstID() != *p.NextCursor {
				t.Fatalf("%s?%s: the next cursor %s does not start the next page", list, rawQuery, *p.NextCursor)
			}
		}
		if p.PreviousCursor != nil {
			prev := fuzzList(t, fx, api, list, withCursor(query, *p.PreviousCursor))
			if prev == nil || prev.firstID() != *p.PreviousCursor {
				t.Fatalf("%s?%s: the previous cursor %s does not start the previous page", list, rawQuery, *p.PreviousCursor)
			}
			// The previous page is the limit items before this one: this
			// page starts within it or right after it.
			ids := make([]string, len(prev.Data))
			for i, item := range prev.Data {
				ids[i], _ = item["id"].(string)
			}
			if first := page.firstID(); !slices.Contains(ids, first) && (prev.Pagination.NextCursor == nil || *prev.Pagination.NextCursor != first) {
				t.Fatalf("%s?%s: the previous page %v does not lead to this page's first item %s", list, rawQuery, ids, first)
			}
		}
	})
}

// fuzzScopedRoutes are client-scoped routes; a fuzzed input's first byte
// chooses one (its top bit, whether the path id is sent unescaped), its
// second bit the key (the firm's accountant key or its client's key).
var fuzzScopedRoutes = []struct {
	method, path string
	body         string
}{
	{"GET", "/v1/tasks", ""},
	{"PATCH", "/v1/tasks/:id", `{}`},
	{"DELETE", "/v1/tasks/:id", ""},
	{"GET", "/v1/workspaces", ""},
	{"PATCH", "/v1/workspaces/:id", `{"name":"Fuzz"}`},
	{"GET", "/v1/workspaces/:id/members", ""},
	{"GET", "/v1/workspaces/:id/folders", ""},
	{"GET", "/v1/workspaces/:id/labels", ""},
	{"GET", "/v1/files/:id", ""},
	{"GET", "/v1/files/:id/content", ""},
	{"PATCH", "/v1/users/:id", `{"role":"user"}`},
	{"GET", "/v1/collects/:id", ""},
	{"PATCH", "/v1/collects/:id", `{}`},
	{"GET", "/v1/collects/:id/sessions", ""},
}

// validHeaderValue says whether Go's HTTP client sends the value: no
// control characters but tab.
func validHeaderValue(v string) bool {
	return !strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}

// FuzzClientScope sends a fuzzed x-client-id and path id to the client-scoped
// route the first byte chooses; a line feed in the x-client-id separates
// several headers. An answer is never a 500, an error has the standard body,
// and nothing of another tenant is ever answered.
func FuzzClientScope(f *testing.F) {
	for _, in := range []struct {
		selector     byte
		clientID, id string
	}{
		{0, "$C", ""}, {1, "$C", "$T"}, {2, "$C", "$t"}, {3, "$c", ""}, {4, "$C", "$W"}, {5, "$C", "$w"},
		{6, " $C ", "$W"}, {7, "$C", "$W"}, {8, "$C", "$A"}, {9, "$C", "$A"}, {10, "$C", "$U"},
		{0, "", ""}, {0, "not-an-id", ""}, {0, "cnosuchclient000", ""}, {0, strings.Repeat("c", 65), ""},
		{1, "$C", "%2e%2e"}, {1 | 0x80, "$C", "%2e%2e%2f"}, {1, "$C", "c\x00aaaaaaaa"}, {1, "$C", "cé€aaaaaaaa"},
		{1, "$C", strings.Repeat("x", 10000)}, {4 | 0x40, "$C", "$W"}, {0 | 0x40, "$c", ""}, {0 | 0x40, "$O", ""}, {3, "$O", ""}, {8, "CNOSUCH\u00e9\u00e9\u00e9", "$A"},
		// Path ids with a NUL, other control characters or bytes that are not
		// UTF-8, escaped or sent as they are.
		{1, "$C", "$T\x00"}, {1 | 0x80, "$C", "$T%00"}, {2, "$C", "$T\n"}, {4 | 0x80, "$C", "$W%1B%5B2J"}, {8, "$C", "$A\u0085"},
		{9 | 0x80, "$C", "$A%FF"}, {0, "$C\xff", ""}, {0, "$C\u0085", ""},
		// Several x-client-id headers (a line feed separates them).
		{0, "$C\n$C", ""}, {0, "$C\n$c", ""}, {3 | 0x40, "$O\n$C", ""}, {4, "\n$C", "$W"},
	} {
		f.Add(in.selector, in.clientID, in.id)
	}
	fx := newFuzzFixture(f)
	f.Fuzz(func(t *testing.T, selector byte, clientID, id string) {
		api := fx.on(t)
		route := fuzzScopedRoutes[int(selector&0x3f)%len(fuzzScopedRoutes)]
		clientID, id = fx.expand(clientID), fx.expand(id)
		clientIDs := strings.Split(clientID, "\n")
		if slices.ContainsFunc(clientIDs, func(v string) bool { return !validHeaderValue(v) }) {
			t.Skip("Go's HTTP client does not send this header value")
		}
		segment := url.PathEscape(id)
		if selector&0x80 != 0 {
			segment = id
		}
		path := strings.Replace(route.path, ":id", segment, 1)
		if _, err := url.ParseRequestURI(path); err != nil || strings.ContainsAny(path, "?#") {
			t.Skip("not a request path")
		}
		key := fx.acct
		if selector&0x40 != 0 {
			key = fx.cli
		}
		req := request{method: route.method, path: path, key: key}
		// api.do sends no empty header: set it here, so that an empty
		// value is fuzzed too.
		req.header = http.Header{"X-Client-Id": clientIDs}
		if route.body != "" {
			req.body = route.body
		}
		res := api.do(req)
		fuzzCheckAnswer(t, api, res, []int{http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity})
		for _, other := range []string{fx.otherWS, fx.otherTask, api.other.client.ID} {
			// An error may name the id the request sent, nothing else.
			if strings.Contains(string(res.body), other) && !strings.Contains(strings.ToLower(id+clientID), other) {
				t.Fatalf("%s %s with x-client-id %q answered %d %s, naming %s of the other firm", route.method, path, clientID, res.status, res.body, other)
			}
		}
		reachable := func(clientID string) bool {
			return strings.EqualFold(strings.Trim(clientID, " \t"), api.client.ID) ||
				key == fx.acct && strings.EqualFold(strings.Trim(clientID, " \t"), api.otherClient.ID)
		}
		if res.status == http.StatusOK && !slices.ContainsFunc(clientIDs, reachable) {
			t.Fatalf("%s %s answered 200 for x-client-id %q, not a client of the key", route.method, path, clientIDs)
		}
	})
}
