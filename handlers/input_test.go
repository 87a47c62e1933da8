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
