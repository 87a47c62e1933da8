package analysis_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docread/pdftest"
	"acctapi/document"
	"acctapi/ocr"
	"acctapi/ocr/ocrtest"
	"acctapi/testprog"
)

// mustOCR starts tesseract, skipping the test where it is missing (failing
// it under CI=true).
func mustOCR(t *testing.T) *ocr.Engine {
	t.Helper()
	engine, err := ocr.New(ocr.Options{})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("OCR: %v", err)
		}
		t.Skipf("OCR: %v; install it with apt-get install tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng", err)
	}
	return engine
}

// invoicePage is an invoice as a 150-dpi scan of an A4 page shows it.
func invoicePage() *image.Gray {
	return ocrtest.Page(1240, 1754, 30, []string{
		"Muster Elektro GmbH",
		"Hauptstraße 5, 04109 Leipzig",
		"",
		"Rechnung",
		"Rechnungsnummer:   RE-2026-0042",
		"Rechnungsdatum:    05.03.2026",
		"",
		"Nettobetrag        47,16 EUR",
		"Umsatzsteuer 19%    8,96 EUR",
		"Gesamtbetrag       56,12 EUR",
		"",
		"USt-IdNr. DE123475223",
	})
}

func encode(t *testing.T, img image.Image, asJPEG bool) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	if asJPEG {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 60})
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Images and scanned PDFs are read with OCR, then as any text.
func TestWorkerReadsScansWithOCR(t *testing.T) {
	testprog.SkipShort(t, "reads three scans with Tesseract")
	engine := mustOCR(t)
	ctx := context.Background()
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, OCR: engine, TempDir: t.TempDir()})
	page := invoicePage()
	ids := map[string]string{
		"scan.png":  f.mustStore(t, "scan.png", "image/png", encode(t, page, false)),
		"photo.jpg": f.mustStore(t, "photo.jpg", "image/jpeg", encode(t, ocrtest.Photo(page, 2.5, 60, 200, 12, 1), true)),
		"scan.pdf":  f.mustStore(t, "scan.pdf", "application/pdf", pdftest.Scan(page)),
	}
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	for name, id := range ids {
		got := f.mustFind(t, id)
		a := got.Analysis
		if a.Status != db.AnalysisDone || str(a.Source) != db.TextFromOCR || a.Fields == nil {
			t.Errorf("%s: %+v (%s)", name, a, str(a.Reason))
			continue
		}
		if str(got.Kind) != "invoice" || str(a.Fields.Value(document.TotalAmount)) != "56.12" || str(a.Fields.Value(document.IssueDate)) != "2026-03-05" ||
			!strings.Contains(str(a.Fields.Value(document.DocumentNumber)), "2026-0042") {
			t.Errorf("%s: kind %s, fields %s %s %s", name, str(got.Kind), str(a.Fields.Value(document.DocumentNumber)), str(a.Fields.Value(document.IssueDate)), str(a.Fields.Value(document.TotalAmount)))
		}
		if text, err := f.store.FindFileText(ctx, f.clientID, id); err != nil || text.Source != db.TextFromOCR {
			t.Logf("%s's text: %q", name, text.Text)
			t.Errorf("%s: text %+v, %v", name, text, err)
		}
	}
}

// Without OCR, images and scans are skipped with the reason, to be read
// again once it is installed.
func TestWorkerWithoutOCR(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, NoOCR: "OCR is turned off (--ocr off)", TempDir: t.TempDir()})
	page := invoicePage()
	png := f.mustStore(t, "scan.png", "image/png", encode(t, page, false))
	pdf := f.mustStore(t, "scan.pdf", "application/pdf", pdftest.Scan(page))
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{png, pdf} {
		got := f.mustFind(t, id)
		if got.Analysis.Status != db.AnalysisSkipped || !strings.Contains(str(got.Analysis.Reason), "OCR is turned off") {
			t.Errorf("%s: %+v (%s)", got.Name, got.Analysis, str(got.Analysis.Reason))
		}
	}
}

// pngHeader is the start of a PNG of w × h pixels of three 16-bit samples:
// its header, which is all the reader looks at before it refuses it.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32([]byte("IHDR"), w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 16, 2, 0, 0, 0)
	out := binary.BigEndian.AppendUint32([]byte("\x89PNG\r\n\x1a\n"), 13)
	out = append(out, ihdr...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(ihdr))
}

// An image whose decoding would take more than its budget ends failed with
// the reason, from its header, once: it is the file's failure, not one to
// retry.
func TestWorkerRefusesImagesOverBudget(t *testing.T) {
	engine := mustOCR(t)
	ctx := context.Background()
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, OCR: engine, TempDir: t.TempDir()})
	id := f.mustStore(t, "huge.png", "image/png", pngHeader(8944, 8944))
	if err := f.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	a := f.mustFind(t, id).Analysis
	if want := "the image is 8944 × 8944 pixels, 3 samples of 16 bits: 611 MiB once decoded, over the 128 MiB a page may take"; a.Status != db.AnalysisFailed || str(a.Reason) != want {
		t.Errorf("got %s %q, want failed %q", a.Status, str(a.Reason), want)
	}
	for _, lane := range []string{db.LaneFast, db.LaneOCR} {
		if jobs, err := f.store.ClaimAnalyses(ctx, lane, 10); err != nil || len(jobs) != 0 {
			t.Errorf("jobs left in the %s lane: %v, %v", lane, jobs, err)
		}
	}
}
