package analysis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docfields"
	"acctapi/docread/pdftest"
	"acctapi/einvoice"
	"acctapi/ocr/ocrtest"
)

// evalTruth is what an evaluation document says, as docfields' evaluation
// set states it.
type evalTruth struct {
	Kind    string            `json:"kind"`
	Variant string            `json:"variant"`
	Fields  map[string]string `json:"fields"`
}

// evalFields are the fields scored, in the table's order.
var evalFields = []string{"kind", "documentNumber", "issueDate", "dueDate", "currency", "netAmount", "taxAmount",
	"totalAmount", "issuerName", "issuerVatId", "issuerIban", "documentDate"}

// evalSet loads the truths and texts of docfields' evaluation set, without
// its OCR-noise copies: the readers here make their own pages of each.
func evalSet(t *testing.T) (names []string, texts map[string]string, truths map[string]evalTruth) {
	t.Helper()
	texts, truths = map[string]string{}, map[string]evalTruth{}
	paths, err := filepath.Glob("../docfields/testdata/eval/*/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no evaluation set: %v", err)
	}
	for _, p := range paths {
		var tr evalTruth
		if err := json.Unmarshal(mustRead(t, p), &tr); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if tr.Variant == "ocr" {
			continue
		}
		name := filepath.Base(strings.TrimSuffix(p, ".json"))
		names = append(names, name)
		texts[name] = string(mustRead(t, strings.TrimSuffix(p, ".json")+".txt"))
		truths[name] = tr
	}
	return names, texts, truths
}

// score reads every stored file of ids (name by id) and prints the
// accuracy per field against the truths, where the page shows the field.
func score(t *testing.T, f *fixture, label string, ids map[string]string, truths map[string]evalTruth, took time.Duration) map[string][2]int {
	t.Helper()
	right, shown := map[string]int{}, map[string]int{}
	var misses []string
	for id, name := range ids {
		file := f.mustFind(t, id)
		if file.Analysis.Status != db.AnalysisDone {
			t.Errorf("%s: %s (%s)", name, file.Analysis.Status, str(file.Analysis.Reason))
			continue
		}
		got, want := fieldsOf(file), maps(truths[name])
		for _, field := range evalFields {
			if want[field] == "" {
				continue
			}
			shown[field]++
			if got[field] == want[field] {
				right[field]++
			} else {
				misses = append(misses, fmt.Sprintf("%s %s: %q, want %q", name, field, got[field], want[field]))
			}
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%s: %d documents read in %v (%.2f s each)\n", label, len(ids), took.Round(time.Millisecond),
		took.Seconds()/float64(len(ids)))
	out := map[string][2]int{}
	for _, field := range evalFields {
		if shown[field] > 0 {
			fmt.Fprintf(&table, "%-15s %5.1f%% (%d of %d)\n", field, 100*float64(right[field])/float64(shown[field]), right[field], shown[field])
			out[field] = [2]int{right[field], shown[field]}
		}
	}
	slices.Sort(misses)
	t.Logf("accuracy per field, where the page shows it:\n%s\nsome misses:\n  %s", table.String(),
		strings.Join(misses[:min(len(misses), 25)], "\n  "))
	return out
}

// TestPipelineEval reads the evaluation set the way serve reads an upload:
// each clean document of docfields' set becomes a PDF with a text layer,
// stored, read by the worker (PDFium, then the field reader) and scored
// field by field against its truth, only where the page shows the field.
// It prints the accuracy per field:
//
//	go test ./analysis -run TestPipelineEval -v
func TestPipelineEval(t *testing.T) {
	f := newFixture(t)
	names, texts, truths := evalSet(t)
	ids := map[string]string{}
	for _, name := range names {
		ids[f.mustStore(t, name+".pdf", "application/pdf", pdftest.Document(pdftest.Paginate(texts[name], 80)...))] = name
	}
	start := time.Now()
	if err := f.worker.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	scores := score(t, f, "text-layer PDFs", ids, truths, time.Since(start))
	// A floor that a broken pipeline falls under, not the goal.
	for _, field := range []string{"kind", "issueDate", "totalAmount"} {
		if s := scores[field]; 100*s[0] < 80*s[1] {
			t.Errorf("%s right in %d of %d documents: the pipeline is broken", field, s[0], s[1])
		}
	}
}

// TestPhotoEval photographs the first ACCTAPI_EVAL_PHOTOS documents of the
// evaluation set (each drawn as a 150-dpi page in 12-point type, turned
// 1.5°, dim and noisy, as a JPEG) and reads them as serve reads an uploaded photo, with OCR; it
// prints the accuracy per field. A few seconds a document:
//
//	ACCTAPI_EVAL_PHOTOS=40 go test ./analysis -run TestPhotoEval -v
func TestPhotoEval(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ACCTAPI_EVAL_PHOTOS"))
	if n <= 0 {
		t.Skip("set ACCTAPI_EVAL_PHOTOS=N to photograph and read N documents of the evaluation set")
	}
	engine := mustOCR(t)
	f := newFixture(t)
	f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, OCR: engine, Workers: 2, TempDir: t.TempDir()})
	names, texts, truths := evalSet(t)
	ids := map[string]string{}
	for i, name := range names[:min(n, len(names))] {
		page := ocrtest.Page(1240, 1754, 26, strings.Split(strings.SplitN(texts[name], "\f", 2)[0], "\n"))
		photo := ocrtest.Photo(page, 1.5, 50, 215, 10, uint64(i))
		ids[f.mustStore(t, name+".jpg", "image/jpeg", encode(t, photo, true))] = name
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.worker.Run(ctx) }()
	for id := range ids {
		for f.mustFind(t, id).Analysis.Status == db.AnalysisPending {
			time.Sleep(50 * time.Millisecond)
		}
	}
	cancel()
	<-done
	score(t, f, "phone photos (OCR)", ids, truths, time.Since(start))
}

// fieldsOf are a read file's kind, fields and document date by the
// evaluation's names.
func fieldsOf(f *db.File) map[string]string {
	out := map[string]string{"kind": str(f.Kind), "documentDate": f.DocumentDate.Format(time.DateOnly)}
	if fl := f.Analysis.Fields; fl != nil {
		for name, v := range map[string]*string{"documentNumber": fl.DocumentNumber, "issueDate": fl.IssueDate,
			"dueDate": fl.DueDate, "currency": fl.Currency, "netAmount": fl.NetAmount, "taxAmount": fl.TaxAmount,
			"totalAmount": fl.TotalAmount, "issuerName": fl.IssuerName, "issuerVatId": fl.IssuerVATID, "issuerIban": fl.IssuerIBAN} {
			if v != nil {
				out[name] = *v
			}
		}
	}
	return out
}

// maps is a truth by the evaluation's names: the file's document date is
// the document's issue date.
func maps(tr evalTruth) map[string]string {
	out := map[string]string{"kind": tr.Kind, "documentDate": tr.Fields["issueDate"]}
	for k, v := range tr.Fields {
		out[k] = v
	}
	return out
}

// TestEInvoiceTextEval reads the e-invoice PDFs of the repository as if
// their XML had been taken out: the fields the text gives against the
// XML's, field by field, where the XML states them.
func TestEInvoiceTextEval(t *testing.T) {
	ctx := context.Background()
	paths, err := filepath.Glob("../docread/testdata/*.pdf")
	if err != nil {
		t.Fatal(err)
	}
	right, shown := map[string]int{}, map[string]int{}
	var misses []string
	for _, p := range paths {
		data := mustRead(t, p)
		doc, err := reader.Read(ctx, bytes.NewReader(data), int64(len(data)), filepath.Base(p), "application/pdf")
		if err != nil {
			continue // the encrypted fixtures
		}
		var xml *einvoice.Invoice
		for _, a := range doc.Attachments {
			if inv, err := einvoice.Parse(a.Data); err == nil {
				xml = inv
			}
		}
		if xml == nil {
			continue
		}
		pages := make([]string, len(doc.Pages))
		for i, pg := range doc.Pages {
			pages[i] = pg.Text
		}
		got := docfields.ReadPages(pages)
		for field, pair := range map[string][2]string{
			"kind": {got.Kind, xml.Kind}, "documentNumber": {got.Fields.DocumentNumber, xml.Number},
			"issueDate": {got.Fields.IssueDate, xml.IssueDate}, "dueDate": {got.Fields.DueDate, xml.DueDate},
			"currency": {got.Fields.Currency, xml.Currency}, "netAmount": {got.Fields.NetAmount, xml.NetAmount},
			"taxAmount": {got.Fields.TaxAmount, xml.TaxAmount}, "totalAmount": {got.Fields.TotalAmount, xml.TotalAmount},
			"issuerName": {got.Fields.IssuerName, xml.SellerName}, "issuerVatId": {got.Fields.IssuerVATID, xml.SellerVATID},
			"issuerIban": {got.Fields.IssuerIBAN, xml.SellerIBAN},
		} {
			if pair[1] == "" {
				continue
			}
			shown[field]++
			if sameAmount(pair[0], pair[1]) {
				right[field]++
			} else {
				misses = append(misses, fmt.Sprintf("%s %s: %q, the XML says %q", filepath.Base(p), field, pair[0], pair[1]))
			}
		}
	}
	var table strings.Builder
	for _, field := range evalFields {
		if shown[field] > 0 {
			fmt.Fprintf(&table, "%-15s %d of %d\n", field, right[field], shown[field])
		}
	}
	slices.Sort(misses)
	t.Logf("e-invoice PDFs read from their text alone:\n%s\nmisses:\n  %s", table.String(), strings.Join(misses, "\n  "))
}

// sameAmount says whether two values are equal, amounts by their value
// ("59.9" is "59.90").
func sameAmount(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}
