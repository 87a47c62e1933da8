package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"acctapi/datev/datevtest"
	"acctapi/exports"
)

// runExports writes the queued exports, as the server's worker does.
func (api *testAPI) runExports(t testing.TB) {
	t.Helper()
	files, ok := api.handler.files.(exports.Files)
	if !ok {
		t.Fatalf("the test's file store %T cannot hold exports", api.handler.files)
	}
	w := exports.New(exports.Options{Store: api.store, Files: files, Now: api.clock.Now})
	if _, err := w.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// exDocument uploads a document of the client dated day in March 2026 and
// corrects its kind and fields as a person would.
func (api *testAPI) exDocument(t *testing.T, key, clientID, ws, name, kind string, day int, fields map[string]string) string {
	t.Helper()
	f := api.flMustUpload(t, key, clientID, flFilePart(name, "application/pdf", []byte("%PDF-1.4 "+name)),
		flField("workspaceId", ws), flField("documentDate", fmt.Sprintf("2026-03-%02dT00:00:00Z", day)))
	res := api.do(request{method: "PATCH", path: "/v1/files/" + f.ID, key: key, clientID: clientID,
		body: map[string]any{"kind": kind, "fields": fields}})
	if res.status != http.StatusOK {
		t.Fatalf("correct %s: got %d %s", name, res.status, res.body)
	}
	return f.ID
}

type exExport struct {
	ID                 string `json:"id"`
	Status             string `json:"status"`
	DocumentCount      int    `json:"documentCount"`
	RowCount           int    `json:"rowCount"`
	Skipped            []struct{ FileID, Reason string }
	ChangedSinceExport []string `json:"changedSinceExport"`
}

func exDecode[T any](t *testing.T, res *response, status int) T {
	t.Helper()
	var v T
	if res.status != status {
		t.Fatalf("got %d %s, want %d", res.status, res.body, status)
	}
	if err := json.Unmarshal(res.body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// wantIssue requires a 422 whose issue says want.
func wantIssue(t *testing.T, res *response, want string) {
	t.Helper()
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), want) {
		t.Errorf("got %d %s, want 422 saying %q", res.status, res.body, want)
	}
}

func TestDATEVExport(t *testing.T) {
	api := newTestAPI(t)
	key, client := api.accountantKey, api.client.ID
	ws := api.mustCreateWorkspace(client, "Belege")
	march := map[string]any{"format": "datev", "from": "2026-03-01", "to": "2026-03-31"}
	exportMarch := func() *response {
		return api.do(request{method: "POST", path: "/v1/exports", key: key, clientID: client, body: march})
	}

	t.Run("a client key is refused", func(t *testing.T) {
		for _, req := range []request{
			{method: "GET", path: "/v1/ledger-settings"}, {method: "PUT", path: "/v1/ledger-settings", body: map[string]any{}},
			{method: "GET", path: "/v1/counterparties"}, {method: "POST", path: "/v1/exports", body: march},
			{method: "GET", path: "/v1/exports"},
		} {
			req.key, req.clientID = api.clientKey, client
			if res := api.do(req); res.status != http.StatusForbidden {
				t.Errorf("%s %s with a client key: got %d, want 403", req.method, req.path, res.status)
			}
		}
	})

	t.Run("missing settings are named", func(t *testing.T) {
		res := exportMarch()
		for _, name := range []string{"chart", "consultantNumber", "clientNumber"} {
			wantIssue(t, res, `["ledgerSettings","`+name+`"]`)
		}
		if res := api.do(request{method: "PUT", path: "/v1/ledger-settings", key: key, clientID: client,
			body: map[string]any{"chart": "SKR03"}}); res.status != http.StatusOK {
			t.Fatalf("PUT: %d %s", res.status, res.body)
		}
		res = exportMarch()
		wantIssue(t, res, "lack consultantNumber")
		if strings.Contains(string(res.body), "lack chart") {
			t.Errorf("a set chart named missing: %s", res.body)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"chart":"SKR99"}`: "chart", `{"consultantNumber":5}`: "consultantNumber", `{"accountLength":9}`: "accountLength",
			`{"fiscalYearStart":"13-01"}`: "fiscalYearStart", `{"defaultExpenseAccount":"49a0"}`: "defaultExpenseAccount",
			`{"bankAccounts":[{"accountId":"cnosuchaccount00000000000","ledgerAccount":"1200"}]}`: "bank account",
		} {
			res := api.do(request{method: "PUT", path: "/v1/ledger-settings", key: key, clientID: client, body: body})
			if res.status != http.StatusUnprocessableEntity && res.status != http.StatusNotFound || !strings.Contains(string(res.body), want) {
				t.Errorf("PUT %s: got %d %s, want 422 or 404 naming %s", body, res.status, res.body, want)
			}
		}
		for body, want := range map[string]string{
			`{"format":"csv","from":"2026-03-01","to":"2026-03-31"}`: "format", `{"format":"datev","from":"2026-3-1","to":"2026-03-31"}`: "from",
			`{"format":"datev","from":"2026-03-01"}`: "to",
		} {
			wantIssue(t, api.do(request{method: "POST", path: "/v1/exports", key: key, clientID: client, body: body}), want)
		}
	})

	settings := map[string]any{"chart": "SKR03", "consultantNumber": 29098, "clientNumber": 55003, "fiscalYearStart": "01-01", "accountLength": 4}
	got := exDecode[map[string]any](t, api.do(request{method: "PUT", path: "/v1/ledger-settings", key: key, clientID: client, body: settings}), http.StatusOK)
	if got["chart"] != "SKR03" || got["consultantNumber"] != 29098.0 {
		t.Errorf("PUT: got %v", got)
	}

	t.Run("a period crossing the fiscal year", func(t *testing.T) {
		wantIssue(t, api.do(request{method: "POST", path: "/v1/exports", key: key, clientID: client,
			body: map[string]any{"format": "datev", "from": "2026-12-01", "to": "2027-01-31"}}), "fiscal year")
	})

	bakery := api.exDocument(t, key, client, ws, "baeckerei.pdf", "invoice", 5, map[string]string{"documentNumber": "RE 2026.001",
		"issuerName": "Bäckerei Müller GmbH", "netAmount": "150.00", "taxAmount": "22.50", "totalAmount": "172.50"})
	noNumber := api.exDocument(t, key, client, ws, "parken.pdf", "receipt", 6, map[string]string{"issuerName": "Parkhaus €", "totalAmount": "3.00"})

	e := exDecode[exExport](t, exportMarch(), http.StatusAccepted)
	if e.Status != "queued" {
		t.Errorf("POST: status %s, want queued", e.Status)
	}
	api.runExports(t)
	e = exDecode[exExport](t, api.do(request{method: "GET", path: "/v1/exports/" + e.ID, key: key, clientID: client}), http.StatusOK)
	if e.Status != "done" || e.DocumentCount != 1 || e.RowCount != 2 || len(e.Skipped) != 1 || e.Skipped[0].FileID != noNumber {
		t.Errorf("export: %+v, want done with the bakery's two rows and the receipt without a number skipped", e)
	}

	t.Run("the ZIP through the signed link", func(t *testing.T) {
		link := exDecode[struct{ URL string }](t, api.do(request{method: "GET", path: "/v1/exports/" + e.ID + "/content", key: key, clientID: client}), http.StatusOK)
		u, err := url.Parse(link.URL)
		if err != nil || !strings.HasSuffix(u.Path, "/v1/exports/"+e.ID+"/download") {
			t.Fatalf("link %q", link.URL)
		}
		res := api.flDownload(t, api.server.URL+u.Path+"?"+u.RawQuery, nil)
		if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/zip" {
			t.Fatalf("download: %d %s", res.status, res.header.Get("Content-Type"))
		}
		zip, err := datevtest.Validate(res.body)
		if err != nil {
			t.Fatalf("Validate: %v", err)
		}
		if len(zip.Rows) != 2 || zip.Rows[0].Amount+zip.Rows[1].Amount != 17250 {
			t.Errorf("rows: %+v, want the invoice's two rates adding up to 172,50", zip.Rows)
		}
		forged := api.flDownload(t, api.server.URL+u.Path+"?expires=1&signature=x", nil)
		if forged.status != http.StatusForbidden {
			t.Errorf("a forged link: got %d, want 403", forged.status)
		}
	})

	t.Run("counterparties and their accounts", func(t *testing.T) {
		list := exDecode[struct{ Data []map[string]any }](t, api.do(request{method: "GET", path: "/v1/counterparties", key: key, clientID: client}), http.StatusOK)
		if len(list.Data) != 1 || list.Data[0]["account"] != 70000.0 || list.Data[0]["name"] != "Bäckerei Müller GmbH" || list.Data[0]["documentCount"] != 1.0 {
			t.Fatalf("counterparties: %v", list.Data)
		}
		id := list.Data[0]["id"].(string)
		patch := func(body any) *response {
			return api.do(request{method: "PATCH", path: "/v1/counterparties/" + id, key: key, clientID: client, body: body})
		}
		wantIssue(t, patch(map[string]any{"account": 10001}), "account")
		if res := patch(map[string]any{"account": 70123, "name": "Bäckerei Müller"}); res.status != http.StatusOK {
			t.Errorf("PATCH: %d %s", res.status, res.body)
		}
		if res := api.do(request{method: "PATCH", path: "/v1/counterparties/" + id, key: api.other.accountantKey,
			clientID: api.other.client.ID, body: map[string]any{"name": "x"}}); res.status != http.StatusNotFound {
			t.Errorf("another firm's PATCH: got %d, want 404", res.status)
		}
	})

	t.Run("a person's booking, and a correction after export", func(t *testing.T) {
		res := api.do(request{method: "PATCH", path: "/v1/files/" + bakery, key: key, clientID: client,
			body: map[string]any{"booking": map[string]any{"account": "4650", "taxKey": "9", "text": "Bewirtung"}}})
		f := exDecode[struct {
			Analysis struct{ Booking map[string]any }
			Exports  []struct{ ID string }
		}](t, res, http.StatusOK)
		if f.Analysis.Booking["source"] != "user" || f.Analysis.Booking["account"] != "4650" || f.Analysis.Booking["contraAccount"] != "70123" {
			t.Errorf("booking: %v", f.Analysis.Booking)
		}
		if len(f.Exports) != 1 || f.Exports[0].ID != e.ID {
			t.Errorf("exports: %v, want the export", f.Exports)
		}
		wantIssue(t, api.do(request{method: "PATCH", path: "/v1/files/" + bakery, key: key, clientID: client,
			body: map[string]any{"booking": map[string]any{"account": "4650", "taxKey": "40009"}}}), "taxKey")
		if res := api.do(request{method: "PATCH", path: "/v1/files/" + bakery, key: api.clientKey, clientID: client,
			body: map[string]any{"booking": map[string]any{"account": "4650"}}}); res.status != http.StatusForbidden {
			t.Errorf("a booking with a client key: got %d, want 403", res.status)
		}
		second := exDecode[exExport](t, exportMarch(), http.StatusAccepted)
		api.runExports(t)
		second = exDecode[exExport](t, api.do(request{method: "GET", path: "/v1/exports/" + second.ID, key: key, clientID: client}), http.StatusOK)
		if len(second.ChangedSinceExport) != 1 || second.ChangedSinceExport[0] != bakery {
			t.Errorf("changedSinceExport: %v, want the bakery's invoice", second.ChangedSinceExport)
		}
	})

	t.Run("tenants see nothing of each other", func(t *testing.T) {
		for _, who := range []struct{ key, client string }{{api.other.accountantKey, api.other.client.ID}, {key, api.otherClient.ID}} {
			if res := api.do(request{method: "GET", path: "/v1/exports/" + e.ID, key: who.key, clientID: who.client}); res.status != http.StatusNotFound {
				t.Errorf("GET the export as %s: got %d, want 404", who.client, res.status)
			}
			if res := api.do(request{method: "GET", path: "/v1/exports/" + e.ID + "/content", key: who.key, clientID: who.client}); res.status != http.StatusNotFound {
				t.Errorf("GET the export's link as %s: got %d, want 404", who.client, res.status)
			}
			for _, path := range []string{"/v1/exports", "/v1/counterparties"} {
				list := exDecode[struct{ Data []any }](t, api.do(request{method: "GET", path: path, key: who.key, clientID: who.client}), http.StatusOK)
				if len(list.Data) != 0 {
					t.Errorf("GET %s as %s: %d items, want none", path, who.client, len(list.Data))
				}
			}
			s := exDecode[map[string]any](t, api.do(request{method: "GET", path: "/v1/ledger-settings", key: who.key, clientID: who.client}), http.StatusOK)
			if s["chart"] != nil {
				t.Errorf("the settings of %s: %v, want none set", who.client, s)
			}
		}
	})
}
