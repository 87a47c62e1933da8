package handlers

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"acctapi/db"
	"acctapi/document"
)

// TestFileCorrections: a person corrects fields; they are marked theirs,
// sure, searched, and kept through a later reading; bad corrections
// change nothing.
func TestFileCorrections(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Accounts")
	f := api.flUploadBytes(t, api.client.ID, ws, "inv.pdf", []byte("%PDF-1.4 inv"))
	text, source := db.TextFromPDF, db.TextFromPDF
	read := db.AnalysisResult{Status: db.AnalysisDone, Source: &source,
		Fields: &db.DocumentFields{Values: map[string]string{document.TotalAmount: "99.00", document.DueDate: "2026-04-01",
			document.IssuerName: "Acme GmbH"}},
		Confidence: map[string]float64{document.TotalAmount: 0.6, document.DueDate: 0.6, document.IssuerName: 0.5},
		Warnings:   []string{"The IBAN X fails its check digits."},
		Text:       &db.FileText{Text: "Acme GmbH\nRechnung\nGesamt 99,00", Pages: 1, Source: text}}
	api.dcAnalyze(t, nil, map[string]db.AnalysisResult{"inv.pdf": read})
	patch := func(key, clientID, id string, body any) *response {
		return api.do(request{method: "PATCH", path: "/v1/files/" + id, key: key, clientID: clientID, body: body})
	}
	fieldsOf := func(got flFile) map[string]*string {
		var out map[string]*string
		if err := json.Unmarshal(got.Analysis.Fields, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	got := flDecodeFile(t, patch(api.accountantKey, api.client.ID, f.ID, map[string]any{"fields": map[string]any{
		"totalAmount": "123.45", "issuerIban": "de89 3704 0044 0532 0130 00", "dueDate": nil, "issueDate": "2026-03-05",
	}}), http.StatusOK)
	check := func(when string, got flFile) {
		t.Helper()
		values := fieldsOf(got)
		if str(values["totalAmount"]) != "123.45" || str(values["issuerIban"]) != "DE89370400440532013000" ||
			values["dueDate"] != nil || str(values["issuerName"]) != "Acme GmbH" {
			t.Errorf("%s: fields %s", when, got.Analysis.Fields)
		}
		for _, name := range document.FieldNames {
			want := "analysis"
			if slices.Contains([]string{"totalAmount", "issuerIban", "dueDate", "issueDate"}, name) {
				want = "user"
			}
			if got.Analysis.FieldSources[name] != want {
				t.Errorf("%s: fieldSources[%s]: got %q, want %q", when, name, got.Analysis.FieldSources[name], want)
			}
		}
		wantConfidence := map[string]float64{"totalAmount": 1, "issuerIban": 1, "issueDate": 1, "issuerName": 0.5}
		if !mapsEqual(got.Analysis.Confidence, wantConfidence) {
			t.Errorf("%s: confidence %v, want %v", when, got.Analysis.Confidence, wantConfidence)
		}
		if got.DocumentDate != "2026-03-05T00:00:00Z" || str(got.DocumentDateSource) != "user" {
			t.Errorf("%s: document date %s (%s), want the corrected issue date, the person's", when, got.DocumentDate, str(got.DocumentDateSource))
		}
	}
	check("after the correction", got)
	if got.Analysis.Warnings == nil || len(got.Analysis.Warnings) != 1 {
		t.Errorf("warnings: %v", got.Analysis.Warnings)
	}
	// Search finds what a person set.
	if names := dcNames(api.dcListFiles(t, api.client.ID, "q=DE89370400440532013000")); !slices.Equal(names, []string{"inv.pdf"}) {
		t.Errorf("search for the corrected IBAN: %v", names)
	}
	// A later reading never overwrites it.
	if _, err := api.store.QueueAnalysis(t.Context(), api.client.ID, f.ID); err != nil {
		t.Fatal(err)
	}
	again := read
	again.Fields = &db.DocumentFields{Values: map[string]string{document.TotalAmount: "1.00", document.IssuerIBAN: "DE00",
		document.DueDate: "2026-05-01", document.IssuerName: "Acme GmbH", document.IssueDate: "2026-01-01"}}
	api.dcAnalyze(t, nil, map[string]db.AnalysisResult{"inv.pdf": again})
	check("after reading again", flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK))

	// Bad corrections are refused naming the field, and change nothing.
	before := api.flGetFile(api.accountantKey, api.client.ID, f.ID).body
	for _, tc := range []struct {
		fields any
		path   string
	}{
		{map[string]any{"issueDate": "2026-02-30"}, "fields.issueDate"},
		{map[string]any{"dueDate": "05.03.2026"}, "fields.dueDate"},
		{map[string]any{"totalAmount": "1.2.3"}, "fields.totalAmount"},
		{map[string]any{"netAmount": "1,50"}, "fields.netAmount"},
		{map[string]any{"taxAmount": 19}, "fields.taxAmount"},
		{map[string]any{"currency": "euro"}, "fields.currency"},
		{map[string]any{"currency": "eur"}, "fields.currency"},
		{map[string]any{"colour": "red"}, "fields.colour"},
		{map[string]any{"documentNumber": ""}, "fields.documentNumber"},
		{map[string]any{"issuerVatId": "DE 12/34"}, "fields.issuerVatId"},
		{map[string]any{"issuerName": strings.Repeat("x", 501)}, "fields.issuerName"},
		{"totalAmount", "fields"},
	} {
		res := patch(api.accountantKey, api.client.ID, f.ID, map[string]any{"name": "renamed.pdf", "fields": tc.fields})
		if paths := issuePaths(t, res); !slices.Equal(paths, []string{tc.path}) {
			t.Errorf("%v: issues at %v, want %s", tc.fields, paths, tc.path)
		}
	}
	if after := api.flGetFile(api.accountantKey, api.client.ID, f.ID).body; string(after) != string(before) {
		t.Errorf("a refused correction changed the file:\n%s\n%s", before, after)
	}
	// Another client's and another firm's keys cannot correct it.
	body := map[string]any{"fields": map[string]any{"totalAmount": "1.00"}}
	wantError(t, patch(api.otherClientClientKey, api.otherClient.ID, f.ID, body), http.StatusNotFound, "not_found", "not_found", "")
	wantError(t, patch(api.other.accountantKey, api.other.client.ID, f.ID, body), http.StatusNotFound, "not_found", "not_found", "")
}

// TestCorrectedIssueDateDatesTheFile: a person's issue date dates the file
// as theirs and moves it again when corrected again; a date the person set
// themselves stays against a correction of the issue date and a later
// reading, and clearing it gives back the issue date's; an issue date the
// person cleared leaves the upload time.
func TestCorrectedIssueDateDatesTheFile(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Accounts")
	f := api.flUploadBytes(t, api.client.ID, ws, "inv.pdf", []byte("%PDF-1.4 inv"))
	source := db.TextFromPDF
	read := db.AnalysisResult{Status: db.AnalysisDone, Source: &source,
		Fields:     &db.DocumentFields{Values: map[string]string{document.IssueDate: "2026-01-10"}},
		Confidence: map[string]float64{document.IssueDate: 0.9},
		Text:       &db.FileText{Text: "Rechnung vom 10.01.2026", Pages: 1, Source: source}}
	api.dcAnalyze(t, nil, map[string]db.AnalysisResult{"inv.pdf": read})
	patch := func(body any) flFile {
		t.Helper()
		return flDecodeFile(t, api.do(request{method: "PATCH", path: "/v1/files/" + f.ID, key: api.accountantKey,
			clientID: api.client.ID, body: body}), http.StatusOK)
	}
	want := func(when string, got flFile, date, source string) {
		t.Helper()
		if got.DocumentDate != date+"T00:00:00Z" || str(got.DocumentDateSource) != source {
			t.Errorf("%s: document date %s (%s), want %s (%s)", when, got.DocumentDate, str(got.DocumentDateSource), date, source)
		}
	}
	want("read", flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK), "2026-01-10", "analysis")
	want("corrected", patch(map[string]any{"fields": map[string]any{"issueDate": "2026-01-12"}}), "2026-01-12", "user")
	want("corrected again", patch(map[string]any{"fields": map[string]any{"issueDate": "2026-01-14"}}), "2026-01-14", "user")
	if _, err := api.store.QueueAnalysis(t.Context(), api.client.ID, f.ID); err != nil {
		t.Fatal(err)
	}
	api.dcAnalyze(t, nil, map[string]db.AnalysisResult{"inv.pdf": read})
	want("read again", flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK), "2026-01-14", "user")
	if got := patch(map[string]any{"fields": map[string]any{"issueDate": nil}}); got.DocumentDate != f.CreatedAt || got.DocumentDateSource != nil {
		t.Errorf("the issue date cleared: document date %s (%s), want the upload's %s", got.DocumentDate, str(got.DocumentDateSource), f.CreatedAt)
	}
	want("set and corrected at once", patch(map[string]any{"documentDate": "2026-02-01T00:00:00Z",
		"fields": map[string]any{"issueDate": "2026-01-20"}}), "2026-02-01", "user")
	want("the person's date kept", patch(map[string]any{"fields": map[string]any{"issueDate": "2026-01-21"}}), "2026-02-01", "user")
	want("the person's date cleared", patch(map[string]any{"documentDate": nil}), "2026-01-21", "user")
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// str is *s, or "" for nil.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
