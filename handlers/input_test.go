package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The rules every string of a request obeys, whichever endpoint reads it:
// JSON strings are UTF-8 (no lone surrogates), fields hold no control
// characters (free text may hold tabs and line breaks), ids are cuids
// without control characters, date-times are RFC 3339 with an offset within
// ±23:59, and no answer carries back a control character the request held.

// wantNoControls checks that no string of a JSON answer holds a control
// character or a byte that is not UTF-8.
func wantNoControls(t *testing.T, res *response) {
	t.Helper()
	if !utf8.Valid(res.body) {
		t.Errorf("answer %q is not UTF-8", res.body)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if strings.ContainsFunc(v, unicode.IsControl) || strings.ContainsRune(v, utf8.RuneError) {
				t.Errorf("answer %s holds %q, with a control character or a replaced byte", res.body, v)
			}
		case []any:
			for _, item := range v {
				walk(item)
			}
		case map[string]any:
			for _, item := range v {
				walk(item)
			}
		}
	}
	var body any
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatalf("answer %q: %v", res.body, err)
	}
	walk(body)
}

// wantInvalidUTF8 checks the answer to a body whose strings are not UTF-8.
func wantInvalidUTF8(t *testing.T, res *response) {
	t.Helper()
	wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json",
		`the request body is not valid JSON: its strings must be UTF-8, without lone surrogate escapes such as \ud800`)
}

func TestBodyStringsUTF8(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	post := func(body string) *response {
		return api.do(request{method: "POST", path: "/v1/tasks", key: api.accountantKey, clientID: api.client.ID, body: body})
	}
	task := func(title string) string { return `{"workspaceId":"` + ws + `","title":"` + title + `"}` }

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct{ name, body string }{
			{"a byte that is not UTF-8", task("bad \xff")},
			{"a sequence cut short", task("caf\xc3")},
			{"an overlong encoding", task("\xc0\xaf")},
			{"a surrogate encoded as UTF-8", task("\xed\xa0\x80")},
			{"in a field name", `{"workspaceId":"` + ws + `","title":"x","te` + "\xff" + `xt":"y"}`},
			{"in a field no endpoint reads", `{"workspaceId":"` + ws + `","title":"x","note":"` + "\xfe" + `"}`},
			{"a lone high surrogate", task(`\ud800`)},
			{"a lone low surrogate", task(`\udc00`)},
			{"a high surrogate at the end", task(`abc\uD83D`)},
			{"a high surrogate before a letter", task(`\ud83dx`)},
			{"a high surrogate before another escape", task(`\ud83d\u0041`)},
			{"two high surrogates", task(`\ud83d\ud83d`)},
			{"a low surrogate before its high one", task(`\ude00\ud83d`)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantInvalidUTF8(t, post(tc.body))
			})
		}
	})

	t.Run("accepted", func(t *testing.T) {
		for _, tc := range []struct{ name, title, want string }{
			{"a surrogate pair", `\ud83d\ude00`, "\U0001F600"},
			{"a surrogate pair in upper case", `\uD83D\uDE00`, "\U0001F600"},
			{"an escaped backslash before u", `\\ud800`, `\ud800`},
			{"the replacement character", "\ufffd \\ufffd", "\ufffd \ufffd"},
			{"UTF-8 of every length", "é€\U0001F600", "é€\U0001F600"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := post(task(tc.title))
				if res.status != http.StatusCreated {
					t.Fatalf("status: got %d, want 201 (body %s)", res.status, res.body)
				}
				var got taskResponse
				res.decode(t, &got)
				if got.Title != tc.want {
					t.Errorf("title: got %q, want %q", got.Title, tc.want)
				}
			})
		}
	})
}

// controlIssue is the issue of a string field that holds a control
// character; textIssue that of a free-text field.
func controlIssue(path ...any) issue {
	return issue{Code: "invalid_string", Path: path, Validation: "regex", Message: "String must not contain control characters"}
}

func textIssue(path ...any) issue {
	return issue{Code: "invalid_string", Path: path, Validation: "regex",
		Message: "String must not contain control characters other than tab, line feed and carriage return"}
}

func TestControlCharacters(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	send := func(method, path string, body map[string]any) *response {
		return api.do(request{method: method, path: path, key: api.accountantKey, clientID: api.client.ID, body: body})
	}
	task := func(fields map[string]any) map[string]any {
		fields["workspaceId"] = ws
		if _, ok := fields["title"]; !ok {
			fields["title"] = "x"
		}
		return fields
	}

	t.Run("refused in every string field", func(t *testing.T) {
		folders, labels := "/v1/workspaces/"+ws+"/folders", "/v1/workspaces/"+ws+"/labels"
		hook := map[string]any{"url": "https://hooks.example.com/in", "events": []string{"*"}}
		for _, tc := range []struct {
			name         string
			method, path string
			body         map[string]any
			zod          bool
			want         issue
		}{
			{"NUL in a title", "POST", "/v1/tasks", task(map[string]any{"title": "Q1\x00 VAT"}), false, controlIssue("title")},
			{"a tab inside a title", "POST", "/v1/tasks", task(map[string]any{"title": "Q1\tVAT"}), false, controlIssue("title")},
			{"a line feed inside a title", "POST", "/v1/tasks", task(map[string]any{"title": "Q1\nVAT"}), false, controlIssue("title")},
			{"DEL in a title", "POST", "/v1/tasks", task(map[string]any{"title": "Q1\x7f"}), false, controlIssue("title")},
			{"a C1 control in a title", "POST", "/v1/tasks", task(map[string]any{"title": "Q1\u0085VAT"}), false, controlIssue("title")},
			{"NUL in a task's text", "POST", "/v1/tasks", task(map[string]any{"text": "a\x00b"}), false, textIssue("text")},
			{"an escape sequence in a task's text", "POST", "/v1/tasks", task(map[string]any{"text": "\x1b[31mred"}), false, textIssue("text")},
			{"a form feed in a task's text", "PATCH", "/v1/tasks/" + missingTaskID, map[string]any{"text": "a\fb"}, false, textIssue("text")},
			{"NUL in a parent id", "POST", "/v1/tasks", task(map[string]any{"parentId": "caaaaaaaaa\x00"}), false, cuidIssue("parentId")},
			{"a C1 control in an id", "POST", "/v1/tasks", task(map[string]any{"parentId": "caaaaaaaaa\u009b"}), false, cuidIssue("parentId")},
			{"NUL in a workspace name", "POST", "/v1/workspaces", map[string]any{"name": "a\x00"}, false, controlIssue("name")},
			{"NUL in a folder name", "POST", folders, map[string]any{"name": "a\x00"}, false, controlIssue("name")},
			{"NUL in a label name", "POST", labels, map[string]any{"name": "a\x00"}, false, controlIssue("name")},
			{"NUL in an email", "POST", "/v1/users", map[string]any{"email": "a\x00@example.com", "role": "user"}, true, controlIssue("email")},
			{"NUL in a first name", "POST", "/v1/users", map[string]any{"email": "a@example.com", "role": "user", "firstName": "A\x00"}, true, controlIssue("firstName")},
			{"NUL in a client name", "POST", "/v1/admin/clients", map[string]any{"name": "A\x00", "type": "legal_person"}, false, controlIssue("name")},
			{"NUL in a custom id", "POST", "/v1/admin/clients", map[string]any{"name": "A", "type": "legal_person", "customId": "4\x002"}, false, controlIssue("customId")},
			{"a line feed in an address", "POST", "/v1/admin/clients", map[string]any{"name": "A", "type": "legal_person",
				"address": map[string]any{"line1": "1 Main St\nFlat 2"}}, false, controlIssue("address", "line1")},
			{"NUL in a last name", "POST", "/v1/admin/users", map[string]any{"email": "b@example.com", "role": "user", "lastName": "B\x00"}, true, controlIssue("lastName")},
			{"NUL in a webhook URL", "POST", "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/\x00", "events": []string{"*"}}, false, controlIssue("url")},
			{"NUL in a webhook description", "POST", "/v1/webhooks", map[string]any{"url": hook["url"], "events": hook["events"], "description": "a\x00"}, false, textIssue("description")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				name := "ValidationError"
				if tc.zod {
					name = "ZodError"
				}
				res := send(tc.method, tc.path, tc.body)
				wantIssues(t, res, name, []issue{tc.want})
				wantNoControls(t, res)
			})
		}
	})

	t.Run("free text keeps tabs and line breaks", func(t *testing.T) {
		text := "Line 1\r\nLine 2\n\tindented"
		res := send("POST", "/v1/tasks", task(map[string]any{"title": "  Q1 VAT\t\n", "text": text}))
		if res.status != http.StatusCreated {
			t.Fatalf("status: got %d, want 201 (body %s)", res.status, res.body)
		}
		var got taskResponse
		res.decode(t, &got)
		if got.Title != "Q1 VAT" || got.Text == nil || *got.Text != text {
			t.Errorf("task: got title %q, text %v; want the title trimmed and the text as sent", got.Title, got.Text)
		}
		res = send("POST", "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/in", "events": []string{"*"},
			"description": "Ledger sync\n\tfor March"})
		if res.status != http.StatusCreated {
			t.Fatalf("webhook with a two-line description: got %d, want 201 (body %s)", res.status, res.body)
		}
	})

	t.Run("query ids", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/tasks?workspaceId=caaaaaaaaa%00", key: api.accountantKey, clientID: api.client.ID})
		wantIssues(t, res, "ValidationError", []issue{cuidIssue("query", "workspaceId")})
	})
}

func TestTimestampOffsets(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	post := func(due string) *response {
		return api.do(request{method: "POST", path: "/v1/tasks", key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"workspaceId": ws, "title": "x", "dueDate": due}})
	}
	datetimeIssue := issue{Code: "invalid_string", Path: []any{"dueDate"}, Validation: "datetime", Message: "Invalid datetime"}

	t.Run("refused", func(t *testing.T) {
		for _, due := range []string{
			"2026-01-02T03:04:05+24:00", "2026-01-02T03:04:05-24:00", "2026-01-02T03:04:05+23:60",
			"2026-01-02T03:04:05+24:60", "2026-01-02T03:04:05,5Z", "2026-01-02T3:04:05Z",
			"2026-01-02T03:04:05+01:00\x00", "2026-01-02T03:04:05z", "2026-01-02 03:04:05Z", "2026-02-29T00:00:00Z",
		} {
			t.Run(due, func(t *testing.T) {
				res := post(due)
				wantIssues(t, res, "ValidationError", []issue{datetimeIssue})
			})
		}
	})

	t.Run("accepted", func(t *testing.T) {
		for _, tc := range []struct{ due, want string }{
			{"2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"},
			{"2026-01-02T03:04:05+23:59", "2026-01-01T03:05:05Z"},
			{"2026-01-02T03:04:05-23:59", "2026-01-03T03:03:05Z"},
			{"2026-01-02T03:04:05-00:00", "2026-01-02T03:04:05Z"},
			{"2026-01-02T03:04:05.123456789+01:00", "2026-01-02T02:04:05Z"},
			{"2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"},
		} {
			t.Run(tc.due, func(t *testing.T) {
				res := post(tc.due)
				if res.status != http.StatusCreated {
					t.Fatalf("status: got %d, want 201 (body %s)", res.status, res.body)
				}
				var got taskResponse
				res.decode(t, &got)
				if got.DueDate == nil || string(*got.DueDate) != tc.want {
					t.Errorf("dueDate: got %v, want %s", got.DueDate, tc.want)
				}
			})
		}
	})
}

func TestAnswersEchoNoControlCharacters(t *testing.T) {
	api := newTestAPI(t)
	do := func(method, path string) *response {
		return api.do(request{method: method, path: path, key: api.accountantKey, clientID: api.client.ID, body: map[string]any{}})
	}
	t.Run("path ids", func(t *testing.T) {
		for _, id := range []string{"caaaaaaaaa%00", "caaaaaaaaa%0A", "caaaaaaaaa%1B%5B2J", "caaaaaaaaa%C2%85", "caaaaaaaaa%FF"} {
			t.Run(id, func(t *testing.T) {
				res := do("PATCH", "/v1/tasks/"+id)
				wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id")})
				wantNoControls(t, res)
			})
		}
	})
	t.Run("unknown routes", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/nope%00%0A%FF", key: api.accountantKey})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", `no route for GET /v1/nope\u0000\u000a\xff`)
		wantNoControls(t, res)
	})
	t.Run("enum values", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/tasks?sort=%00%1B", key: api.accountantKey, clientID: api.client.ID})
		wantIssues(t, res, "ValidationError", []issue{{Code: "invalid_enum_value", Path: []any{"query", "sort"},
			Options: []string{"createdAt", "updatedAt", "dueDate", "status", "title"}, Received: `\u0000\u001b`,
			Message: `Invalid enum value. Expected 'createdAt' | 'updatedAt' | 'dueDate' | 'status' | 'title', received '\u0000\u001b'`}})
		wantNoControls(t, res)
	})
}

// TestDuplicateHeaders: a request with several x-client-id or Content-Type
// headers is refused, as one with several Authorization or Idempotency-Key
// headers is, and nothing is written.
func TestDuplicateHeaders(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	t.Run("x-client-id", func(t *testing.T) {
		for _, values := range [][]string{{api.client.ID, api.client.ID}, {api.client.ID, api.other.client.ID}, {"", api.client.ID}} {
			res := api.do(request{method: "GET", path: "/v1/tasks", key: api.accountantKey,
				header: http.Header{"X-Client-Id": values}})
			wantIssues(t, res, "ValidationError", []issue{{Code: "custom", Path: []any{"headers", "x-client-id"},
				Message: "send one x-client-id header, not several"}})
		}
	})
	t.Run("Content-Type of a JSON body", func(t *testing.T) {
		res := api.do(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID,
			body:   `{"title":"twice typed","workspaceId":"` + ws + `"}`,
			header: http.Header{"Content-Type": {"application/json", "application/json"}}})
		wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", "send the body as Content-Type: application/json")
	})
	t.Run("Content-Type of an upload", func(t *testing.T) {
		body := "--b\r\nContent-Disposition: form-data; name=workspaceId\r\n\r\n" + ws +
			"\r\n--b\r\nContent-Disposition: form-data; name=file; filename=a.txt\r\n\r\nx\r\n--b--\r\n"
		res := api.do(request{method: "POST", path: "/v1/files", key: api.clientKey, clientID: api.client.ID, body: body,
			header: http.Header{"Content-Type": {"multipart/form-data; boundary=b", "multipart/form-data; boundary=b"}}})
		wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", "send the upload as Content-Type: multipart/form-data")
	})
	if n := len(api.allTasks(t, api.clientKey, api.client.ID)); n != 0 {
		t.Errorf("tasks after the refused requests: %d, want none", n)
	}
}

// TestEmailMailbox: an email field is an SMTP mailbox: what would bend
// RCPT TO or the To header (a closing bracket, a line separator, a display
// name, a quoted local part) is a 422, before anything is made.
func TestEmailMailbox(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	for email, want := range map[string]int{
		"a@evil.com>":                http.StatusUnprocessableEntity,
		"anna\u2028@client.example":  http.StatusUnprocessableEntity,
		"Anna <anna@client.example>": http.StatusUnprocessableEntity,
		"\"a b\"@client.example":     http.StatusUnprocessableEntity,
		"a@evil.com>,b@x.example":    http.StatusUnprocessableEntity,
		"anna@client.example":        http.StatusCreated,
		"ünal@büro.example":          http.StatusCreated,
	} {
		res := api.do(request{method: "POST", path: "/v1/users", key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"email": email, "role": "user", "workspaceIds": []string{ws}}})
		if res.status != want {
			t.Errorf("%+q: got %d %s, want %d", email, res.status, res.body, want)
		}
	}
}
