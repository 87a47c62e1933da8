package handlers

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"acctapi/db"
)

// kindBody is a collect body whose first item asks for bank statements
// and whose second asks for any document.
func (f clFixture) kindBody() map[string]any {
	body := f.body()
	body["items"] = []any{
		map[string]any{"title": "Bank statement", "kind": "bank_statement"},
		map[string]any{"title": "Anything else", "required": false, "kind": nil},
	}
	return body
}

// clFinishAnalyses ends the analysis of every queued file as the worker
// would, each file read as the kind its name maps to (other, when none).
func (api *testAPI) clFinishAnalyses(t *testing.T, kinds map[string]string) {
	t.Helper()
	results := map[string]db.AnalysisResult{}
	for name, kind := range kinds {
		source := db.TextFromPDF
		results[name] = db.AnalysisResult{Status: db.AnalysisDone, Source: &source, Kind: &kind}
	}
	api.dcAnalyze(t, nil, results)
}

func TestCollectItemKind(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)

	c := clDecodeCollect(t, api.clDo(f, "POST", "/v1/collects", f.kindBody()), http.StatusCreated)
	statements, anything := c.Items[0], c.Items[1]
	if statements.Kind == nil || *statements.Kind != "bank_statement" || anything.Kind != nil {
		t.Fatalf("item kinds: got %v and %v, want bank_statement and null", statements.Kind, anything.Kind)
	}
	if got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK); *got.Items[0].Kind != "bank_statement" {
		t.Errorf("read back: got %v", got.Items[0].Kind)
	}

	t.Run("refused kinds change nothing", func(t *testing.T) {
		before := api.clCount(t, f)
		for _, tt := range []struct {
			name string
			kind any
		}{{"other", "other"}, {"unknown", "passport"}, {"upper case", "BANK_STATEMENT"}, {"a number", 3}, {"an array", []any{"invoice"}}} {
			body := f.kindBody()
			body["items"] = []any{map[string]any{"title": "x", "kind": tt.kind}}
			if got := issuePaths(t, api.clDo(f, "POST", "/v1/collects", body)); !slices.Equal(got, []string{"items.0.kind"}) {
				t.Errorf("create with kind %v: issue paths %q", tt.kind, got)
			}
			if got := issuePaths(t, api.clDo(f, "POST", "/v1/collects/"+c.ID+"/items", map[string]any{"title": "x", "kind": tt.kind})); !slices.Equal(got, []string{"kind"}) {
				t.Errorf("add item with kind %v: issue paths %q", tt.kind, got)
			}
			if got := issuePaths(t, api.clDo(f, "PATCH", "/v1/collects/"+c.ID+"/items/"+statements.ID, map[string]any{"kind": tt.kind})); !slices.Equal(got, []string{"kind"}) {
				t.Errorf("update item with kind %v: issue paths %q", tt.kind, got)
			}
		}
		if after := api.clCount(t, f); after != before {
			t.Errorf("collects: %d before, %d after", before, after)
		}
		if got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK); len(got.Items) != 2 || *got.Items[0].Kind != "bank_statement" {
			t.Errorf("after refused changes: %+v", got.Items)
		}
	})

	s := api.clMustSession(t, f, c.ID, map[string]any{"expiresIn": 3600})
	payslip := api.clMustUpload(t, s.Token, statements.ID, flFilePart("payslip.pdf", "application/pdf", []byte("%PDF-1.7 payslip")))
	statement := api.clMustUpload(t, s.Token, statements.ID, flFilePart("statement.pdf", "application/pdf", []byte("%PDF-1.7 statement")))
	unreadable := api.clMustUpload(t, s.Token, statements.ID, flFilePart("letter.pdf", "application/pdf", []byte("%PDF-1.7 letter")))
	invoice := api.clMustUpload(t, s.Token, anything.ID, flFilePart("invoice.pdf", "application/pdf", []byte("%PDF-1.7 invoice")))

	type seen struct {
		kind     string
		mismatch bool
	}
	view := func() map[string]seen {
		t.Helper()
		res, v := api.clView(t, s.Token)
		if res.status != http.StatusOK {
			t.Fatalf("view: %d %s", res.status, res.body)
		}
		if k := v.Collect.Items[0].Kind; k == nil || *k != "bank_statement" {
			t.Errorf("the view's first item asks for %v, want bank_statement", k)
		}
		got := map[string]seen{}
		for _, it := range v.Collect.Items {
			for _, file := range it.Files {
				kind := "null"
				if file.Kind != nil {
					kind = *file.Kind
				}
				got[file.ID] = seen{kind, file.KindMismatch}
			}
		}
		return got
	}
	// Before the files are read, nothing is known and nothing is said.
	for id, got := range view() {
		if got != (seen{"null", false}) {
			t.Errorf("file %s before its reading: %+v", id, got)
		}
	}
	api.clFinishAnalyses(t, map[string]string{"payslip.pdf": "payslip", "statement.pdf": "bank_statement", "letter.pdf": "other", "invoice.pdf": "invoice"})
	want := map[string]seen{
		payslip.ID:    {"payslip", true},         // another known kind than the item asks for
		statement.ID:  {"bank_statement", false}, // what it asks for
		unreadable.ID: {"other", false},          // other says nothing of what it is instead
		invoice.ID:    {"invoice", false},        // the item asks for any kind
	}
	if got := view(); !maps.Equal(got, want) {
		t.Errorf("after reading: got %+v, want %+v", got, want)
	}

	// The page says it gently, in the collect's language.
	page := api.page("GET", "/collect/"+s.Token, nil, nil)
	if page.status != http.StatusOK || strings.Count(page.body, `class="kind-note"`) != 1 ||
		!strings.Contains(page.body, "This looks like a payslip; this item asks for bank statements. If it is the right file, you can leave it as it is.") {
		t.Errorf("the page: %d, %d notes\n%s", page.status, strings.Count(page.body, `class="kind-note"`), page.body)
	}
	for _, label := range []string{`<span class="file-kind">Payslip</span>`, `<span class="file-kind">Bank statement</span>`, `<span class="file-kind">Invoice</span>`} {
		if !strings.Contains(page.body, label) {
			t.Errorf("the page does not show %s", label)
		}
	}
	if strings.Contains(page.body, "data-reading") {
		t.Error("the page polls though every file is read")
	}
	if res := api.clDo(f, "PATCH", "/v1/collects/"+c.ID, map[string]any{"locale": "de"}); res.status != http.StatusOK {
		t.Fatalf("PATCH locale: %d %s", res.status, res.body)
	}
	de := api.page("GET", "/collect/"+s.Token, nil, nil)
	if !strings.Contains(de.body, "Das sieht nach einer Gehaltsabrechnung aus; hier sind Kontoauszüge gefragt.") {
		t.Errorf("the German page says no word of the payslip:\n%s", de.body)
	}

	// A person who says what the file is has the last word.
	res := api.do(request{method: "PATCH", path: "/v1/files/" + payslip.ID, key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"kind": "bank_statement"}})
	if res.status != http.StatusOK {
		t.Fatalf("set the kind: %d %s", res.status, res.body)
	}
	if got := view()[payslip.ID]; got != (seen{"bank_statement", false}) {
		t.Errorf("after a person set the kind: %+v", got)
	}

	// An item that asks for another kind, or for any, changes the verdict.
	res = api.clDo(f, "PATCH", "/v1/collects/"+c.ID+"/items/"+anything.ID, map[string]any{"kind": "receipt"})
	if got := clDecodeCollect(t, res, http.StatusOK); *got.Items[1].Kind != "receipt" {
		t.Fatalf("set an item's kind: %+v", got.Items[1])
	}
	if got := view()[invoice.ID]; got != (seen{"invoice", true}) {
		t.Errorf("an invoice for receipts: %+v", got)
	}
	res = api.clDo(f, "PATCH", "/v1/collects/"+c.ID+"/items/"+anything.ID, map[string]any{"kind": nil})
	if got := clDecodeCollect(t, res, http.StatusOK); got.Items[1].Kind != nil {
		t.Fatalf("clear an item's kind: %+v", got.Items[1])
	}
	if got := view()[invoice.ID]; got != (seen{"invoice", false}) {
		t.Errorf("an invoice for anything: %+v", got)
	}

	// A file still being read makes the page ask again.
	api.clMustUpload(t, s.Token, statements.ID, flFilePart("more.pdf", "application/pdf", []byte("%PDF-1.7 more")))
	page = api.page("GET", "/collect/"+s.Token, nil, nil)
	if !strings.Contains(page.body, `id="files-`+statements.ID+`" aria-live="polite" data-reading>`) ||
		strings.Contains(page.body, `id="files-`+anything.ID+`" aria-live="polite" data-reading>`) {
		t.Errorf("data-reading marks the wrong items:\n%s", page.body)
	}

	// Another firm and another client reach neither the item nor its kind.
	for _, other := range []struct{ key, clientID string }{
		{api.other.accountantKey, api.other.client.ID}, {api.accountantKey, api.otherClient.ID},
	} {
		res := api.do(request{method: "PATCH", path: "/v1/collects/" + c.ID + "/items/" + statements.ID, key: other.key,
			clientID: other.clientID, body: map[string]any{"kind": "payslip"}})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
	}
	if got := clDecodeCollect(t, api.clDo(f, "GET", "/v1/collects/"+c.ID, nil), http.StatusOK); *got.Items[0].Kind != "bank_statement" {
		t.Errorf("after another tenant's try: %v", *got.Items[0].Kind)
	}
}

// TestCollectKindStrings checks that both of the page's languages name every
// kind an item may ask for, alone, after "looks like" and as what is asked.
func TestCollectKindStrings(t *testing.T) {
	for _, lang := range collectLanguages {
		for _, kind := range db.ItemKinds {
			for _, key := range []string{"kind_", "kind_a_", "kind_many_"} {
				if collectStrings[lang][key+kind] == "" {
					t.Errorf("%s.json has no %s%s", lang, key, kind)
				}
			}
		}
	}
}
