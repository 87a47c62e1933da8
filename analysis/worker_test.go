package analysis_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docread"
	"acctapi/document"
	"acctapi/filestore"
)

// fixture is a real store, file store and PDF reader with one client's
// workspace.
type fixture struct {
	store    *db.DB
	files    *filestore.Store
	worker   *analysis.Worker
	firmID   string
	clientID string
	ws       string
}

// reader is shared by the tests: its start-up (compiling PDFium) is paid
// once, as serve pays it.
var reader *docread.Reader

func TestMain(m *testing.M) {
	var err error
	reader, err = docread.NewReader(context.Background(), docread.Options{
		Instances: 2, CacheDir: filepath.Join(os.TempDir(), "acctapi-docread-test-cache")})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	reader.Close()
	os.Exit(code)
}

func newFixture(t *testing.T) *fixture {
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
	return &fixture{store: store, files: files, firmID: firm.ID, clientID: client.ID, ws: ws.ID,
		worker: analysis.New(analysis.Options{Store: store, Files: files, Reader: reader, TempDir: dir})}
}

// mustStore stores content as a file of the workspace, as an upload does.
func (f *fixture) mustStore(t *testing.T, name, mimeType string, content []byte) string {
	t.Helper()
	return f.mustStoreFor(t, f.clientID, f.ws, name, mimeType, content)
}

// mustStoreFor stores content as a file of another client's workspace.
func (f *fixture) mustStoreFor(t *testing.T, clientID, ws, name, mimeType string, content []byte) string {
	t.Helper()
	pending, err := f.files.Write(bytes.NewReader(content), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	id := db.NewID()
	if err := f.files.Keep(pending, id, func() error {
		_, err := f.store.CreateFile(context.Background(), clientID, db.FileCreate{ID: id, WorkspaceID: ws, Name: name,
			MimeType: mimeType, Size: pending.Size, SHA256: pending.SHA256})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *fixture) mustFind(t *testing.T, id string) *db.File {
	t.Helper()
	file, err := f.store.FindFile(context.Background(), f.clientID, id)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestWorkerReadsFiles(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	facturX := f.mustStore(t, "invoice.pdf", "application/pdf", mustRead(t, "../docread/testdata/factur-x-en16931.pdf"))
	xrechnung := f.mustStore(t, "xrechnung.xml", "application/xml", mustRead(t, "../einvoice/testdata/xrechnung-ubl-creditnote.xml"))
	plain := f.mustStore(t, "notes.txt", "text/plain", []byte("Steuerberater Müller\nBelege für März"))
	otherXML := f.mustStore(t, "feed.xml", "application/xml", []byte(`<?xml version="1.0"?><feed><title>Nachrichten</title></feed>`))
	image := f.mustStore(t, "photo.png", "image/png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"))
	fake := f.mustStore(t, "random.pdf", "application/pdf", bytes.Repeat([]byte{0x17, 0x99, 0x03}, 1000))
	truncated := f.mustStore(t, "truncated.pdf", "application/pdf", mustRead(t, "../docread/testdata/factur-x-en16931.pdf")[:900])

	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}

	got := f.mustFind(t, facturX)
	a := got.Analysis
	if a.Status != db.AnalysisDone || str(a.Source) != "einvoice" || a.Fields == nil || a.Fields.EInvoice == nil ||
		a.Fields.EInvoice.Syntax != "CII" || str(got.Kind) != "invoice" || str(got.KindSource) != db.SourceAnalysis {
		t.Fatalf("Factur-X PDF: %+v, kind %s", a, str(got.Kind))
	}
	if a.Fields.Value(document.IssueDate) == nil || got.DocumentDate.Format(time.DateOnly) != *a.Fields.Value(document.IssueDate) ||
		str(got.DocumentDateSource) != db.SourceAnalysis {
		t.Errorf("Factur-X PDF: document date %s (%s), issue date %s", got.DocumentDate, str(got.DocumentDateSource), str(a.Fields.Value(document.IssueDate)))
	}
	text, err := f.store.FindFileText(ctx, f.clientID, facturX)
	if err != nil || text.Source != db.TextFromPDF || text.Pages < 1 || strings.TrimSpace(text.Text) == "" {
		t.Errorf("Factur-X PDF's text: %+v, %v", text, err)
	}

	got = f.mustFind(t, xrechnung)
	if got.Analysis.Status != db.AnalysisDone || str(got.Analysis.Source) != "einvoice" || str(got.Kind) != "credit_note" ||
		got.Analysis.Fields.EInvoice.Syntax != "UBL" || got.Analysis.Fields.Value(document.TotalAmount) == nil {
		t.Errorf("XRechnung credit note: %+v, kind %s", got.Analysis, str(got.Kind))
	}
	if text, err := f.store.FindFileText(ctx, f.clientID, xrechnung); err != nil || text.Source != db.TextFromEInvoice {
		t.Errorf("XRechnung's text: %+v, %v", text, err)
	}

	for id, want := range map[string]string{plain: "Müller", otherXML: "Nachrichten"} {
		got := f.mustFind(t, id)
		text, err := f.store.FindFileText(ctx, f.clientID, id)
		if got.Analysis.Status != db.AnalysisDone || str(got.Analysis.Source) != "text" ||
			err != nil || !strings.Contains(text.Text, want) || got.Analysis.Fields == nil || got.Analysis.Fields.EInvoice != nil {
			t.Errorf("%s: %+v, text %+v, %v", got.Name, got.Analysis, text, err)
		}
	}

	for id, want := range map[string]string{image: db.AnalysisSkipped, fake: db.AnalysisFailed, truncated: db.AnalysisFailed} {
		got := f.mustFind(t, id)
		if got.Analysis.Status != want || got.Analysis.Reason == nil || *got.Analysis.Reason == "" || got.Analysis.Fields != nil {
			t.Errorf("%s: %+v, want %s with a reason", got.Name, got.Analysis, want)
		}
		if _, err := f.store.FindFileText(ctx, f.clientID, id); db.ErrorCode(err) != db.ENOTFOUND {
			t.Errorf("%s: text %v, want none", got.Name, err)
		}
	}

	// Search finds what the readers read.
	for q, want := range map[string]string{"muller belege": plain, "nachrichten": otherXML} {
		search, _ := db.ParseSearch(q)
		page, err := f.store.ListFiles(ctx, f.clientID, db.FileFilter{Query: search}, db.PageRequest{Limit: 10, Sort: "createdAt", Desc: true})
		if err != nil || len(page.Items) != 1 || page.Items[0].ID != want {
			t.Errorf("q=%s: %v, %v", q, page, err)
		}
	}
	// Nothing is left to read.
	if jobs, err := f.store.ClaimAnalyses(ctx, db.LaneFast, 10); err != nil || len(jobs) != 0 {
		t.Errorf("jobs left: %v, %v", jobs, err)
	}
}

// A file whose reading broke off twice (the process died reading it) ends
// failed without a third reading; a reading that ended is never repeated.
func TestWorkerGivesUpOnFilesThatBreakIt(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := f.mustStore(t, "notes.txt", "text/plain", []byte("hello"))
	for range db.MaxAnalysisAttempts {
		if jobs, err := f.store.ClaimAnalyses(ctx, db.LaneFast, 1); err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %v, %v", jobs, err)
		}
		// The process died: the next start releases the claim.
		if err := f.store.ReleaseAnalysisClaims(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	got := f.mustFind(t, id)
	if got.Analysis.Status != db.AnalysisFailed || !strings.Contains(str(got.Analysis.Reason), "stopped the reader") {
		t.Errorf("after two broken readings: %+v", got.Analysis)
	}

	// Queued again by a person, it is read again from scratch.
	if _, err := f.store.QueueAnalysis(ctx, f.clientID, id); err != nil {
		t.Fatal(err)
	}
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.mustFind(t, id); got.Analysis.Status != db.AnalysisDone {
		t.Errorf("read again: %+v", got.Analysis)
	}
}

// A reading recorded after its job was queued again is dropped: the newer
// job reads the file.
func TestFinishAfterRequeue(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := f.mustStore(t, "notes.txt", "text/plain", []byte("hello"))
	jobs, err := f.store.ClaimAnalyses(ctx, db.LaneFast, 1)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v, %v", jobs, err)
	}
	if _, err := f.store.QueueAnalysis(ctx, f.clientID, id); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := f.store.FinishAnalysis(ctx, jobs[0], db.AnalysisResult{Status: db.AnalysisDone}); err != nil || ok {
		t.Errorf("finish a superseded job: ok %v, %v", ok, err)
	}
	if got := f.mustFind(t, id); got.Analysis.Status != db.AnalysisPending {
		t.Errorf("after a superseded finish: %+v", got.Analysis)
	}
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.mustFind(t, id); got.Analysis.Status != db.AnalysisDone {
		t.Errorf("after the newer job: %+v", got.Analysis)
	}
}

// A file whose bytes are gone ends failed with the reason.
func TestWorkerMissingBytes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := f.mustStore(t, "notes.txt", "text/plain", []byte("hello"))
	if err := f.files.Remove(id); err != nil {
		t.Fatal(err)
	}
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.mustFind(t, id); got.Analysis.Status != db.AnalysisFailed || !strings.Contains(str(got.Analysis.Reason), "missing") {
		t.Errorf("missing bytes: %+v", got.Analysis)
	}
}

// Run reads what is queued while it runs, and stops when told.
func TestWorkerRun(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.worker.Run(ctx) }()
	var ids []string
	for i := range 5 {
		ids = append(ids, f.mustStore(t, "n.txt", "text/plain", []byte(strings.Repeat("word ", i+1))))
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for f.mustFind(t, id).Analysis.Status == db.AnalysisPending {
			if time.Now().After(deadline) {
				t.Fatalf("file %s not read", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Format characters (a right-to-left override, a zero-width space, a byte
// order mark) leave the text and the fields read, from a document's text
// and from an e-invoice's XML alike, as they leave names.
func TestWorkerDropsFormatControls(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	xml := mustRead(t, "../einvoice/testdata/xrechnung-ubl-creditnote.xml")
	xml = bytes.Replace(xml, []byte("EntServ Deutschland GmbH"), []byte("Ent\u202EServ Deutschland\u2066 GmbH"), 1)
	xml = bytes.Replace(xml, []byte("<cbc:ID>1234567890</cbc:ID>"), []byte("<cbc:ID>1234\u200B567890</cbc:ID>"), 1)
	invoice := f.mustStore(t, "xrechnung.xml", "application/xml", xml)
	plain := f.mustStore(t, "rechnung.txt", "text/plain",
		[]byte("Muster\u202EGmbH\nRechnung\nRechnungsnummer: RE-\uFEFF2026-0042\nRechnungsdatum: 12.03.2026\nGesamtbetrag: 119,00 EUR"))
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	bad := func(s string) bool { return strings.ContainsAny(s, "\u202E\u2066\u200B\uFEFF") }
	got := f.mustFind(t, invoice).Analysis
	if got.Status != db.AnalysisDone || str(got.Fields.Value(document.IssuerName)) != "EntServ Deutschland GmbH" || str(got.Fields.Value(document.DocumentNumber)) != "1234567890" {
		t.Errorf("e-invoice: status %s, issuer %q, number %q", got.Status, str(got.Fields.Value(document.IssuerName)), str(got.Fields.Value(document.DocumentNumber)))
	}
	got = f.mustFind(t, plain).Analysis
	if got.Status != db.AnalysisDone || str(got.Fields.Value(document.DocumentNumber)) != "RE-2026-0042" {
		t.Errorf("text: status %s, number %q", got.Status, str(got.Fields.Value(document.DocumentNumber)))
	}
	for _, id := range []string{invoice, plain} {
		text, err := f.store.FindFileText(ctx, f.clientID, id)
		if err != nil || bad(text.Text) || !strings.Contains(text.Text, "GmbH") && !strings.Contains(text.Text, "EntServ Deutschland GmbH") {
			t.Errorf("text %q, %v", text.Text, err)
		}
	}
}

// A bank statement uploaded as a plain file is known for one: its kind and
// its date (the last day it covers) are exact, not guessed from its words;
// its reading imports it, once however often it is read.
func TestWorkerKnowsBankStatements(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	camt := mustRead(t, "../db/seed/demo/statement.xml")
	mt940 := []byte(":20:STMT1\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:60F:C260301EUR100,00\r\n" +
		":61:2603120312DR49,99NTRFNONREF\r\n:86:106?20RE-2026-0042?32Amazon EU\r\n:62F:C260331EUR50,01\r\n-")
	for _, c := range []struct {
		name, mimeType string
		content        []byte
		date           string
	}{
		{"statement.xml", "application/xml", camt, "2026-09-30"},
		{"statement.sta", "text/plain", mt940, "2026-03-31"},
	} {
		id := f.mustStore(t, c.name, c.mimeType, c.content)
		if err := f.worker.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		file := f.mustFind(t, id)
		if file.Analysis.Status != db.AnalysisDone || str(file.Kind) != document.BankStatement ||
			str(file.Analysis.Fields.Value(document.IssueDate)) != c.date {
			t.Errorf("%s: got %s, kind %q, date %q, want done, bank_statement, %s", c.name, file.Analysis.Status,
				str(file.Kind), str(file.Analysis.Fields.Value(document.IssueDate)), c.date)
		}
		for range 2 {
			page, err := f.store.ListBankStatements(ctx, f.clientID, "", db.PageRequest{Limit: 10, Sort: "createdAt"})
			if err != nil {
				t.Fatal(err)
			}
			var from []string
			for _, s := range page.Items {
				from = append(from, str(s.FileID))
			}
			if !slices.Contains(from, id) || len(from) != slices.Index([]string{"statement.xml", "statement.sta"}, c.name)+1 {
				t.Fatalf("%s: the statements are from files %v, want one from each file read, %s last", c.name, from, id)
			}
			if _, err := f.store.QueueAnalysis(ctx, f.clientID, id); err != nil {
				t.Fatal(err)
			}
			if err := f.worker.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}
