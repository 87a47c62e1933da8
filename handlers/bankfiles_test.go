package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Statement files that must not be taken silently: each is refused with
// the reason and changes nothing, or read as the bank meant it.

// bkState is what an import may change: the statements, transactions and
// accounts, with their balances.
func (api *testAPI) bkState(t *testing.T) string {
	t.Helper()
	return strings.Join(append(append(
		api.sqlColumn(t, `SELECT id || ' ' || transaction_count FROM bank_statements ORDER BY id`),
		api.sqlColumn(t, `SELECT id || ' ' || amount || ' ' || booking_date || ' ' || coalesce(counterparty_name, '') FROM bank_transactions ORDER BY id`)...),
		api.sqlColumn(t, `SELECT id || ' ' || currency || ' ' || coalesce(balance, '') FROM bank_accounts ORDER BY id`)...), "\n")
}

func TestImportStatementNothingSilentlyWrong(t *testing.T) {
	api := newTestAPI(t)
	api.bkMustImport(t, bkMT940(bkIBAN, "2000.00", bkMarch...))
	mt := func(account, opening, closing string, lines ...string) []byte {
		return []byte(":20:STARTUMS\n:25:" + account + "\n:28C:00002/001\n:60F:" + opening + "\n" + strings.Join(lines, "\n") + "\n:62F:" + closing + "\n-\n")
	}
	for _, tc := range []struct {
		name string
		data []byte
		want []string
	}{
		{"a known entry's amount changed", bkMT940(bkIBAN, "1950.01",
			bkEntry{date: "2026-03-12", amount: "-45.99", ref: "BANKREF1", name: "Amazon EU S.a r.l.", text: "Order 302"},
			bkEntry{date: "2026-03-20", amount: "-5.00", name: "Bank", text: "Fee"}),
			[]string{"disagree with the transactions imported before", "entry 1 (reference BANKREF1): amount -45.99 EUR here, -49.99 EUR before"}},
		{"a known entry's date changed", bkMT940(bkIBAN, "1950.01",
			bkEntry{date: "2026-03-13", amount: "-49.99", ref: "BANKREF1", name: "Amazon EU S.a r.l.", text: "Order 302"}),
			[]string{"entry 1 (reference BANKREF1): booked 2026-03-13 here, 2026-03-12 before"}},
		{"a known entry's counterparty changed", bkMT940(bkIBAN, "1950.01",
			bkEntry{date: "2026-03-12", amount: "-49.99", ref: "BANKREF1", name: "Amazon Payments", text: "Order 302"}),
			[]string{`counterparty \"Amazon Payments\" here, \"Amazon EU S.a r.l.\" before`}},
		{"an entry without reference changed", bkMT940(bkIBAN, "1950.01",
			bkEntry{date: "2026-03-12", amount: "-49.99", ref: "BANKREF1", name: "Amazon EU S.a r.l.", text: "Order 302"},
			bkEntry{date: "2026-03-15", amount: "100.00", name: "Mueller KG", text: "RE-2026-017"},
			bkEntry{date: "2026-03-15", amount: "1000.00", name: "Mueller KG", text: "RE-2026-017"}),
			[]string{"entry 2 (2026-03-15, 100.00 EUR): amount 100.00 EUR here, 1000.00 EUR before"}},
		{"a statement in another currency than its account's", mt(bkIBAN, "C260301USD10,00", "C260302USD9,00", ":61:2603020302DR1,00NMSCNONREF"),
			[]string{"the statement is in USD, but its account DE89370400440532013000 is kept in EUR"}},
		{"balances in two currencies", mt("DE02120300000000202051", "C260301EUR10,00", "C260302USD9,00", ":61:2603020302DR1,00NMSCNONREF"),
			[]string{"is in USD, but the statement's other balances are in EUR"}},
		{"no currency", []byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt><Id>1</Id>` +
			`<Acct><Id><IBAN>DE02120300000000202051</IBAN></Id></Acct><Ntry><Amt>1.00</Amt><CdtDbtInd>DBIT</CdtDbtInd>` +
			`<BookgDt><Dt>2026-03-02</Dt></BookgDt></Ntry></Stmt></BkToCstmrStmt></Document>`), []string{"states no currency"}},
		{"no account", []byte(":20:STARTUMS\n:28C:1\n:60F:C260301EUR10,00\n:61:2603020302DR1,00NMSCNONREF\n:62F:C260302EUR9,00\n-"),
			[]string{"names no account (:25:)"}},
		{"an MT942 interim report", []byte(":20:X\n:25:DE02120300000000202051\n:28C:1\n:34F:EURD0,\n:13D:2603021200+0100\n:61:2603020302DR1,00NMSCNONREF\n:90D:1EUR1,00\n-"),
			[]string{"MT942 interim report"}},
		{"a camt.052 report", []byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.052.001.08"><BkToCstmrAcctRpt/></Document>`),
			[]string{"camt.052.001.08 message, not a CAMT.053 bank statement"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := api.bkState(t)
			res := api.bkImport(t, api.accountantKey, api.client.ID, "", tc.data)
			if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["file"]`) {
				t.Fatalf("got %d %s, want 422 at file", res.status, res.body)
			}
			for _, want := range tc.want {
				if !strings.Contains(string(res.body), want) {
					t.Errorf("got %s, want it to say %q", res.body, want)
				}
			}
			if after := api.bkState(t); after != before {
				t.Errorf("the refused file changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestImportStatementCleansText(t *testing.T) {
	api := newTestAPI(t)
	long := strings.Repeat("Lorem ipsum ", 200)
	data := []byte(":20:STARTUMS\n:25:" + bkIBAN + "\n:28C:1\n:60F:C260301EUR10,00\n:61:2603020302DR1,00NMSCNONREF\n" +
		":86:106?00SEPA?20Miete \x1b[31m\u202eMaerz?32Haus\u2066verwaltung\x07 Nord " + long + "\n:62F:C260302EUR9,00\n-")
	s := api.bkMustImport(t, data)
	txs := api.bkTransactions(t, "?statementId="+s.ID).Data
	if len(txs) != 1 || txs[0].CounterpartyName == nil || txs[0].RemittanceInfo == nil {
		t.Fatalf("got %+v, want one transaction with a name and remittance", txs)
	}
	name, rem := *txs[0].CounterpartyName, *txs[0].RemittanceInfo
	if !strings.HasPrefix(name, "Hausverwaltung Nord Lorem") || utf8.RuneCountInString(name) > 140 || rem != "Miete [31mMaerz" {
		t.Errorf("got name %q (%d characters), remittance %q", name, utf8.RuneCountInString(name), rem)
	}
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	res := api.do(request{method: "POST", path: "/v1/collects", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"workspaceId": ws, "title": "Receipts", "transactionIds": []string{txs[0].ID}}})
	if res.status != http.StatusCreated || strings.ContainsAny(string(res.body), "\u202e\u2066\x1b") || strings.Contains(string(res.body), `\u001b`) {
		t.Errorf("collect: got %d %s, want 201 with titles free of control and bidi characters", res.status, res.body)
	}
}

func TestUpdateTransactionUnknownKeys(t *testing.T) {
	api := newTestAPI(t)
	api.bkMustImport(t, bkMT940(bkIBAN, "2000.00", bkMarch...))
	tx := api.bkTransactions(t, "").Data[0]
	res := api.do(request{method: "PATCH", path: "/v1/transactions/" + tx.ID, key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"ignore": true, "note": "bank fee"}})
	if res.status != http.StatusUnprocessableEntity || !strings.Contains(string(res.body), `"path":["ignore"]`) ||
		!strings.Contains(string(res.body), "unrecognized_keys") {
		t.Errorf("got %d %s, want 422 at ignore", res.status, res.body)
	}
	res = api.do(request{method: "GET", path: "/v1/transactions/" + tx.ID, key: api.accountantKey, clientID: api.client.ID})
	var got transactionResponse
	res.decode(t, &got)
	if got.Status != tx.Status || got.Note != nil {
		t.Errorf("after the refused PATCH: got %s, want it unchanged", res.body)
	}
}

// TestCollectKeepsIgnored: an uploader's file for a transaction the
// accountant ignored does not undo the decision, nor does taking it back.
func TestCollectKeepsIgnored(t *testing.T) {
	api := newTestAPI(t)
	api.bkMustImport(t, bkMT940(bkIBAN, "100.00", bkEntry{date: "2026-03-14", amount: "-5.00", name: "Sparkasse", text: "Fee"}))
	fee := api.bkTransactions(t, "").Data[0]
	res := api.do(request{method: "PATCH", path: "/v1/transactions/" + fee.ID, key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"ignored": true}})
	if res.status != http.StatusOK {
		t.Fatalf("ignore the fee: got %d %s", res.status, res.body)
	}
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	res = api.do(request{method: "POST", path: "/v1/collects", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"workspaceId": ws, "title": "Receipts", "transactionIds": []string{fee.ID}}})
	var c struct {
		ID    string   `json:"id"`
		Items []clItem `json:"items"`
	}
	res.decode(t, &c)
	session := api.do(request{method: "POST", path: "/v1/collects/" + c.ID + "/sessions", key: api.accountantKey,
		clientID: api.client.ID, body: map[string]any{}})
	var link clSession
	session.decode(t, &link)
	status := func(when string) {
		t.Helper()
		res := api.do(request{method: "GET", path: "/v1/transactions/" + fee.ID, key: api.accountantKey, clientID: api.client.ID})
		var got transactionResponse
		res.decode(t, &got)
		if got.Status != "ignored" {
			t.Errorf("%s: got %s, want ignored", when, res.body)
		}
	}
	file := api.clMustUpload(t, link.Token, c.Items[0].ID, flFilePart("fee.pdf", "application/pdf", []byte("%PDF-1.4 fee")))
	status("after the upload")
	res = api.do(request{method: "DELETE", path: "/v1/collect-sessions/" + link.Token + "/items/" + c.Items[0].ID + "/files/" + file.ID})
	if res.status != http.StatusOK {
		t.Fatalf("take the file back: got %d %s", res.status, res.body)
	}
	status("after taking the file back")
}

// TestTransactionSearch: q finds any part of three characters or more
// through the full-text index, in any case; shorter parts still match.
func TestTransactionSearch(t *testing.T) {
	api := newTestAPI(t)
	api.bkMustImport(t, bkMT940(bkIBAN, "100.00",
		bkEntry{date: "2026-03-12", amount: "-49.99", ref: "BANKREF1", name: "Amazon EU S.a r.l.", text: "Order 302-1234567"},
		bkEntry{date: "2026-03-13", amount: "-12.00", name: "Bäckerei Müller", text: `Brötchen "Dinkel"`},
		bkEntry{date: "2026-03-14", amount: "-5.00", name: "Sparkasse", text: "Kontoführung"}))
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"azon eu", []string{"-49.99"}},
		{"AMAZON", []string{"-49.99"}},
		{"302-123", []string{"-49.99"}},
		{"BÄCKEREI", []string{"-12.00"}},
		{`"Dinkel"`, []string{"-12.00"}},
		{"ref1", []string{"-49.99"}},
		{"ü", []string{"-5.00", "-12.00"}},
		{"nothing", nil},
	} {
		page := api.bkTransactions(t, "?q="+url.QueryEscape(tc.q))
		var got []string
		for _, tx := range page.Data {
			got = append(got, tx.Amount)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("q=%s: got %v, want %v", tc.q, got, tc.want)
		}
	}
}
