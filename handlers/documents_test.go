package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/document"
)

// TestOpenAPIDocumentVocabulary: the OpenAPI document names the kinds and
// the fields of package document, in its order, wherever it lists them.
func TestOpenAPIDocumentVocabulary(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPISource)
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	var kinds []string
	for _, k := range schemas["DocumentKind"].Value.Enum {
		kinds = append(kinds, fmt.Sprint(k))
	}
	if !slices.Equal(kinds, document.Kinds) {
		t.Errorf("DocumentKind: got %v, want %v", kinds, document.Kinds)
	}
	fields := append(slices.Clone(document.FieldNames), "einvoice")
	if got := schemas["DocumentFields"].Value.Required; !slices.Equal(got, fields) {
		t.Errorf("DocumentFields' keys: got %v, want %v", got, fields)
	}
}

// dcList is a page of files as the API answers it.
type dcList struct {
	Data       []flFile `json:"data"`
	Pagination struct {
		Limit          int     `json:"limit"`
		Total          int     `json:"total"`
		NextCursor     *string `json:"nextCursor"`
		PreviousCursor *string `json:"previousCursor"`
	} `json:"pagination"`
}

// dcListFiles is GET /v1/files?query with the accountant key, for the
// client; it requires 200.
func (api *testAPI) dcListFiles(t *testing.T, clientID, query string) dcList {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/files?" + query, key: api.accountantKey, clientID: clientID})
	if res.status != http.StatusOK {
		t.Fatalf("GET /v1/files?%s: %d %s", query, res.status, res.body)
	}
	var page dcList
	res.decode(t, &page)
	return page
}

// dcNames are the names of the page's files, in order.
func dcNames(page dcList) []string {
	names := make([]string, len(page.Data))
	for i, f := range page.Data {
		names[i] = f.Name
	}
	return names
}

// dcAnalyze ends the analysis of every queued file as the worker would,
// with text as each file's text, keyed by name.
func (api *testAPI) dcAnalyze(t *testing.T, texts map[string]string, results map[string]db.AnalysisResult) {
	t.Helper()
	ctx := context.Background()
	for {
		jobs, err := api.store.ClaimAnalyses(ctx, db.LaneFast, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return
		}
		for _, job := range jobs {
			r, ok := results[job.Name]
			if !ok {
				source := db.TextFromPDF
				r = db.AnalysisResult{Status: db.AnalysisDone, Source: &source,
					Text: &db.FileText{Text: texts[job.Name], Pages: 1, Source: source}}
			}
			if _, ok, err := api.store.FinishAnalysis(ctx, job, r); err != nil || !ok {
				t.Fatalf("FinishAnalysis %s: %v, %v", job.Name, ok, err)
			}
		}
	}
}

func TestFileListAndSearch(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Accounts")
	other := api.mustCreateWorkspace(api.client.ID, "Payroll")
	texts := map[string]string{
		"telekom.pdf": "Telekom Deutschland GmbH Rechnung RE-2026-0042 USt-IdNr. DE123456789 Gesamtbetrag 59,90 EUR",
		"mueller.pdf": "Bäckerei Müller Kassenbon SUMME EUR 4,20 BAR",
		"bank.pdf":    "Sparkasse Kontoauszug Nr. 3 alter Kontostand neuer Kontostand",
		"payslip.pdf": "Entgeltabrechnung März 2026 Gehalt Müller GmbH",
	}
	var uploaded []flFile
	for _, name := range []string{"telekom.pdf", "mueller.pdf", "bank.pdf"} {
		uploaded = append(uploaded, api.flUploadBytes(t, api.client.ID, ws, name, []byte("%PDF-1.4 "+name)))
		api.clock.Advance(time.Minute)
	}
	uploaded = append(uploaded, api.flUploadBytes(t, api.client.ID, other, "payslip.pdf", []byte("%PDF-1.4 payslip")))
	// The other firm and the other client hold the same words: they must
	// never show.
	otherWS := api.mustCreateWorkspace(api.other.client.ID, "Theirs")
	api.flMustUpload(t, api.other.accountantKey, api.other.client.ID, flField("workspaceId", otherWS),
		flFilePart("telekom.pdf", "application/pdf", []byte("%PDF-1.4 theirs")))
	thirdWS := api.mustCreateWorkspace(api.otherClient.ID, "Third")
	api.flMustUpload(t, api.accountantKey, api.otherClient.ID, flField("workspaceId", thirdWS),
		flFilePart("mueller.pdf", "application/pdf", []byte("%PDF-1.4 third")))

	for _, f := range uploaded {
		if f.Analysis.Status != db.AnalysisPending || f.Kind != nil || f.DocumentDateSource != nil || string(f.Analysis.Fields) != "null" {
			t.Errorf("new file %s: analysis %+v, kind %v, documentDateSource %v; want pending with nothing found", f.Name, f.Analysis, f.Kind, f.DocumentDateSource)
		}
	}

	page := api.dcListFiles(t, api.client.ID, "")
	if got, want := dcNames(page), []string{"payslip.pdf", "bank.pdf", "mueller.pdf", "telekom.pdf"}; !slices.Equal(got, want) {
		t.Errorf("default list: %v, want %v", got, want)
	}
	if page.Pagination.Total != 4 || page.Pagination.Limit != 20 {
		t.Errorf("pagination: %+v", page.Pagination)
	}
	if got := dcNames(api.dcListFiles(t, api.client.ID, "workspaceId="+other)); !slices.Equal(got, []string{"payslip.pdf"}) {
		t.Errorf("workspace filter: %v", got)
	}
	if got := dcNames(api.dcListFiles(t, api.client.ID, "sort=name&order=asc")); !slices.Equal(got, []string{"bank.pdf", "mueller.pdf", "payslip.pdf", "telekom.pdf"}) {
		t.Errorf("by name: %v", got)
	}

	// Search reads the name until the text is there.
	if got := dcNames(api.dcListFiles(t, api.client.ID, "q=telekom")); !slices.Equal(got, []string{"telekom.pdf"}) {
		t.Errorf("q=telekom before analysis: %v", got)
	}
	api.dcAnalyze(t, texts, nil)

	search := func(q string) []string {
		t.Helper()
		return dcNames(api.dcListFiles(t, api.client.ID, "q="+url.QueryEscape(q)))
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"Telekom", []string{"telekom.pdf"}},
		{"telek", []string{"telekom.pdf"}},                 // the last word is a prefix
		{"muller", []string{"payslip.pdf", "mueller.pdf"}}, // accents fold
		{"MÜLLER kassenbon", []string{"mueller.pdf"}},      // every word must match
		{"RE-2026-0042", []string{"telekom.pdf"}},          // a number as written
		{"DE123456789", []string{"telekom.pdf"}},           // a VAT id
		{`"alter Kontostand"`, []string{"bank.pdf"}},       // a phrase
		{`"Kontostand alter"`, nil},                        // in its order
		{"rech", []string{"telekom.pdf"}},                  // prefix of a word of the text
		{"kontost sparkasse", nil},                         // only the last word is a prefix
		{"sparkasse kontost", []string{"bank.pdf"}},        //
		{"kontost", []string{"bank.pdf"}},                  //
		{"gmbh", []string{"payslip.pdf", "telekom.pdf"}},   // newest first
		{"nothing-here", nil},                              //
		{"theirs", nil},                                    // another firm's file
		{"Telekom OR Müller", nil},                         // no operators: OR is a word
		{"Telekom NOT", nil},                               //
		{`name:telekom`, nil},                              // no column filters
		{"*", nil},                                         // punctuation alone is refused below
	} {
		if tc.q == "*" {
			continue
		}
		if got := search(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("q=%q: %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := dcNames(api.dcListFiles(t, api.client.ID, "q=m%C3%BCller&workspaceId="+ws)); !slices.Equal(got, []string{"mueller.pdf"}) {
		t.Errorf("search within a workspace: %v", got)
	}
	// Relevance: a match in the name weighs more than one in the text.
	rel := dcNames(api.dcListFiles(t, api.client.ID, "q=mueller+OR&sort=relevance"))
	if len(rel) != 0 {
		t.Errorf("relevance of an unmatched search: %v", rel)
	}
	rel = dcNames(api.dcListFiles(t, api.client.ID, "q=muller&sort=relevance"))
	if len(rel) != 2 {
		t.Fatalf("relevance: %v", rel)
	}
	page = api.dcListFiles(t, api.client.ID, "q=muller&sort=relevance&limit=1")
	if page.Pagination.Total != 2 || page.Pagination.NextCursor == nil {
		t.Fatalf("relevance page 1: %+v", page.Pagination)
	}
	next := api.dcListFiles(t, api.client.ID, "q=muller&sort=relevance&limit=1&cursor="+*page.Pagination.NextCursor)
	if got := append(dcNames(page), dcNames(next)...); !slices.Equal(got, rel) {
		t.Errorf("relevance pages: %v, want %v", got, rel)
	}
	if next.Pagination.PreviousCursor == nil || *next.Pagination.PreviousCursor != page.Data[0].ID {
		t.Errorf("relevance page 2's previous cursor: %v", next.Pagination.PreviousCursor)
	}

	// The other client and the other firm see only their own.
	for _, tc := range []struct {
		key, client, q string
		want           []string
	}{
		{api.accountantKey, api.otherClient.ID, "", []string{"mueller.pdf"}},
		{api.otherClientClientKey, api.otherClient.ID, "q=telekom", nil},
		{api.other.accountantKey, api.other.client.ID, "q=muller", nil},
		{api.other.clientKey, api.other.client.ID, "", []string{"telekom.pdf"}},
	} {
		res := api.do(request{method: "GET", path: "/v1/files?" + tc.q, key: tc.key, clientID: tc.client})
		var page dcList
		res.decode(t, &page)
		if got := dcNames(page); res.status != http.StatusOK || !slices.Equal(got, tc.want) {
			t.Errorf("%s as another tenant: %d %v, want %v", tc.q, res.status, got, tc.want)
		}
	}
	// A client key cannot name a file of its firm's other client.
	res := api.do(request{method: "GET", path: "/v1/files", key: api.otherClientClientKey, clientID: api.client.ID})
	wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
}

func TestFileListPaging(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Accounts")
	for i := range 7 {
		name := fmt.Sprintf("doc-%d.pdf", i)
		api.flUploadBytes(t, api.client.ID, ws, name, []byte("%PDF-1.4 "+name))
		api.clock.Advance(time.Second)
	}
	for _, sort := range []string{"createdAt", "updatedAt", "documentDate", "name", "size"} {
		for _, order := range []string{"asc", "desc"} {
			all := dcNames(api.dcListFiles(t, api.client.ID, "limit=100&sort="+sort+"&order="+order))
			var walked []string
			query := "limit=3&sort=" + sort + "&order=" + order
			page := api.dcListFiles(t, api.client.ID, query)
			for {
				walked = append(walked, dcNames(page)...)
				if page.Pagination.Total != 7 {
					t.Errorf("%s: total %d, want 7", query, page.Pagination.Total)
				}
				if page.Pagination.NextCursor == nil {
					break
				}
				next := api.dcListFiles(t, api.client.ID, query+"&cursor="+*page.Pagination.NextCursor)
				if next.Pagination.PreviousCursor == nil || *next.Pagination.PreviousCursor != page.Data[0].ID {
					t.Errorf("%s: previous cursor %v, want %s", query, next.Pagination.PreviousCursor, page.Data[0].ID)
				}
				page = next
			}
			if !slices.Equal(walked, all) || len(all) != 7 {
				t.Errorf("%s: walked %v, want %v", query, walked, all)
			}
		}
	}
	res := api.do(request{method: "GET", path: "/v1/files?cursor=cnosuchfile00000000000000", key: api.accountantKey, clientID: api.client.ID})
	wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", "")
}

func TestFileListFilters(t *testing.T) {
	api := newTestAPI(t)
	ctx := context.Background()
	ws := api.mustCreateWorkspace(api.client.ID, "Accounts")
	folder := api.mustCreateFolder(api.client.ID, ws, "Receipts")
	label := api.flLabel(t, api.client.ID, ws, "Q1")
	task, err := api.store.CreateTask(ctx, api.client.ID, db.TaskCreate{WorkspaceID: ws, Title: "March"})
	if err != nil {
		t.Fatal(err)
	}
	api.flUploadBytes(t, api.client.ID, ws, "plain.pdf", []byte("%PDF-1.4 a"))
	api.clock.Advance(time.Minute)
	filed := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flField("folderId", folder),
		flField("taskId", task.ID), flField("labelIds", label), flField("documentDate", "2026-03-05T00:00:00Z"),
		flFilePart("filed.pdf", "application/pdf", []byte("%PDF-1.4 b")))
	if filed.DocumentDateSource == nil || *filed.DocumentDateSource != db.SourceUser {
		t.Errorf("an uploader's date: documentDateSource %v, want user", filed.DocumentDateSource)
	}
	kind := "receipt"
	api.dcAnalyze(t, nil, map[string]db.AnalysisResult{"plain.pdf": {Status: db.AnalysisDone, Kind: &kind}, "filed.pdf": {Status: db.AnalysisDone}})
	// The banking worker decides a document's direction; here the store is
	// told it.
	issued := db.DirectionIssued
	if err := api.store.RecordPayments(ctx, api.client.ID, []db.PaymentUpdate{{FileID: filed.ID, Payment: db.Payment{Direction: &issued}}}); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string][]string{
		"direction=issued":                                      {"filed.pdf"},
		"direction=received":                                    nil,
		"folderId=" + folder:                                    {"filed.pdf"},
		"taskId=" + task.ID:                                     {"filed.pdf"},
		"labelId=" + label:                                      {"filed.pdf"},
		"kind=receipt":                                          {"plain.pdf"},
		"kind=invoice":                                          nil,
		"documentDateFrom=2026-03-05T00:00:00Z":                 {"filed.pdf", "plain.pdf"},
		"documentDateTo=2026-03-05T00:00:00Z":                   {"filed.pdf"},
		"documentDateTo=2026-03-04T23:59:59Z":                   nil,
		"documentDateFrom=2026-03-05T01:00:00%2B01:00":          {"filed.pdf", "plain.pdf"},
		"documentDateFrom=2026-03-05":                           {"filed.pdf", "plain.pdf"},
		"documentDateTo=2026-03-05":                             {"filed.pdf"},
		"documentDateTo=2026-03-04":                             nil,
		"documentDateFrom=2026-03-05&documentDateTo=2026-03-05": {"filed.pdf"},
	} {
		if got := dcNames(api.dcListFiles(t, api.client.ID, query)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}

	for _, tc := range []struct {
		query string
		path  []any
		code  string
	}{
		{"sort=relevance", []any{"query", "sort"}, "custom"},
		{"sort=title", []any{"query", "sort"}, "invalid_enum_value"},
		{"kind=letter", []any{"query", "kind"}, "invalid_enum_value"},
		{"direction=sent", []any{"query", "direction"}, "invalid_enum_value"},
		{"q=" + url.QueryEscape("--- !!"), []any{"query", "q"}, "custom"},
		{"q=" + strings.Repeat("a", 501), []any{"query", "q"}, "too_big"},
		{"q=" + strings.Repeat("a+", 33), []any{"query", "q"}, "custom"},
		{"q=%FF", []any{"query", "q"}, "too_big"},
		{"documentDateFrom=2026-02-30", []any{"query", "documentDateFrom"}, "invalid_string"},
		{"documentDateFrom=2026-3-5", []any{"query", "documentDateFrom"}, "invalid_string"},
		{"documentDateTo=yesterday", []any{"query", "documentDateTo"}, "invalid_string"},
		{"folderId=not-a-cuid", []any{"query", "folderId"}, "invalid_string"},
		{"limit=0", []any{"query", "limit"}, "too_small"},
	} {
		res := api.do(request{method: "GET", path: "/v1/files?" + tc.query, key: api.accountantKey, clientID: api.client.ID})
		if res.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", tc.query, res.status, res.body)
			continue
		}
		var body struct {
			Error struct {
				Issues []issue `json:"issues"`
			} `json:"error"`
		}
		res.decode(t, &body)
		if len(body.Error.Issues) != 1 || body.Error.Issues[0].Code != tc.code || fmt.Sprint(body.Error.Issues[0].Path) != fmt.Sprint(tc.path) {
			t.Errorf("%s: issues %+v, want one %s at %v", tc.query, body.Error.Issues, tc.code, tc.path)
		}
	}
	// Without files:read.
	key := api.mustMintKeyWith(t, "tasks:read")
	res := api.do(request{method: "GET", path: "/v1/files", key: key, clientID: api.client.ID})
	wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "")
	res = api.do(request{method: "GET", path: "/v1/files", key: api.accountantKey})
	wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", "")
	res = api.do(request{method: "GET", path: "/v1/files", clientID: api.client.ID})
	if res.status != http.StatusUnauthorized {
		t.Errorf("without a key: %d", res.status)
	}
}

// mustMintKeyWith mints an accountant key of the first firm holding only
// the permissions.
func (api *testAPI) mustMintKeyWith(t *testing.T, permissions ...string) string {
	t.Helper()
	return api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: permissions})
}

func TestFileUpdate(t *testing.T) {
	api := newTestAPI(t)
	ctx := context.Background()
	ws := api.mustCreateWorkspace(api.client.ID, "Accounts")
	elsewhere := api.mustCreateWorkspace(api.client.ID, "Payroll")
	folder := api.mustCreateFolder(api.client.ID, ws, "Receipts")
	foreignFolder := api.mustCreateFolder(api.client.ID, elsewhere, "Wages")
	label := api.flLabel(t, api.client.ID, ws, "Q1")
	label2 := api.flLabel(t, api.client.ID, ws, "Paid")
	task, err := api.store.CreateTask(ctx, api.client.ID, db.TaskCreate{WorkspaceID: ws, Title: "March"})
	if err != nil {
		t.Fatal(err)
	}
	f := api.flUploadBytes(t, api.client.ID, ws, "scan.pdf", []byte("%PDF-1.4 scan"))
	patch := func(key, clientID, id string, body any) *response {
		return api.do(request{method: "PATCH", path: "/v1/files/" + id, key: key, clientID: clientID, body: body})
	}
	api.clock.Advance(time.Hour)
	res := patch(api.accountantKey, api.client.ID, f.ID, map[string]any{
		"name": "  Telekom March.pdf ", "kind": "invoice", "documentDate": "2026-03-05T10:00:00+01:00",
		"folderId": folder, "taskId": task.ID, "labelIds": []string{label2, label, label2},
	})
	got := flDecodeFile(t, res, http.StatusOK)
	if got.Name != "Telekom March.pdf" || *got.Kind != "invoice" || got.DocumentDate != "2026-03-05T09:00:00Z" ||
		*got.DocumentDateSource != "user" || *got.FolderID != folder || *got.TaskID != task.ID ||
		!slices.Equal(got.LabelIDs, flSort(label, label2)) || got.UpdatedAt == f.UpdatedAt || got.CreatedAt != f.CreatedAt {
		t.Errorf("after the patch: %+v", got)
	}
	if again := flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK); !slices.Equal(again.LabelIDs, got.LabelIDs) || again.Name != got.Name {
		t.Errorf("GET after the patch: %+v", again)
	}
	// The new name is searched.
	if names := dcNames(api.dcListFiles(t, api.client.ID, "q=telekom")); !slices.Equal(names, []string{"Telekom March.pdf"}) {
		t.Errorf("search for the new name: %v", names)
	}

	// The analysis leaves a person's kind and date alone.
	receipt, issued := "receipt", "2026-04-01"
	api.dcAnalyze(t, nil, map[string]db.AnalysisResult{"Telekom March.pdf": {Status: db.AnalysisDone, Kind: &receipt,
		Fields: &db.DocumentFields{Values: map[string]string{document.IssueDate: issued}}}})
	got = flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK)
	if *got.Kind != "invoice" || got.DocumentDate != "2026-03-05T09:00:00Z" || got.Analysis.Status != "done" {
		t.Errorf("a person's values after the analysis: kind %v, date %s, analysis %+v", *got.Kind, got.DocumentDate, got.Analysis)
	}
	// Clearing them gives back what the analysis found.
	got = flDecodeFile(t, patch(api.accountantKey, api.client.ID, f.ID, map[string]any{"kind": nil, "documentDate": nil, "folderId": nil, "taskId": nil, "labelIds": []string{}}), http.StatusOK)
	if *got.Kind != "receipt" || got.DocumentDate != "2026-04-01T00:00:00Z" || *got.DocumentDateSource != "analysis" ||
		got.FolderID != nil || got.TaskID != nil || len(got.LabelIDs) != 0 {
		t.Errorf("after clearing: %+v", got)
	}

	// Errors change nothing.
	before := api.flGetFile(api.accountantKey, api.client.ID, f.ID).body
	for _, tc := range []struct {
		body   any
		status int
	}{
		{map[string]any{"name": nil}, http.StatusUnprocessableEntity},
		{map[string]any{"name": ""}, http.StatusUnprocessableEntity},
		{map[string]any{"name": strings.Repeat("x", 256)}, http.StatusUnprocessableEntity},
		{map[string]any{"name": 7}, http.StatusUnprocessableEntity},
		{map[string]any{"kind": "letter"}, http.StatusUnprocessableEntity},
		{map[string]any{"documentDate": "March"}, http.StatusUnprocessableEntity},
		{map[string]any{"labelIds": nil}, http.StatusUnprocessableEntity},
		{map[string]any{"labelIds": []string{"bad"}}, http.StatusUnprocessableEntity},
		{map[string]any{"folderId": foreignFolder}, http.StatusNotFound},
		{map[string]any{"taskId": "cnosuchtask00000000000000"}, http.StatusNotFound},
		{map[string]any{"name": "ok.pdf", "labelIds": []string{label, "cnosuchlabel0000000000000"}}, http.StatusNotFound},
		{"{", http.StatusBadRequest},
	} {
		res := patch(api.accountantKey, api.client.ID, f.ID, tc.body)
		if res.status != tc.status {
			t.Errorf("%v: %d %s, want %d", tc.body, res.status, res.body, tc.status)
		}
	}
	if after := api.flGetFile(api.accountantKey, api.client.ID, f.ID).body; string(after) != string(before) {
		t.Errorf("a refused patch changed the file:\n%s\n%s", before, after)
	}
	// Another client's and another firm's keys cannot reach it.
	wantError(t, patch(api.otherClientClientKey, api.otherClient.ID, f.ID, map[string]any{"name": "x"}), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, patch(api.other.accountantKey, api.other.client.ID, f.ID, map[string]any{"name": "x"}), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, patch(api.accountantKey, api.client.ID, "cnosuchfile00000000000000", map[string]any{"name": "x"}), http.StatusNotFound, "not_found", "not_found", "")
	readOnly := api.mustMintKeyWith(t, "files:read")
	wantError(t, patch(readOnly, api.client.ID, f.ID, map[string]any{"name": "x"}), http.StatusForbidden, "auth_error", "missing_scope", "")
}

func TestFileTextAndAnalysis(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Accounts")
	f := api.flUploadBytes(t, api.client.ID, ws, "a.pdf", []byte("%PDF-1.4 a"))
	text := func(key, clientID, id string) *response {
		return api.do(request{method: "GET", path: "/v1/files/" + id + "/text", key: key, clientID: clientID})
	}
	wantError(t, text(api.accountantKey, api.client.ID, f.ID), http.StatusNotFound, "not_found", "not_found", "")
	api.dcAnalyze(t, map[string]string{"a.pdf": "page one\fpage two"}, nil)
	res := text(api.accountantKey, api.client.ID, f.ID)
	var body struct {
		Text   string `json:"text"`
		Pages  int    `json:"pages"`
		Source string `json:"source"`
	}
	res.decode(t, &body)
	if res.status != http.StatusOK || body.Text != "page one\fpage two" || body.Source != "text" || body.Pages != 1 {
		t.Errorf("text: %d %s", res.status, res.body)
	}
	wantError(t, text(api.otherClientClientKey, api.otherClient.ID, f.ID), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, text(api.other.accountantKey, api.other.client.ID, f.ID), http.StatusNotFound, "not_found", "not_found", "")

	// Read again: pending, with what the last reading found, until it ends.
	analyze := func(key, clientID, id string) *response {
		return api.do(request{method: "POST", path: "/v1/files/" + id + "/analysis", key: key, clientID: clientID})
	}
	got := flDecodeFile(t, analyze(api.accountantKey, api.client.ID, f.ID), http.StatusAccepted)
	if got.Analysis.Status != "pending" || got.Analysis.Source == nil {
		t.Errorf("queued again: %+v", got.Analysis)
	}
	failed := "the file is truncated or damaged"
	api.dcAnalyze(t, nil, map[string]db.AnalysisResult{"a.pdf": {Status: db.AnalysisFailed, Reason: &failed}})
	got = flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK)
	if got.Analysis.Status != "failed" || *got.Analysis.Reason != failed || got.Analysis.AnalyzedAt == nil || string(got.Analysis.Fields) != "null" {
		t.Errorf("failed: %+v", got.Analysis)
	}
	wantError(t, text(api.accountantKey, api.client.ID, f.ID), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, analyze(api.other.accountantKey, api.other.client.ID, f.ID), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, analyze(api.mustMintKeyWith(t, "files:read"), api.client.ID, f.ID), http.StatusForbidden, "auth_error", "missing_scope", "")
	res = analyze(api.accountantKey, api.client.ID, "bad")
	if res.status != http.StatusUnprocessableEntity {
		t.Errorf("a bad id: %d", res.status)
	}
	// Every key of fields is there once a reading ended done.
	api.do(request{method: "POST", path: "/v1/files/" + f.ID + "/analysis", key: api.accountantKey, clientID: api.client.ID})
	api.dcAnalyze(t, map[string]string{"a.pdf": "x"}, nil)
	got = flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK)
	var fields map[string]any
	if err := json.Unmarshal(got.Analysis.Fields, &fields); err != nil || len(fields) != 11 {
		t.Errorf("fields of a done analysis: %s", got.Analysis.Fields)
	}
}
