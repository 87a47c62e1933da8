package exports_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/datev"
	"acctapi/datev/datevtest"
	"acctapi/db"
	"acctapi/docfields"
	"acctapi/document"
	"acctapi/exports"
	"acctapi/filestore"
)

type fixture struct {
	t        testing.TB
	store    *db.DB
	files    *filestore.Store
	worker   *exports.Worker
	clientID string
	ws       string
	now      time.Time
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	f := &fixture{t: t, now: time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return f.now }
	store, err := db.Open(filepath.Join(dir, "acctapi.db"), db.Options{Now: clock})
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
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Muster Consulting GmbH", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, client.ID, "Belege")
	if err != nil {
		t.Fatal(err)
	}
	f.store, f.files, f.clientID, f.ws = store, files, client.ID, ws.ID
	f.worker = exports.New(exports.Options{Store: store, Files: files, Now: clock})
	return f
}

func (f *fixture) settings(chart string) {
	f.t.Helper()
	if _, err := f.store.PutLedgerSettings(context.Background(), f.clientID, db.LedgerSettings{Chart: &chart,
		ConsultantNumber: ptr(29098), ClientNumber: ptr(55003), FiscalYearStart: "01-01", AccountLength: 4}); err != nil {
		f.t.Fatal(err)
	}
}

// document stores a file of the kind dated day with its fields as a
// person corrected them.
func (f *fixture) document(name, kind string, day int, fields map[string]string) *db.File {
	f.t.Helper()
	ctx := context.Background()
	content := []byte("%PDF-1.4 " + name)
	p, err := f.files.Write(bytes.NewReader(content), 1<<20)
	if err != nil {
		f.t.Fatal(err)
	}
	date := time.Date(2026, 3, day, 0, 0, 0, 0, time.UTC)
	sum := sha256.Sum256(content)
	in := db.FileCreate{ID: db.NewID(), WorkspaceID: f.ws, Name: name, MimeType: "application/pdf", Size: int64(len(content)),
		SHA256: sum[:], DocumentDate: &date}
	if err := f.files.Keep(p, in.ID, func() error { _, err := f.store.CreateFile(ctx, f.clientID, in); return err }); err != nil {
		f.t.Fatal(err)
	}
	u := db.FileUpdate{Kind: db.Update[string]{Set: true, Value: &kind}, Fields: map[string]*string{}}
	for k, v := range fields {
		u.Fields[k] = &v
	}
	file, err := f.store.UpdateFile(ctx, f.clientID, in.ID, u)
	if err != nil {
		f.t.Fatal(err)
	}
	return file
}

func supplierKeys(name string) []string {
	return docfields.SupplierKeys(map[string]string{document.IssuerName: name})
}

func ptr[T any](v T) *T { return &v }

func fields(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// export queues an export of March 2026, runs the worker and returns the
// export and its ZIP.
func (f *fixture) export() (*db.Export, []byte) {
	f.t.Helper()
	return f.exportPeriod(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC))
}

// exportPeriod queues an export of the period, runs the worker and returns
// the export and its ZIP.
func (f *fixture) exportPeriod(from, to time.Time) (*db.Export, []byte) {
	f.t.Helper()
	ctx := context.Background()
	e, err := f.store.CreateExport(ctx, f.clientID, db.ExportCreate{Format: db.ExportDATEV, From: from, To: to})
	if err != nil {
		f.t.Fatal(err)
	}
	if n, err := f.worker.RunDue(ctx); n != 1 || err != nil {
		f.t.Fatalf("RunDue: %d exports (%v), want 1", n, err)
	}
	if e, err = f.store.FindExport(ctx, f.clientID, e.ID); err != nil {
		f.t.Fatal(err)
	}
	if e.Status != db.ExportDone {
		f.t.Fatalf("export: status %s (%v), want done", e.Status, e.Reason)
	}
	r, err := f.files.Open(ctx, e.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		f.t.Fatal(err)
	}
	if int64(len(data)) != *e.Size {
		f.t.Errorf("ZIP: %d bytes, the export says %d", len(data), *e.Size)
	}
	return e, data
}

// month stores a client's month: received and issued invoices, a credit
// note, receipts, two VAT rates on one invoice, umlauts and "€", a document
// without a number and one in dollars; and one of April.
func (f *fixture) month() map[string]*db.File {
	return map[string]*db.File{
		"bakery": f.document("baeckerei.pdf", document.Invoice, 5, fields(document.DocumentNumber, "RE 2026.001",
			document.IssuerName, "Bäckerei Müller GmbH", document.IssuerIBAN, "DE89370400440532013000",
			document.NetAmount, "100.00", document.TaxAmount, "19.00", document.TotalAmount, "119.00")),
		"office": f.document("buero.pdf", document.Invoice, 9, fields(document.DocumentNumber, "2026/77",
			document.IssuerName, "Büro € Bedarf – Schäfer KG", document.IssuerVATID, "DE123456789",
			document.NetAmount, "150.00", document.TaxAmount, "22.50", document.TotalAmount, "172.50")),
		"credit": f.document("gutschrift.pdf", document.CreditNote, 12, fields(document.DocumentNumber, "GS-4",
			document.IssuerName, "Bäckerei Müller GmbH", document.NetAmount, "-10.00", document.TaxAmount, "-1.90", document.TotalAmount, "-11.90")),
		"issued": f.document("rechnung-a17.pdf", document.Invoice, 31, fields(document.DocumentNumber, "A-17",
			document.IssuerName, "Muster Consulting GmbH", document.NetAmount, "5000.00", document.TaxAmount, "950.00", document.TotalAmount, "5950.00")),
		"receipt": f.document("kiosk.jpg", document.Receipt, 20, fields(document.DocumentNumber, "B1",
			document.IssuerName, "Kiosk am Markt", document.IssuerIBAN, "DE89370400440532013000", document.TotalAmount, "4.50")),
		"taxi": f.document("taxi.jpg", document.Receipt, 21, fields(document.DocumentNumber, "T 99",
			document.IssuerName, "Taxi Öztürk", document.NetAmount, "18.69", document.TaxAmount, "1.31", document.TotalAmount, "20.00")),
		"fuel": f.document("tankstelle.jpg", document.Receipt, 25, fields(document.DocumentNumber, "0815",
			document.IssuerName, "ARAL Tankstelle", document.TaxAmount, "9.50", document.TotalAmount, "59.50")),
		"nonumber": f.document("beleg.pdf", document.Receipt, 22, fields(document.IssuerName, "Parkhaus", document.TotalAmount, "3.00")),
		"dollars": f.document("aws.pdf", document.Invoice, 23, fields(document.DocumentNumber, "INV-1", document.Currency, "USD",
			document.IssuerName, "AWS", document.TotalAmount, "20.00")),
	}
}

func TestExportOfAMonth(t *testing.T) {
	f := newFixture(t)
	f.settings(db.ChartSKR03)
	docs := f.month()
	f.document("april.pdf", document.Invoice, 31+1, fields(document.DocumentNumber, "X1", document.IssuerName, "April GmbH",
		document.TotalAmount, "1.00"))
	e, data := f.export()
	got, err := datevtest.Validate(data)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if e.DocumentCount != 7 || e.RowCount != 8 || len(got.Rows) != 8 {
		t.Errorf("counts: %d documents, %d rows (%d in the CSV), want 7 and 8", e.DocumentCount, e.RowCount, len(got.Rows))
	}
	wantSkipped := map[string]string{docs["nonumber"].ID: "no number", docs["dollars"].ID: "USD"}
	if len(e.Skipped) != 2 {
		t.Errorf("skipped: %+v, want the document without a number and the one in dollars", e.Skipped)
	}
	for _, s := range e.Skipped {
		if !strings.Contains(s.Reason, wantSkipped[s.FileID]) || wantSkipped[s.FileID] == "" {
			t.Errorf("skipped %s: %q", s.FileID, s.Reason)
		}
	}
	// Each document's rows add up to its total, on the side its kind and
	// direction give, with the tax key of its rate.
	type want struct {
		total  int64
		credit bool
		keys   []string
		accts  []string
	}
	for name, w := range map[string]want{
		"bakery":  {11900, false, []string{"9"}, []string{"4900"}},
		"office":  {17250, false, []string{"9", "8"}, []string{"4900", "4900"}},
		"credit":  {1190, true, []string{"9"}, []string{"4900"}},
		"issued":  {595000, true, []string{"3"}, []string{"8200"}},
		"receipt": {450, false, []string{""}, []string{"4900"}},
		"taxi":    {2000, false, []string{"8"}, []string{"4900"}},
		"fuel":    {5950, false, []string{"9"}, []string{"4900"}},
	} {
		guid := datev.GUID(docs[name].ID)
		var sum int64
		var keys, accts []string
		for _, r := range got.Rows {
			if r.GUID != guid {
				continue
			}
			sum += r.Amount
			keys, accts = append(keys, r.TaxKey), append(accts, r.Account)
			if r.Credit != w.credit {
				t.Errorf("%s: side H %v, want %v", name, r.Credit, w.credit)
			}
		}
		if sum != w.total || !slices.Equal(keys, w.keys) || !slices.Equal(accts, w.accts) {
			t.Errorf("%s: rows add up to %d with keys %q on %q, want %d with %q on %q", name, sum, keys, accts, w.total, w.keys, w.accts)
		}
		if _, ok := got.Files[got.Documents[guid]]; !ok {
			t.Errorf("%s: its file is not in the ZIP", name)
		}
	}
	// One supplier, one account: the bakery's invoice and credit note share
	// theirs; the issued invoice's customer is a personal account of its own
	// range.
	accounts := map[string]string{}
	for _, r := range got.Rows {
		accounts[r.GUID] = r.ContraAccount
	}
	if a, b := accounts[datev.GUID(docs["bakery"].ID)], accounts[datev.GUID(docs["credit"].ID)]; a != b || a < "70000" {
		t.Errorf("the bakery's accounts: %s and %s, want one supplier account", a, b)
	}
	if a, b := accounts[datev.GUID(docs["bakery"].ID)], accounts[datev.GUID(docs["receipt"].ID)]; a == b {
		t.Errorf("the bakery and the kiosk, paid through one IBAN, share the account %s, want one each", a)
	}
	if a := accounts[datev.GUID(docs["issued"].ID)]; a < "10000" || a >= "70000" {
		t.Errorf("the customer's account: %s, want 10000-69999", a)
	}
	parties, err := f.store.ListCounterparties(context.Background(), f.clientID, db.PageRequest{Limit: 100, Sort: "createdAt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(parties.Items) != 6 {
		t.Errorf("counterparties: %d, want 6 (five suppliers, one customer)", len(parties.Items))
	}

	t.Run("the same period twice gives the same rows", func(t *testing.T) {
		_, again := f.export()
		second, err := datevtest.Validate(again)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Rows, second.Rows, func(a, b datevtest.Row) bool { return slices.Equal(a.Fields, b.Fields) }) {
			t.Error("the second export's rows differ from the first's")
		}
	})

	t.Run("a correction after export is listed", func(t *testing.T) {
		f.now = f.now.Add(time.Hour)
		total := "120.00"
		if _, err := f.store.UpdateFile(context.Background(), f.clientID, docs["bakery"].ID,
			db.FileUpdate{Fields: map[string]*string{document.TotalAmount: &total}}); err != nil {
			t.Fatal(err)
		}
		e, _ := f.export()
		if !slices.Equal(e.ChangedSinceExport, []string{docs["bakery"].ID}) {
			t.Errorf("changedSinceExport: %v, want the corrected file", e.ChangedSinceExport)
		}
	})

	t.Run("a person's booking is learned for the supplier", func(t *testing.T) {
		ctx := context.Background()
		if _, err := f.store.SetBooking(ctx, f.clientID, docs["bakery"].ID, db.BookingChoice{Account: "4650",
			Suppliers: supplierKeys("Bäckerei Müller GmbH")}); err != nil {
			t.Fatal(err)
		}
		_, data := f.export()
		got, err := datevtest.Validate(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got.Rows {
			if (r.GUID == datev.GUID(docs["bakery"].ID) || r.GUID == datev.GUID(docs["credit"].ID)) && r.Account != "4650" {
				t.Errorf("row %+v: account %s, want the person's 4650", r.Number, r.Account)
			}
		}
		credit, err := f.store.FindFile(ctx, f.clientID, docs["credit"].ID)
		if err != nil {
			t.Fatal(err)
		}
		if credit.Booking == nil || credit.Booking.Source != db.BookingLearned || *credit.Booking.Account != "4650" {
			t.Errorf("the credit note's booking: %+v, want the learned 4650", credit.Booking)
		}
		if len(credit.Exports) != 4 {
			t.Errorf("the credit note's exports: %d, want 4", len(credit.Exports))
		}
	})
}
