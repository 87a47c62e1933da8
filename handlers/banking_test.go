package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"acctapi/auth"
	"acctapi/bankstatement"
)

// bkEntry is one :61:/:86: pair of an MT940 statement.
type bkEntry struct {
	date, amount, ref, name, text string // amount in cents as a signed decimal, "-49.99"
}

// bkMT940 writes one MT940 statement of the account from the opening
// balance; the closing balance adds up unless closing says otherwise.
func bkMT940(account, opening string, entries ...bkEntry) []byte {
	return bkMT940Closing(account, opening, "", entries...)
}

func bkMT940Closing(account, opening, closing string, entries ...bkEntry) []byte {
	cents := func(s string) int64 {
		var whole, frac int64
		fmt.Sscanf(strings.TrimPrefix(s, "-"), "%d.%d", &whole, &frac)
		if strings.HasPrefix(s, "-") {
			return -(whole*100 + frac)
		}
		return whole*100 + frac
	}
	mt := func(c int64) (string, string) {
		if c < 0 {
			return "D", fmt.Sprintf("%d,%02d", -c/100, -c%100)
		}
		return "C", fmt.Sprintf("%d,%02d", c/100, c%100)
	}
	var b strings.Builder
	fmt.Fprintf(&b, ":20:STARTUMS\n:25:%s\n:28C:00001/001\n", account)
	balance := cents(opening)
	mark, amount := mt(balance)
	fmt.Fprintf(&b, ":60F:%s260301EUR%s\n", mark, amount)
	for _, e := range entries {
		c := cents(e.amount)
		balance += c
		mark, amount := mt(c)
		d := strings.ReplaceAll(e.date, "-", "")[2:]
		fmt.Fprintf(&b, ":61:%s%s%s%sNTRFNONREF", d, d[2:], mark, amount)
		if e.ref != "" {
			fmt.Fprintf(&b, "//%s", e.ref)
		}
		fmt.Fprintf(&b, "\n:86:106?00SEPA?20%s?30BYLADEM1001?32%s\n", e.text, e.name)
	}
	if closing != "" {
		balance = cents(closing)
	}
	mark, amount = mt(balance)
	fmt.Fprintf(&b, ":62F:%s260331EUR%s\n-\n", mark, amount)
	return []byte(b.String())
}

const bkIBAN = "DE89370400440532013000"

// bkMarch is a month of three entries, two of them equal.
var bkMarch = []bkEntry{
	{date: "2026-03-12", amount: "-49.99", ref: "BANKREF1", name: "Amazon EU S.a r.l.", text: "Order 302"},
	{date: "2026-03-15", amount: "1000.00", name: "Mueller KG", text: "RE-2026-017"},
	{date: "2026-03-15", amount: "1000.00", name: "Mueller KG", text: "RE-2026-017"},
}

// bkImport posts a statement file with the key, and the workspace when it is
// not "".
func (api *testAPI) bkImport(t *testing.T, key, clientID, workspaceID string, data []byte) *response {
	t.Helper()
	parts := []flPart{flFilePart("march.sta", "", data)}
	if workspaceID != "" {
		parts = append(parts, flField("workspaceId", workspaceID))
	}
	return api.do(request{method: "POST", path: "/v1/bank-statements", key: key, clientID: clientID,
		body: flBody(t, parts...), header: http.Header{"Content-Type": {flMultipart}}})
}

func (api *testAPI) bkMustImport(t *testing.T, data []byte) bankStatementResponse {
	t.Helper()
	res := api.bkImport(t, api.accountantKey, api.client.ID, "", data)
	if res.status != http.StatusCreated {
		t.Fatalf("import: got %d %s, want 201", res.status, res.body)
	}
	var s bankStatementResponse
	res.decode(t, &s)
	return s
}

func (api *testAPI) bkTransactions(t *testing.T, query string) listResponse[transactionResponse] {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/transactions" + query, key: api.accountantKey, clientID: api.client.ID})
	if res.status != http.StatusOK {
		t.Fatalf("GET /v1/transactions%s: got %d %s, want 200", query, res.status, res.body)
	}
	var page listResponse[transactionResponse]
	res.decode(t, &page)
	return page
}

func TestImportStatement(t *testing.T) {
	api := newTestAPI(t)
	s := api.bkMustImport(t, bkMT940(bkIBAN, "2000.00", bkMarch...))
	if s.Format != "mt940" || s.From != "2026-03-01" || s.To != "2026-03-31" || s.TransactionCount != 3 || s.DuplicateCount != 0 ||
		*s.OpeningBalance != "2000.00" || *s.ClosingBalance != "3950.01" || s.FileID != nil {
		t.Errorf("statement: got %+v, want mt940 of March, 3 new, 2000.00 to 3950.01, no file", s)
	}

	t.Run("read", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/bank-statements/" + s.ID, key: api.clientKey, clientID: api.client.ID})
		if res.status != http.StatusOK || !strings.Contains(string(res.body), s.ID) {
			t.Errorf("GET statement: got %d %s", res.status, res.body)
		}
		res = api.do(request{method: "GET", path: "/v1/bank-accounts/" + s.AccountID, key: api.accountantKey, clientID: api.client.ID})
		var a bankAccountResponse
		res.decode(t, &a)
		if res.status != http.StatusOK || a.IBAN != bkIBAN || a.Balance == nil || *a.Balance != "3950.01" || *a.BalanceDate != "2026-03-31" {
			t.Errorf("GET account: got %d %s, want the IBAN with 3950.01 on 2026-03-31", res.status, res.body)
		}
		for _, path := range []string{"/v1/bank-accounts", "/v1/bank-statements?accountId=" + s.AccountID} {
			res := api.do(request{method: "GET", path: path, key: api.accountantKey, clientID: api.client.ID})
			var page listResponse[map[string]any]
			res.decode(t, &page)
			if res.status != http.StatusOK || len(page.Data) != 1 || page.Pagination.Total != 1 {
				t.Errorf("GET %s: got %d %s, want one", path, res.status, res.body)
			}
		}
	})

	t.Run("again", func(t *testing.T) {
		events := api.sqlColumn(t, `SELECT id FROM webhook_events WHERE type = 'bank_statement.imported'`)
		res := api.bkImport(t, api.accountantKey, api.client.ID, "", bkMT940(bkIBAN, "2000.00", bkMarch...))
		var again bankStatementResponse
		res.decode(t, &again)
		if res.status != http.StatusOK || again.ID != s.ID || again.TransactionCount != 3 {
			t.Errorf("same file again: got %d %s, want 200 with the statement imported before", res.status, res.body)
		}
		if got := api.sqlColumn(t, `SELECT id FROM webhook_events WHERE type = 'bank_statement.imported'`); len(got) != len(events) {
			t.Errorf("same file again: got %d bank_statement.imported events, want %d as before", len(got), len(events))
		}
		if got := api.sqlColumn(t, `SELECT id FROM bank_statements`); len(got) != 1 {
			t.Errorf("same file again: got %d statements, want 1", len(got))
		}
		overlap := api.bkMustImport(t, bkMT940(bkIBAN, "3950.01", bkMarch[0], bkEntry{date: "2026-03-20", amount: "-5.00", name: "Bank", text: "Fee"}))
		if overlap.TransactionCount != 1 || overlap.DuplicateCount != 1 {
			t.Errorf("overlapping file: got %d new, %d known, want 1, 1", overlap.TransactionCount, overlap.DuplicateCount)
		}
		if page := api.bkTransactions(t, ""); page.Pagination.Total != 4 {
			t.Errorf("transactions: got %d, want 4", page.Pagination.Total)
		}
	})

	t.Run("kept as a file", func(t *testing.T) {
		ws := api.mustCreateWorkspace(api.client.ID, "Bank")
		res := api.bkImport(t, api.clientKey, api.client.ID, ws, bkMT940("DE02120300000000202051", "0.00", bkEntry{date: "2026-03-02", amount: "1.00", name: "A", text: "x"}))
		var st bankStatementResponse
		res.decode(t, &st)
		if res.status != http.StatusCreated || st.FileID == nil {
			t.Fatalf("import with workspaceId: got %d %s, want 201 with a fileId", res.status, res.body)
		}
		f, err := api.store.FindFile(context.Background(), api.client.ID, *st.FileID)
		if err != nil || f.WorkspaceID != ws || f.Kind == nil || *f.Kind != "bank_statement" || f.Name != "march.sta" {
			t.Errorf("the statement's file: got %+v, %v, want march.sta of kind bank_statement in %s", f, err, ws)
		}
		other := api.mustCreateWorkspace(api.otherClient.ID, "Theirs")
		res = api.bkImport(t, api.accountantKey, api.client.ID, other, bkMT940(bkIBAN, "0.00"))
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
	})

	t.Run("events", func(t *testing.T) {
		api.do(request{method: "POST", path: "/v1/webhooks", key: api.accountantKey, body: map[string]any{
			"url": "https://hooks.example.com/x", "events": []string{"bank_statement.imported"}}})
		st := api.bkMustImport(t, bkMT940("DE75512108001245126199", "0.00", bkEntry{date: "2026-03-03", amount: "2.00", name: "B", text: "y"}))
		payloads := api.sqlColumn(t, `SELECT CAST(payload AS TEXT) FROM webhook_events WHERE type = 'bank_statement.imported'`)
		payload := strings.Join(payloads, "\n")
		if len(payloads) != 1 || !strings.Contains(payload, `"id":"`+st.ID+`"`) || !strings.Contains(payload, `"closingBalance":"2.00"`) {
			t.Errorf("bank_statement.imported: got %s, want the statement %s", payload, st.ID)
		}
	})
}

func TestImportStatementRefused(t *testing.T) {
	api := newTestAPI(t)
	valid := bkMT940(bkIBAN, "10.00", bkMarch...)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", []byte{}, "empty"},
		{"not a statement", []byte("%PDF-1.4 an invoice"), ""},
		{"balances", bkMT940Closing(bkIBAN, "10.00", "11.00", bkMarch...), "do not add up"},
		{"doctype", []byte(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"/>`), ""},
		{"several accounts", append(append([]byte{}, valid...), bkMT940("DE02120300000000202051", "1.00")...), "more than one account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := api.bkImport(t, api.accountantKey, api.client.ID, "", tc.data)
			if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["file"]`) ||
				!strings.Contains(string(res.body), tc.want) {
				t.Errorf("got %d %s, want 422 on file saying %q", res.status, res.body, tc.want)
			}
		})
	}
	if page := api.bkTransactions(t, ""); page.Pagination.Total != 0 {
		t.Errorf("transactions after refusals: got %d, want none", page.Pagination.Total)
	}

	t.Run("no file", func(t *testing.T) {
		res := api.do(request{method: "POST", path: "/v1/bank-statements", key: api.accountantKey, clientID: api.client.ID,
			body: flBody(t, flField("workspaceId", "nope")), header: http.Header{"Content-Type": {flMultipart}}})
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["file"]`) ||
			!strings.Contains(string(res.body), `"path":["workspaceId"]`) {
			t.Errorf("got %d %s, want 422 on file and workspaceId", res.status, res.body)
		}
	})
	t.Run("too large", func(t *testing.T) {
		big := bytes.Repeat([]byte(" "), bankstatement.MaxSize+1)
		res := api.bkImport(t, api.accountantKey, api.client.ID, "", big)
		wantError(t, res, http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large", "")
	})
	t.Run("not multipart", func(t *testing.T) {
		res := api.do(request{method: "POST", path: "/v1/bank-statements", key: api.accountantKey, clientID: api.client.ID, body: map[string]any{}})
		wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", "")
	})
	t.Run("auth", func(t *testing.T) {
		res := api.bkImport(t, "", api.client.ID, "", valid)
		wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized", "")
		readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"banking:read"}})
		res = api.bkImport(t, readOnly, api.client.ID, "", valid)
		wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "")
		none := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"files:read"}})
		res = api.do(request{method: "GET", path: "/v1/transactions", key: none, clientID: api.client.ID})
		wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "")
		res = api.do(request{method: "GET", path: "/v1/bank-accounts", key: api.accountantKey})
		wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", "")
	})
}

func TestTransactions(t *testing.T) {
	api := newTestAPI(t)
	s := api.bkMustImport(t, bkMT940(bkIBAN, "2000.00", append(bkMarch, bkEntry{date: "2026-03-20", amount: "-7.50", name: "Kiosk", text: "Paper 50%"})...))

	t.Run("list", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []string // amounts, in order
		}{
			{"", []string{"-7.50", "1000.00", "1000.00", "-49.99"}},
			{"?sort=amount&order=asc", []string{"-49.99", "-7.50", "1000.00", "1000.00"}},
			{"?direction=out", []string{"-7.50", "-49.99"}},
			{"?direction=in&bookingDateFrom=2026-03-15&bookingDateTo=2026-03-15", []string{"1000.00", "1000.00"}},
			{"?bookingDateTo=2026-03-14", []string{"-49.99"}},
			{"?q=amazon", []string{"-49.99"}},
			{"?q=50%25", []string{"-7.50"}},
			{"?q=BANKREF1&statementId=" + s.ID + "&accountId=" + s.AccountID, []string{"-49.99"}},
			{"?status=unmatched&limit=1", []string{"-7.50"}},
			{"?status=matched", nil},
		} {
			page := api.bkTransactions(t, tc.query)
			var got []string
			for _, tx := range page.Data {
				got = append(got, tx.Amount)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("GET /v1/transactions%s: got %v, want %v", tc.query, got, tc.want)
			}
		}
		page := api.bkTransactions(t, "?limit=2")
		next := api.bkTransactions(t, "?limit=2&cursor="+*page.Pagination.NextCursor)
		if len(next.Data) != 2 || next.Data[1].Amount != "-49.99" || next.Pagination.NextCursor != nil {
			t.Errorf("second page: got %+v", next)
		}
	})

	t.Run("bad query", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/transactions?bookingDateFrom=2026-13-01&direction=up&status=x&sort=title&q=",
			key: api.accountantKey, clientID: api.client.ID})
		for _, name := range []string{"bookingDateFrom", "direction", "status", "sort", "q"} {
			if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["query","`+name+`"]`) {
				t.Errorf("got %d %s, want 422 naming %s", res.status, res.body, name)
			}
		}
	})

	txs := api.bkTransactions(t, "?sort=amount&order=asc").Data
	amazon := txs[0]
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	receipt := api.flUploadBytes(t, api.client.ID, ws, "receipt.pdf", []byte("%PDF-1.4 receipt"))

	t.Run("patch", func(t *testing.T) {
		path := "/v1/transactions/" + amazon.ID
		res := api.do(request{method: "PATCH", path: path, key: api.clientKey, clientID: api.client.ID,
			body: map[string]any{"fileIds": []string{receipt.ID}, "note": "Paid by card"}})
		var got transactionResponse
		res.decode(t, &got)
		if res.status != http.StatusOK || got.Status != "matched" || len(got.Matches) != 1 || got.Matches[0].Source != "user" ||
			got.Matches[0].State != "confirmed" || *got.Note != "Paid by card" {
			t.Errorf("PATCH fileIds: got %d %s, want matched by the user", res.status, res.body)
		}
		if len(got.Matches) == 1 && (got.Matches[0].FileName != "receipt.pdf" || got.Matches[0].DocumentNumber != nil || got.Matches[0].TotalAmount != nil) {
			t.Errorf("the match's document: got %+v, want receipt.pdf, unread", got.Matches[0])
		}
		if page := api.bkTransactions(t, "?fileId="+receipt.ID); len(page.Data) != 1 || page.Data[0].ID != amazon.ID {
			t.Errorf("?fileId: got %+v, want the amazon transaction", page.Data)
		}
		res = api.do(request{method: "PATCH", path: path, key: api.clientKey, clientID: api.client.ID, body: map[string]any{"fileIds": []string{}}})
		res.decode(t, &got)
		if got.Status != "unmatched" || len(got.Matches) != 0 || got.Note == nil {
			t.Errorf("PATCH fileIds []: got %s, want unmatched without matches, the note kept", res.body)
		}
		res = api.do(request{method: "PATCH", path: path, key: api.clientKey, clientID: api.client.ID, body: map[string]any{"ignored": true, "note": nil}})
		res.decode(t, &got)
		if got.Status != "ignored" || got.Note != nil {
			t.Errorf("PATCH ignored: got %s, want ignored without a note", res.body)
		}
		res = api.do(request{method: "GET", path: path, key: api.accountantKey, clientID: api.client.ID})
		res.decode(t, &got)
		if res.status != http.StatusOK || got.Status != "ignored" {
			t.Errorf("GET: got %d %s, want it ignored", res.status, res.body)
		}
	})

	t.Run("patch refused", func(t *testing.T) {
		path := "/v1/transactions/" + amazon.ID
		theirs := api.mustCreateFile(api.otherClient.ID, api.mustCreateWorkspace(api.otherClient.ID, "W"), "")
		res := api.do(request{method: "PATCH", path: path, key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"fileIds": []string{theirs}}})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		res = api.do(request{method: "PATCH", path: path, key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"fileIds": nil, "ignored": "yes", "note": strings.Repeat("x", 2001)}})
		for _, name := range []string{"fileIds", "ignored", "note"} {
			if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["`+name+`"]`) {
				t.Errorf("got %d %s, want 422 naming %s", res.status, res.body, name)
			}
		}
		res = api.do(request{method: "PATCH", path: "/v1/transactions/" + amazon.ID, key: api.otherClientClientKey,
			clientID: api.otherClient.ID, body: map[string]any{"ignored": true}})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		res = api.do(request{method: "GET", path: "/v1/transactions/" + amazon.ID, key: api.other.accountantKey, clientID: api.other.client.ID})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		res = api.do(request{method: "GET", path: "/v1/bank-statements/" + s.ID, key: api.accountantKey, clientID: api.otherClient.ID})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		res = api.do(request{method: "GET", path: "/v1/bank-accounts/" + s.AccountID, key: api.other.clientKey, clientID: api.other.client.ID})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
	})

	t.Run("idempotent", func(t *testing.T) {
		h := http.Header{"Idempotency-Key": {"bank-1"}}
		for range 2 {
			res := api.do(request{method: "PATCH", path: "/v1/transactions/" + txs[1].ID, key: api.accountantKey,
				clientID: api.client.ID, body: map[string]any{"note": "once"}, header: h})
			if res.status != http.StatusOK {
				t.Errorf("PATCH with Idempotency-Key: got %d %s", res.status, res.body)
			}
		}
	})
}

func TestMissingReceiptsCollect(t *testing.T) {
	api := newTestAPI(t)
	s := api.bkMustImport(t, bkMT940(bkIBAN, "100.00",
		bkEntry{date: "2026-03-12", amount: "-49.99", name: "Amazon EU S.à r.l.", text: "Order 302"},
		bkEntry{date: "2026-03-13", amount: "1000.00", name: "Mueller KG", text: "RE-2026-017"},
		bkEntry{date: "2026-03-14", amount: "-5.00", name: "Sparkasse", text: "Fee"},
		bkEntry{date: "2026-04-02", amount: "-9.00", name: "Kiosk", text: "April"}))
	txs := api.bkTransactions(t, "?sort=bookingDate&order=asc").Data
	amazon, fee := txs[0], txs[2]
	res := api.do(request{method: "PATCH", path: "/v1/transactions/" + fee.ID, key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"ignored": true}})
	if res.status != http.StatusOK {
		t.Fatalf("ignore the fee: got %d %s", res.status, res.body)
	}
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	create := func(key string, body map[string]any) *response {
		body["workspaceId"], body["title"] = ws, "Receipts for March"
		return api.do(request{method: "POST", path: "/v1/collects", key: key, clientID: api.client.ID, body: body})
	}
	march := map[string]any{"accountId": s.AccountID, "bookingDateFrom": "2026-03-01", "bookingDateTo": "2026-03-31"}

	res = create(api.clientKey, map[string]any{"fromTransactions": march})
	if res.status != http.StatusCreated {
		t.Fatalf("POST /v1/collects fromTransactions: got %d %s, want 201", res.status, res.body)
	}
	var c struct {
		ID    string   `json:"id"`
		Items []clItem `json:"items"`
	}
	res.decode(t, &c)
	if len(c.Items) != 1 || c.Items[0].Title != "2026-03-12 · Amazon EU S.à r.l. · −49.99 EUR" ||
		c.Items[0].TransactionID == nil || *c.Items[0].TransactionID != amazon.ID || *c.Items[0].Description != "Order 302" {
		t.Fatalf("items: got %+v, want the Amazon payment only", c.Items)
	}

	// The titles are written as the collect's language writes dates and
	// amounts, so that its page reads in one language.
	t.Run("in German", func(t *testing.T) {
		res := create(api.accountantKey, map[string]any{"transactionIds": []string{amazon.ID}, "locale": "de"})
		var de struct {
			Items []clItem `json:"items"`
		}
		res.decode(t, &de)
		if want := "12.03.2026 · Amazon EU S.à r.l. · −49,99 EUR"; res.status != http.StatusCreated || len(de.Items) != 1 || de.Items[0].Title != want {
			t.Errorf("German collect: got %d %+v, want one item titled %q", res.status, de.Items, want)
		}
	})

	t.Run("refused", func(t *testing.T) {
		res := create(api.clientKey, map[string]any{"transactionIds": []string{amazon.ID}, "fromTransactions": march})
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["transactionIds"]`) {
			t.Errorf("both: got %d %s, want 422 on transactionIds", res.status, res.body)
		}
		res = create(api.clientKey, map[string]any{"fromTransactions": map[string]any{"accountId": s.AccountID,
			"bookingDateFrom": "2026-05-01", "bookingDateTo": "2026-04-01"}})
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["fromTransactions","bookingDateTo"]`) {
			t.Errorf("backwards range: got %d %s, want 422 on bookingDateTo", res.status, res.body)
		}
		res = create(api.clientKey, map[string]any{"fromTransactions": map[string]any{"accountId": s.AccountID,
			"bookingDateFrom": "2026-03-13", "bookingDateTo": "2026-03-14"}})
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), "nothing to ask for") {
			t.Errorf("nothing missing: got %d %s, want 422", res.status, res.body)
		}
		res = create(api.clientKey, map[string]any{})
		if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["items"]`) {
			t.Errorf("no items: got %d %s, want 422 on items", res.status, res.body)
		}
		res = api.do(request{method: "POST", path: "/v1/collects", key: api.otherClientClientKey, clientID: api.otherClient.ID,
			body: map[string]any{"workspaceId": api.mustCreateWorkspace(api.otherClient.ID, "W"), "title": "T", "transactionIds": []string{amazon.ID}}})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		res = api.do(request{method: "POST", path: "/v1/collects", key: api.accountantKey, clientID: api.otherClient.ID,
			body: map[string]any{"workspaceId": api.mustCreateWorkspace(api.otherClient.ID, "W"), "title": "T", "fromTransactions": march}})
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
		collectsOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"collects:write"}})
		res = create(collectsOnly, map[string]any{"transactionIds": []string{amazon.ID}})
		wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", "")
		res = create(api.accountantKey, map[string]any{"transactionIds": []string{fee.ID},
			"items": []any{map[string]any{"title": "Contract"}}})
		if res.status != http.StatusCreated || !strings.Contains(string(res.body), `"transactionId":"`+fee.ID+`"`) {
			t.Errorf("transactionIds with items: got %d %s, want 201", res.status, res.body)
		}
	})

	// The uploader sees the item like any other, with its transaction; a
	// file uploaded to it is the transaction's document.
	session := api.do(request{method: "POST", path: "/v1/collects/" + c.ID + "/sessions", key: api.accountantKey,
		clientID: api.client.ID, body: map[string]any{}})
	var link clSession
	session.decode(t, &link)
	_, view := api.clView(t, link.Token)
	if len(view.Collect.Items) != 1 || view.Collect.Items[0].TransactionID == nil || *view.Collect.Items[0].TransactionID != amazon.ID {
		t.Errorf("the uploader's view: got %+v, want the item with its transaction", view.Collect.Items)
	}
	file := api.clMustUpload(t, link.Token, c.Items[0].ID, flFilePart("amazon.pdf", "application/pdf", []byte("%PDF-1.4 amazon")))
	res = api.do(request{method: "GET", path: "/v1/transactions/" + amazon.ID, key: api.accountantKey, clientID: api.client.ID})
	var got transactionResponse
	res.decode(t, &got)
	if got.Status != "matched" || len(got.Matches) != 1 || got.Matches[0].FileID != file.ID || got.Matches[0].Source != "collect" {
		t.Errorf("after the upload: got %s, want matched to %s from the collect", res.body, file.ID)
	}
	res = api.do(request{method: "DELETE", path: "/v1/collect-sessions/" + link.Token + "/items/" + c.Items[0].ID + "/files/" + file.ID})
	if res.status != http.StatusOK {
		t.Fatalf("take the file back: got %d %s", res.status, res.body)
	}
	res = api.do(request{method: "GET", path: "/v1/transactions/" + amazon.ID, key: api.accountantKey, clientID: api.client.ID})
	res.decode(t, &got)
	if got.Status != "unmatched" || len(got.Matches) != 0 {
		t.Errorf("after taking the file back: got %s, want unmatched", res.body)
	}
}

// TestMissingReceiptsPageInBrowser: the upload page shows a collect of
// missing receipts like any other, on a phone too, with long counterparty
// names.
func TestMissingReceiptsPageInBrowser(t *testing.T) {
	browser := chromiumPath(t, "the collect page of missing receipts")
	api := newTestAPI(t)
	s := api.bkMustImport(t, bkMT940(bkIBAN, "500.00",
		bkEntry{date: "2026-03-12", amount: "-49.99", name: "Amazon EU S.à r.l.", text: "Order 302-1234567-7654321"},
		bkEntry{date: "2026-03-18", amount: "-1249.50", name: "Müller Mehl GmbH und Söhne Großhandel für Bäckereibedarf", text: "RE-2026-0117"},
		bkEntry{date: "2026-03-25", amount: "-9.90", name: "METRO", text: "Kassenbon 0815"}))
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	res := api.do(request{method: "POST", path: "/v1/collects", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"workspaceId": ws, "title": "Receipts for March", "fromTransactions": map[string]any{
			"accountId": s.AccountID, "bookingDateFrom": "2026-03-01", "bookingDateTo": "2026-03-31"}}})
	var c struct {
		ID    string   `json:"id"`
		Items []clItem `json:"items"`
	}
	res.decode(t, &c)
	if res.status != http.StatusCreated || len(c.Items) != 3 {
		t.Fatalf("collect: got %d %s, want 3 items", res.status, res.body)
	}
	var link clSession
	api.do(request{method: "POST", path: "/v1/collects/" + c.ID + "/sessions", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{}}).decode(t, &link)

	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))...)
	defer cancel()
	tab := openTab(t, allocCtx, true, "")
	tab.navigate(t, api.server.URL, "/collect/"+link.Token, http.StatusOK)
	tab.wantText(t, "#item-"+c.Items[0].ID+" h3", "2026-03-12 · Amazon EU S.à r.l. · −49.99 EUR")
	tab.shoot(t, screenshotDir(t), "missing-receipts")
	tab.wantClean(t, api.server.URL)
}
