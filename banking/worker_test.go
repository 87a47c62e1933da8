package banking_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acctapi/bankimport"
	"acctapi/banking"
	"acctapi/db"
	"acctapi/document"
	"acctapi/filestore"
)

type fixture struct {
	firmID   string
	store    *db.DB
	files    *filestore.Store
	worker   *banking.Worker
	clientID string
	ws       string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := db.Open(filepath.Join(dir, "acctapi.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	firm, err := store.CreateFirm(ctx, "Firm")
	if err != nil {
		t.Fatal(err)
	}
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Client", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, client.ID, "Accounts")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{firmID: firm.ID, store: store, files: files, clientID: client.ID, ws: ws.ID,
		worker: banking.New(banking.Options{Store: store})}
}

// entry is one :61:/:86: pair of an MT940 statement.
type entry struct {
	date, amount, ref, name, iban, text string // amount signed, "-49.99"
}

// mt940 writes one MT940 statement of the account, from opening, with the
// entries; the closing balance adds up.
func mt940(account, opening string, entries ...entry) []byte {
	cents := func(s string) int64 {
		var whole, frac int64
		neg := strings.HasPrefix(s, "-")
		fmt.Sscanf(strings.TrimPrefix(s, "-"), "%d.%d", &whole, &frac)
		if neg {
			return -(whole*100 + frac)
		}
		return whole*100 + frac
	}
	mt := func(c int64) (string, string) {
		mark := "C"
		if c < 0 {
			mark, c = "D", -c
		}
		return mark, fmt.Sprintf("%d,%02d", c/100, c%100)
	}
	var b strings.Builder
	fmt.Fprintf(&b, ":20:STARTUMS\n:25:%s\n:28C:00001/001\n", account)
	balance := cents(opening)
	mark, amount := mt(balance)
	first, last := "260301", "260331"
	fmt.Fprintf(&b, ":60F:%s%sEUR%s\n", mark, first, amount)
	for _, e := range entries {
		c := cents(e.amount)
		balance += c
		mark, amount := mt(c)
		d := strings.ReplaceAll(e.date, "-", "")[2:]
		ref := "NONREF"
		fmt.Fprintf(&b, ":61:%s%s%s%sNTRF%s", d, d[2:], mark, amount, ref)
		if e.ref != "" {
			fmt.Fprintf(&b, "//%s", e.ref)
		}
		fmt.Fprintf(&b, "\n:86:106?00SEPA?20%s?30BYLADEM1001?31%s?32%s\n", e.text, e.iban, e.name)
	}
	mark, amount = mt(balance)
	fmt.Fprintf(&b, ":62F:%s%sEUR%s\n-\n", mark, last, amount)
	return []byte(b.String())
}

const account = "DE89370400440532013000"

func (f *fixture) mustImport(t *testing.T, data []byte) *db.BankStatement {
	t.Helper()
	in, err := bankimport.Read(data)
	if err != nil {
		t.Fatalf("Import: got %v, want nil", err)
	}
	s, err := f.store.ImportStatement(context.Background(), f.clientID, *in, nil)
	if err != nil {
		t.Fatalf("ImportStatement: got %v, want nil", err)
	}
	return s
}

// mustDocument stores a file and records its reading as the analysis
// does, with the fields given.
func (f *fixture) mustDocument(t testing.TB, kind string, fields db.DocumentFields) string {
	t.Helper()
	ctx := context.Background()
	id := f.mustStore(t, "invoice.pdf", []byte("%PDF-1.4 "+db.NewID()))
	jobs, err := f.store.ClaimAnalyses(ctx, db.LaneFast, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.FileID != id {
			continue
		}
		if _, _, err := f.store.FinishAnalysis(ctx, j, db.AnalysisResult{Status: db.AnalysisDone, Kind: &kind, Fields: &fields}); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func (f *fixture) mustStore(t testing.TB, name string, content []byte) string {
	t.Helper()
	pending, err := f.files.Write(bytes.NewReader(content), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	id := db.NewID()
	if err := f.files.Keep(pending, id, func() error {
		_, err := f.store.CreateFile(context.Background(), f.clientID, db.FileCreate{ID: id, WorkspaceID: f.ws, Name: name,
			MimeType: "application/octet-stream", Size: pending.Size, SHA256: pending.SHA256})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// drain works the queue until it is empty.
func (f *fixture) drain(t testing.TB) {
	t.Helper()
	if _, err := f.worker.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) transactions(t *testing.T) []*db.Transaction {
	t.Helper()
	page, err := f.store.ListTransactions(context.Background(), f.clientID, db.TransactionFilter{},
		db.PageRequest{Limit: 100, Sort: "bookingDate"})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

func ptr[T any](v T) *T { return &v }

func TestImportAgain(t *testing.T) {
	f := newFixture(t)
	march := []entry{
		{date: "2026-03-12", amount: "-49.99", ref: "BANKREF1", name: "Amazon EU S.a r.l.", text: "Order 302"},
		{date: "2026-03-15", amount: "1000.00", name: "Mueller", text: "RE-2026-017"},
		{date: "2026-03-15", amount: "1000.00", name: "Mueller", text: "RE-2026-017"},
	}
	s := f.mustImport(t, mt940(account, "2000.00", march...))
	if s.TransactionCount != 3 || s.DuplicateCount != 0 {
		t.Errorf("first import: got %d new, %d known, want 3, 0", s.TransactionCount, s.DuplicateCount)
	}
	again := f.mustImport(t, mt940(account, "2000.00", march...))
	if !again.Known || again.ID != s.ID {
		t.Errorf("same file again: got %+v, want the statement imported before", again)
	}
	overlap := f.mustImport(t, mt940(account, "2950.01", march[0], entry{date: "2026-03-20", amount: "-5.00", name: "Bank", text: "Fee"}))
	if overlap.TransactionCount != 1 || overlap.DuplicateCount != 1 {
		t.Errorf("overlapping file: got %d new, %d known, want 1, 1", overlap.TransactionCount, overlap.DuplicateCount)
	}
	if got := len(f.transactions(t)); got != 4 {
		t.Errorf("transactions: got %d, want 4", got)
	}
	a, err := f.store.FindBankAccount(context.Background(), f.clientID, s.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Balance == nil || *a.Balance != 289502000 || overlap.AccountID != s.AccountID {
		t.Errorf("account: got balance %v of %s, want 2895.02 of the one account %s", a.Balance, overlap.AccountID, s.AccountID)
	}
}

func TestMatching(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	invoice := f.mustDocument(t, "invoice", db.DocumentFields{Values: map[string]string{document.DocumentNumber: "RE-2026-0042", document.IssueDate: "2026-03-01", document.Currency: "EUR", document.TotalAmount: "49.99", document.IssuerName: "Amazon EU S.a r.l."}})
	f.mustDocument(t, "receipt", db.DocumentFields{Values: map[string]string{document.IssueDate: "2026-03-10", document.Currency: "EUR", document.TotalAmount: "12.50"}})
	f.mustDocument(t, "receipt", db.DocumentFields{Values: map[string]string{document.IssueDate: "2026-03-11", document.Currency: "EUR", document.TotalAmount: "12.50"}})
	f.mustImport(t, mt940(account, "100.00",
		entry{date: "2026-03-12", amount: "-49.99", name: "Amazon EU S.a r.l.", text: "RE-2026-0042"},
		entry{date: "2026-03-13", amount: "-12.50", name: "Cafe", text: "Coffee"},
		entry{date: "2026-03-14", amount: "-12.50", name: "Cafe", text: "Coffee again"},
		entry{date: "2026-03-15", amount: "-7.00", name: "Kiosk", text: "Paper"}))
	f.drain(t)
	txs := f.transactions(t)
	want := map[string]string{"RE-2026-0042": db.TransactionMatched, "Coffee": db.TransactionSuggested,
		"Coffee again": db.TransactionSuggested, "Paper": db.TransactionUnmatched}
	for _, tx := range txs {
		if got := tx.Status; got != want[*tx.RemittanceInfo] {
			t.Errorf("transaction %q: got %s, want %s (matches %+v)", *tx.RemittanceInfo, got, want[*tx.RemittanceInfo], tx.Matches)
		}
	}
	matched := txs[0]
	if len(matched.Matches) != 1 || matched.Matches[0].FileID != invoice || matched.Matches[0].Source != db.MatchAuto ||
		!strings.Contains(strings.Join(matched.Matches[0].Reasons, " "), "documentNumber") {
		t.Errorf("matched transaction's matches: got %+v, want the invoice, auto, for its number", matched.Matches)
	}
	if n := len(txs[1].Matches); n != 2 {
		t.Errorf("suggestions for a coffee: got %d, want both receipts", n)
	}

	// A person's decision stays when matching runs again.
	if _, err := f.store.UpdateTransaction(ctx, f.clientID, txs[1].ID, db.TransactionUpdate{
		Ignored: db.Update[bool]{Set: true, Value: ptr(true)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.UpdateTransaction(ctx, f.clientID, txs[2].ID, db.TransactionUpdate{
		FileIDs: db.Update[[]string]{Set: true, Value: &[]string{}}}); err != nil {
		t.Fatal(err)
	}
	f.mustDocument(t, "receipt", db.DocumentFields{Values: map[string]string{document.IssueDate: "2026-03-12", document.Currency: "EUR", document.TotalAmount: "12.50"}})
	f.drain(t)
	after := f.transactions(t)
	if after[1].Status != db.TransactionIgnored || after[2].Status != db.TransactionUnmatched || len(after[2].Matches) != 0 {
		t.Errorf("after matching again: got %s and %s %+v, want ignored and unmatched without matches",
			after[1].Status, after[2].Status, after[2].Matches)
	}
}

// TestStatementUploadedAsFile: the statement the analysis parsed is
// imported with its reading, once however often the file is read, and the
// file's bank job finds nothing to do.
func TestStatementUploadedAsFile(t *testing.T) {
	f := newFixture(t)
	data := mt940(account, "0.00", entry{date: "2026-03-12", amount: "-49.99", ref: "R1", name: "A", text: "x"})
	id := f.mustStore(t, "march.sta", data)
	in, err := bankimport.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	read := db.AnalysisResult{Status: db.AnalysisDone, Kind: ptr("bank_statement"), Statement: in}
	for range 2 {
		jobs, err := f.store.ClaimAnalyses(context.Background(), db.LaneFast, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if _, _, err := f.store.FinishAnalysis(context.Background(), j, read); err != nil {
				t.Fatal(err)
			}
		}
		f.drain(t)
		page, err := f.store.ListBankStatements(context.Background(), f.clientID, "", db.PageRequest{Limit: 10, Sort: "createdAt"})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 || page.Items[0].FileID == nil || *page.Items[0].FileID != id || page.Items[0].TransactionCount != 1 {
			t.Fatalf("statements after the file's reading: got %+v, want one from file %s with one transaction", page.Items, id)
		}
		// Read again, the file is not imported twice.
		if _, err := f.store.QueueAnalysis(context.Background(), f.clientID, id); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRun(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.worker.Run(ctx) }()
	f.mustDocument(t, "invoice", db.DocumentFields{Values: map[string]string{document.DocumentNumber: "INV-7", document.IssueDate: "2026-03-01", document.TotalAmount: "1.00"}})
	f.mustImport(t, mt940(account, "0.00", entry{date: "2026-03-12", amount: "-1.00", name: "A", text: "INV-7"}))
	deadline := time.Now().Add(10 * time.Second)
	for f.transactions(t)[0].Status != db.TransactionMatched {
		if time.Now().After(deadline) {
			t.Fatal("the running worker did not match the transaction")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: got %v, want nil", err)
	}
}

// BenchmarkImportAndMatch imports a statement of 10,000 entries and matches
// them against 2,000 documents, 1,000 of them named by a payment.
func BenchmarkImportAndMatch(b *testing.B) {
	var entries []entry
	for i := range 10_000 {
		entries = append(entries, entry{date: fmt.Sprintf("2026-03-%02d", 1+i%28), amount: fmt.Sprintf("-%d.%02d", 10+i%500, i%100),
			ref: fmt.Sprintf("R%d", i), name: fmt.Sprintf("Supplier %d", i%300), text: fmt.Sprintf("INV-%05d", i)})
	}
	data := mt940(account, "1000000.00", entries...)
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b)
		for i := range 2_000 {
			e := entries[i*5]
			f.mustDocument(b, "invoice", db.DocumentFields{Values: map[string]string{document.DocumentNumber: fmt.Sprintf("INV-%05d", i*5+i%2), document.IssueDate: "2026-02-20", document.TotalAmount: strings.TrimPrefix(e.amount, "-")}})
		}
		f.drain(b)
		b.StartTimer()
		in, err := bankimport.Read(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.store.ImportStatement(context.Background(), f.clientID, *in, nil); err != nil {
			b.Fatal(err)
		}
		f.drain(b)
		b.StopTimer()
		page, err := f.store.ListTransactions(context.Background(), f.clientID, db.TransactionFilter{Status: db.TransactionMatched},
			db.PageRequest{Limit: 1, Sort: "bookingDate"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(page.Total), "matched")
		b.StartTimer()
	}
}

// A person's correction of a document's total is what matching reads: the
// corrected document is matched to the payment of its corrected amount.
func TestMatchingReadsCorrectedTotal(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	invoice := f.mustDocument(t, "invoice", db.DocumentFields{Values: map[string]string{document.DocumentNumber: "RE-77",
		document.IssueDate: "2026-03-01", document.Currency: "EUR", document.TotalAmount: "37.62"}})
	f.mustImport(t, mt940(account, "300.00",
		entry{date: "2026-03-12", amount: "-235.62", ref: "R77", name: "Muster GmbH", text: "RE-77"}))
	f.drain(t)
	if txs := f.transactions(t); txs[0].Status != db.TransactionUnmatched {
		t.Fatalf("before the correction: got %s, want unmatched", txs[0].Status)
	}
	if _, err := f.store.UpdateFile(ctx, f.clientID, invoice, db.FileUpdate{
		Fields: map[string]*string{document.TotalAmount: ptr("235.62")}}); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	txs := f.transactions(t)
	if txs[0].Status != db.TransactionMatched || len(txs[0].Matches) != 1 || txs[0].Matches[0].FileID != invoice {
		t.Errorf("after the correction: got %s %+v, want matched to the invoice", txs[0].Status, txs[0].Matches)
	}
}

// TestPaymentsNotOneToOne runs the worker over a client's own invoices, a
// discount, instalments and one transfer for two invoices, and checks each
// document's direction and payment state, and what a person's decision
// does to them.
func TestPaymentsNotOneToOne(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.store.UpdateClient(ctx, f.firmID, f.clientID, db.ClientUpdate{
		VATIDs: db.Update[[]string]{Set: true, Value: &[]string{"DE811223344"}}}); err != nil {
		t.Fatal(err)
	}
	doc := func(kind, number, date, total, issuer, vat string, terms *db.PaymentTerms) string {
		return f.mustDocument(t, kind, db.DocumentFields{Values: map[string]string{document.DocumentNumber: number,
			document.IssueDate: date, document.Currency: "EUR", document.TotalAmount: total, document.IssuerName: issuer,
			document.IssuerVATID: vat}, Terms: terms})
	}
	sales := doc("invoice", "AR-2026-15", "2026-03-06", "1428.00", "Client", "DE811223344", &db.PaymentTerms{BuyerName: "Hotel Adler GmbH"})
	skonto := doc("invoice", "RE-2026-0205", "2026-03-02", "2000.00", "Müller Mehl GmbH", "DE999999999",
		&db.PaymentTerms{DiscountPercent: "2", DiscountDueDate: "2026-03-16"})
	instalments := doc("invoice", "EK-2026-17", "2026-03-04", "1500.00", "Elektro Krause GmbH", "DE888888888", nil)
	first := doc("invoice", "MB-2026-090", "2026-03-02", "210.00", "Molkerei Berger eG", "DE777777777", nil)
	second := doc("invoice", "MB-2026-091", "2026-03-05", "185.50", "Molkerei Berger eG", "DE777777777", nil)
	unpaid := doc("invoice", "ZN-511", "2026-03-02", "800.00", "Zucker Nord AG", "DE666666666", nil)
	// Another client of the firm holds the invoice a payment names.
	client, err := f.store.CreateClient(ctx, f.firmID, db.ClientCreate{Name: "Other", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := f.store.CreateWorkspace(ctx, client.ID, "Accounts")
	if err != nil {
		t.Fatal(err)
	}
	other := *f
	other.clientID, other.ws = client.ID, ws.ID
	other.mustDocument(t, "invoice", db.DocumentFields{Values: map[string]string{document.DocumentNumber: "HV-2026-900",
		document.IssueDate: "2026-03-02", document.Currency: "EUR", document.TotalAmount: "300.00", document.IssuerName: "Hofmann"}})
	f.mustImport(t, mt940(account, "10000.00",
		entry{date: "2026-03-19", amount: "1428.00", name: "HOTEL ADLER", text: "Rechnung AR-2026-15"},
		entry{date: "2026-03-14", amount: "-1960.00", name: "MUELLER MEHL", text: "RE-2026-0205 abzgl. 2% Skonto"},
		entry{date: "2026-03-25", amount: "-1000.00", name: "ELEKTRO KRAUSE", text: "EK-2026-17 Anzahlung"},
		entry{date: "2026-03-18", amount: "-395.50", name: "MOLKEREI BERGER", text: "MB-2026-090 MB-2026-091"},
		entry{date: "2026-03-20", amount: "-700.00", name: "ZUCKER NORD", text: "ZN-511"},
		entry{date: "2026-03-21", amount: "-300.00", name: "HOFMANN", text: "HV-2026-900"}))
	f.drain(t)

	state := func(id string) string {
		t.Helper()
		file, err := f.store.FindFile(ctx, f.clientID, id)
		if err != nil {
			t.Fatal(err)
		}
		p := file.Payment
		s := fmt.Sprintf("%v", p.Direction)
		if p.Direction != nil {
			s = *p.Direction
		}
		if p.Status != nil {
			s += " " + *p.Status + " " + fmt.Sprint(*p.OpenAmount/1000)
		}
		return s
	}
	for _, tc := range []struct{ id, want string }{
		{sales, "issued paid 0"},
		{skonto, "received paid 0"},
		{instalments, "received partial 50000"},
		{first, "received paid 0"},
		{second, "received paid 0"},
		{unpaid, "received open 80000"},
	} {
		if got := state(tc.id); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.id, got, tc.want)
		}
	}
	txs := f.transactions(t)
	want := map[string]string{"Rechnung AR-2026-15": "amount", "RE-2026-0205 abzgl. 2% Skonto": "discount",
		"EK-2026-17 Anzahlung": "partial", "MB-2026-090 MB-2026-091": "combined", "ZN-511": "", "HV-2026-900": ""}
	for _, tx := range txs {
		reason := ""
		if tx.Status == db.TransactionMatched {
			reason = tx.Matches[0].Reasons[0]
		}
		if reason != want[*tx.RemittanceInfo] {
			t.Errorf("%q: got %s by %q (matches %+v), want matched by %q", *tx.RemittanceInfo, tx.Status, reason, tx.Matches, want[*tx.RemittanceInfo])
		}
		if m := tx.Matches; *tx.RemittanceInfo == "Rechnung AR-2026-15" && (len(m) != 1 || m[0].FileName != "invoice.pdf" ||
			m[0].DocumentNumber == nil || *m[0].DocumentNumber != "AR-2026-15" || m[0].TotalAmount == nil || *m[0].TotalAmount != 142800000) {
			t.Errorf("the sales invoice's match: got %+v, want its file name, number and total beside it", m)
		}
		if *tx.RemittanceInfo == "HV-2026-900" && len(tx.Matches) != 0 {
			t.Errorf("another client's invoice: got %+v, want no candidate", tx.Matches)
		}
		if *tx.RemittanceInfo == "MB-2026-090 MB-2026-091" && len(tx.Matches) != 2 {
			t.Errorf("the combined payment: got %d documents, want 2", len(tx.Matches))
		}
	}

	// A person confirms the wrong-amount payment for the open invoice: it
	// becomes partial; the rest stays open.
	for _, tx := range txs {
		if *tx.RemittanceInfo == "ZN-511" {
			if _, err := f.store.UpdateTransaction(ctx, f.clientID, tx.ID, db.TransactionUpdate{
				FileIDs: db.Update[[]string]{Set: true, Value: &[]string{unpaid}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.drain(t)
	if got := state(unpaid); got != "received partial 10000" {
		t.Errorf("after a person's confirmation: got %s, want received partial 10000", got)
	}
	page, err := f.store.ListFiles(ctx, f.clientID, db.FileFilter{Direction: db.DirectionIssued}, db.PageRequest{Limit: 10, Sort: "createdAt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].ID != sales {
		t.Errorf("issued documents: got %d, want the sales invoice alone", len(page.Items))
	}
}

// TestInstalmentsAcrossStatements: two payments naming an invoice, neither
// saying it is a part, in two statements: the first waits for a person,
// and the second, which completes the total, matches both.
func TestInstalmentsAcrossStatements(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	invoice := f.mustDocument(t, "invoice", db.DocumentFields{Values: map[string]string{document.DocumentNumber: "EK-2026-30",
		document.IssueDate: "2026-03-05", document.Currency: "EUR", document.TotalAmount: "720.00", document.IssuerName: "Elektro Krause GmbH"}})
	f.mustImport(t, mt940(account, "5000.00", entry{date: "2026-03-19", amount: "-360.00", name: "ELEKTRO KRAUSE", text: "EK-2026-30"}))
	f.drain(t)
	if txs := f.transactions(t); len(txs) != 1 || txs[0].Status != db.TransactionSuggested {
		t.Fatalf("after the first half: got %+v, want it suggested", txs)
	}
	f.mustImport(t, mt940(account, "4640.00", entry{date: "2026-04-02", amount: "-360.00", name: "ELEKTRO KRAUSE", text: "EK-2026-30 Rest"}))
	f.drain(t)
	for _, tx := range f.transactions(t) {
		if tx.Status != db.TransactionMatched || tx.Matches[0].FileID != invoice || tx.Matches[0].Reasons[0] != "partial" {
			t.Errorf("%q: got %s %+v, want matched to the invoice in part", *tx.RemittanceInfo, tx.Status, tx.Matches)
		}
	}
	file, err := f.store.FindFile(ctx, f.clientID, invoice)
	if err != nil {
		t.Fatal(err)
	}
	if p := file.Payment; p.Status == nil || *p.Status != db.PaymentPaid {
		t.Errorf("the invoice: got %v, want paid", p.Status)
	}
}
