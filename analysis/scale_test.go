package analysis_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/analysis"
	"acctapi/docread/pdftest"
	"acctapi/ocr"
	"acctapi/ocr/ocrtest"
)

// scaleSize is the number the environment variable name gives, or def.
func scaleSize(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// TestScaleScenario measures reading at a firm's scale: client A's photos
// queued for OCR, then client B's e-invoices, a one-page text PDF and a
// photo; how long each of B's waits, and how long the whole set takes, with
// the process's peak RSS. Minutes of work: it runs only with
// ACCTAPI_SCALE=1; ACCTAPI_SCALE_PHOTOS (default 100) and
// ACCTAPI_SCALE_DOCS (B's e-invoices and text PDFs, default 50 each) size
// it. Real Tesseract when installed, else a stand-in taking 3 s a page.
func TestScaleScenario(t *testing.T) {
	if os.Getenv("ACCTAPI_SCALE") != "1" {
		t.Skip("minutes of reading: run with ACCTAPI_SCALE=1")
	}
	engine, err := ocr.New(ocr.Options{})
	if err != nil {
		t.Logf("OCR: %v; a stand-in of 3 s a page reads the photos", err)
		engine = fakeOCR(t, 3*time.Second)
	}
	photos, docs := scaleSize(t, "ACCTAPI_SCALE_PHOTOS", 100), scaleSize(t, "ACCTAPI_SCALE_DOCS", 50)
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, TempDir: t.TempDir(),
		OCR: engine, Workers: runtime.NumCPU()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f.worker.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	owners := map[string]string{}
	uploaded := map[string]time.Time{}
	store := func(clientID, ws, name, mimeType string, data []byte) string {
		id := f.mustStoreFor(t, clientID, ws, name, mimeType, data)
		owners[id], uploaded[id] = clientID, time.Now()
		return id
	}
	for i := range photos {
		page := ocrtest.Page(1240, 1754, 26, []string{"Bäckerei Schmidt", "Kassenbon", fmt.Sprintf("Bon-Nr. %d", 1000+i),
			"Datum 12.03.2026", "Brötchen 6x       2,40", "Kaffee            3,20", "Summe EUR         5,60"})
		store(f.clientID, f.ws, fmt.Sprintf("photo-%03d.jpg", i), "image/jpeg", encode(t, ocrtest.Photo(page, 1.5, 50, 215, 10, uint64(i)), true))
	}
	queued := time.Since(start)
	bClient, bWS := f.addClient(t, "Client B")
	xmls, err := filepath.Glob("../einvoice/testdata/*.xml")
	if err != nil || len(xmls) == 0 {
		t.Fatalf("no e-invoices: %v", err)
	}
	kinds := map[string]string{}
	for i := range docs {
		id := store(bClient, bWS, fmt.Sprintf("einvoice-%03d.xml", i), "application/xml", mustRead(t, xmls[i%len(xmls)]))
		kinds[id] = "e-invoice"
		text := pdftest.Document([]string{"Stadtwerke Leipzig GmbH", "Rechnung Nr. SW-" + strconv.Itoa(4000+i),
			"Rechnungsdatum 02.03.2026", "Gesamtbetrag 84,20 EUR"})
		id = store(bClient, bWS, fmt.Sprintf("text-%03d.pdf", i), "application/pdf", text)
		kinds[id] = "text PDF"
	}
	id := store(bClient, bWS, "receipt.jpg", "image/jpeg", encode(t, ocrtest.Photo(invoicePage(), 1.5, 50, 215, 10, 7), true))
	kinds[id] = "photo"

	read := f.waitRead(t, owners, 2*time.Hour)
	total := time.Since(start)
	waits := map[string][]time.Duration{}
	var aLast time.Time
	for id, at := range read {
		if kind, ok := kinds[id]; ok {
			waits[kind] = append(waits[kind], at.Sub(uploaded[id]))
		} else if at.After(aLast) {
			aLast = at
		}
	}
	for _, kind := range []string{"e-invoice", "text PDF", "photo"} {
		w := waits[kind]
		slices.Sort(w)
		t.Logf("B's %s: %d read, wait median %s, max %s", kind, len(w), w[len(w)/2].Round(time.Millisecond), w[len(w)-1].Round(time.Millisecond))
	}
	status, _ := os.ReadFile("/proc/self/status")
	var hwm string
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			hwm = strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	t.Logf("%d photos of A queued in %s; all %d files read in %s (A's last photo at %s); OCR workers %d; peak RSS of the test process %s",
		photos, queued.Round(time.Millisecond), len(read), total.Round(time.Second), aLast.Sub(start).Round(time.Second), runtime.NumCPU(), hwm)
}
