package analysis_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docread/pdftest"
	"acctapi/document"
	"acctapi/ocr"
)

// fakeOCR is an engine whose tesseract is a script that reads every page as
// the word "Rechnung" after sleeping delay: OCR's cost without Tesseract,
// and the same on every machine.
func fakeOCR(t *testing.T, delay time.Duration) *ocr.Engine {
	t.Helper()
	script := filepath.Join(t.TempDir(), "tesseract")
	body := fmt.Sprintf(`#!/bin/sh
case "$1" in
--version) echo "tesseract 5.3.0"; exit 0;;
--list-langs) echo 'List of available languages in "/fake/" (2):'; echo deu; echo eng; exit 0;;
esac
cat >/dev/null
sleep %.3f
printf 'level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n'
printf '5\t1\t1\t1\t1\t1\t10\t10\t120\t20\t95\tRechnung\n'
`, delay.Seconds())
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	engine, err := ocr.New(ocr.Options{Path: script})
	if err != nil {
		t.Fatal(err)
	}
	return engine
}

// photo is a small PNG, which only OCR reads.
func photo(t *testing.T) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 400, 200))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// addClient adds a client of the fixture's firm with a workspace.
func (f *fixture) addClient(t *testing.T, name string) (clientID, ws string) {
	t.Helper()
	ctx := context.Background()
	client, err := f.store.CreateClient(ctx, f.firmID, db.ClientCreate{Name: name, Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.store.CreateWorkspace(ctx, client.ID, "Accounts")
	if err != nil {
		t.Fatal(err)
	}
	return client.ID, w.ID
}

// waitRead waits until every file of owners (a file's id to its client's)
// has been read, and says when each was seen read.
func (f *fixture) waitRead(t *testing.T, owners map[string]string, within time.Duration) map[string]time.Time {
	t.Helper()
	read := map[string]time.Time{}
	deadline := time.Now().Add(within)
	for len(read) < len(owners) {
		for id, clientID := range owners {
			if _, ok := read[id]; ok {
				continue
			}
			file, err := f.store.FindFile(context.Background(), clientID, id)
			if err != nil {
				t.Fatal(err)
			}
			if file.Analysis.Status != db.AnalysisPending {
				read[id] = time.Now()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d files read within %s", len(read), len(owners), within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return read
}

// E-invoices and text-layer PDFs are read in the fast lane while a client's
// photos wait for OCR, and within the OCR lane another client's photo goes
// before the first client's last ones.
func TestLanesAndTurns(t *testing.T) {
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, TempDir: t.TempDir(),
		OCR: fakeOCR(t, 300*time.Millisecond), Workers: 1, FastWorkers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.worker.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	const photos = 12
	var a []string
	for i := range photos {
		a = append(a, f.mustStore(t, fmt.Sprintf("photo-%02d.png", i), "image/png", photo(t)))
	}
	bClient, bWS := f.addClient(t, "Client B")
	b := []string{
		f.mustStoreFor(t, bClient, bWS, "invoice.xml", "application/xml", mustRead(t, "../einvoice/testdata/en16931-cii-example5.xml")),
		f.mustStoreFor(t, bClient, bWS, "zugferd.pdf", "application/pdf", mustRead(t, "../docread/testdata/zugferd2-invoice.pdf")),
	}
	bPhoto := f.mustStoreFor(t, bClient, bWS, "receipt.png", "image/png", photo(t))

	owners := map[string]string{}
	for _, id := range b {
		owners[id] = bClient
	}
	bRead := f.waitRead(t, owners, time.Minute)
	aPending := 0
	for _, id := range a {
		if f.mustFind(t, id).Analysis.Status == db.AnalysisPending {
			aPending++
		}
	}
	// Twelve photos take 3.6 s of OCR: B's documents, milliseconds each,
	// did not wait for them.
	if aPending < photos/2 {
		t.Errorf("B's e-invoices were read after %d of A's %d photos: they waited for OCR", photos-aPending, photos)
	}
	for _, id := range b {
		file, err := f.store.FindFile(ctx, bClient, id)
		if err != nil {
			t.Fatal(err)
		}
		if file.Analysis.Status != db.AnalysisDone || str(file.Analysis.Source) != db.TextFromEInvoice {
			t.Errorf("%s: %s from %s (%s), want done from the e-invoice", file.Name, file.Analysis.Status, str(file.Analysis.Source), str(file.Analysis.Reason))
		}
	}

	owners = map[string]string{bPhoto: bClient}
	for _, id := range a {
		owners[id] = f.clientID
	}
	read := f.waitRead(t, owners, 2*time.Minute)
	after := 0
	for _, id := range a {
		if read[id].After(read[bPhoto]) {
			after++
		}
	}
	if after < photos/2 {
		t.Errorf("B's photo was read after %d of A's %d photos, which were queued before it: clients did not take turns", photos-after, photos)
	}
	for id, clientID := range owners {
		file, err := f.store.FindFile(ctx, clientID, id)
		if err != nil {
			t.Fatal(err)
		}
		if file.Analysis.Status != db.AnalysisDone || str(file.Analysis.Source) != db.TextFromOCR {
			t.Errorf("%s: %s from %s (%s), want done with OCR", file.Name, file.Analysis.Status, str(file.Analysis.Source), str(file.Analysis.Reason))
		}
	}
	last := func(m map[string]time.Time) time.Time {
		var v []time.Time
		for _, t := range m {
			v = append(v, t)
		}
		return slices.MaxFunc(v, time.Time.Compare)
	}
	t.Logf("B's e-invoices were read %s before the last of A's photos; B's photo before %d of them", last(read).Sub(last(bRead)), after)
}

// An OCR that runs past the document's budget ends the file failed, with
// the reason, at once: it is not retried as if the file store had failed.
func TestOCRPastItsBudgetFails(t *testing.T) {
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, TempDir: t.TempDir(),
		OCR: fakeOCR(t, 5*time.Second), OCRBudget: time.Second})
	ctx := context.Background()
	id := f.mustStore(t, "photo.png", "image/png", photo(t))
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	file := f.mustFind(t, id)
	if want := "reading with OCR took longer than the 1 s a document may take"; file.Analysis.Status != db.AnalysisFailed || str(file.Analysis.Reason) != want {
		t.Errorf("analysis %s (%s), want failed (%s)", file.Analysis.Status, str(file.Analysis.Reason), want)
	}
	queue, err := f.store.AnalysisQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if queue.Pending != 0 {
		t.Errorf("%d jobs still queued: the file is read again", queue.Pending)
	}
}

// A PDF with a text layer and a scanned page is read from its text layer in
// the fast lane, at once, while its client's photos wait for OCR; the OCR
// lane then reads it whole and records it again with the scanned page's
// text, the text layer's values kept.
func TestTextPDFNotBehindPhotos(t *testing.T) {
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, TempDir: t.TempDir(),
		OCR: fakeOCR(t, 300*time.Millisecond), Workers: 1, FastWorkers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.worker.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	const photos = 12
	owners := map[string]string{}
	for i := range photos {
		owners[f.mustStore(t, fmt.Sprintf("photo-%02d.png", i), "image/png", photo(t))] = f.clientID
	}
	blank := image.NewGray(image.Rect(0, 0, 400, 560))
	for i := range blank.Pix {
		blank.Pix[i] = 0xff
	}
	letter := pdftest.TextAndScan([]string{"Rechnung Nr. RE-2026-77", "Rechnungsdatum: 05.03.2026", "Gesamtbetrag: 119,00 EUR"}, blank)
	pdf := f.mustStore(t, "letter.pdf", "application/pdf", letter)

	f.waitRead(t, map[string]string{pdf: f.clientID}, time.Minute)
	pending := 0
	for id := range owners {
		if f.mustFind(t, id).Analysis.Status == db.AnalysisPending {
			pending++
		}
	}
	if pending < photos/2 {
		t.Errorf("the text PDF was read after %d of the client's %d photos: it waited for OCR", photos-pending, photos)
	}
	first := f.mustFind(t, pdf).Analysis
	if first.Status != db.AnalysisDone || str(first.Source) != db.TextFromPDF || first.Fields == nil ||
		str(first.Fields.Value(document.DocumentNumber)) != "RE-2026-77" || str(first.Fields.Value(document.TotalAmount)) != "119.00" {
		t.Fatalf("the first reading: %+v (%s)", first, str(first.Reason))
	}

	// The OCR lane reads it again, after the photos queued before it.
	owners[pdf] = f.clientID
	deadline := time.Now().Add(2 * time.Minute)
	for {
		text, err := f.store.FindFileText(context.Background(), f.clientID, pdf)
		if err == nil && strings.Contains(text.Text, "\fRechnung") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scanned page was not read with OCR within 2 minutes (text %+v, %v)", text, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.waitRead(t, owners, 2*time.Minute)
	again := f.mustFind(t, pdf).Analysis
	if again.Status != db.AnalysisDone || again.Fields == nil || str(again.Fields.Value(document.DocumentNumber)) != "RE-2026-77" ||
		str(again.Fields.Value(document.TotalAmount)) != "119.00" {
		t.Errorf("the reading with OCR: %+v (%s)", again, str(again.Reason))
	}
}
