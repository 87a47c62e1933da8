package analysis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docfields"
	"acctapi/docread/pdftest"
	"acctapi/einvoice"
	"acctapi/ocr/ocrtest"
	"acctapi/testprog"
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
//
// With sources (the documents' texts by name), every miss is told with
// the lines of the page that show the value and what was read there (see
// missReport); without, the first 25 misses in a line each.
func score(t *testing.T, f *fixture, label string, ids map[string]string, truths map[string]evalTruth, took time.Duration,
	sources map[string]string) map[string][2]int {
	t.Helper()
	right, shown := map[string]int{}, map[string]int{}
	var misses []string
	for id, name := range ids {
		file := f.mustFind(t, id)
		got, want := fieldsOf(file), truthValues(truths[name])
		if file.Analysis.Status != db.AnalysisDone {
			// Every field the page shows is missed.
			t.Logf("%s: %s (%s)", name, file.Analysis.Status, str(file.Analysis.Reason))
			got = map[string]string{}
		}
		for _, field := range evalFields {
			if want[field] == "" {
				continue
			}
			shown[field]++
			if got[field] == want[field] {
				right[field]++
			} else if sources != nil {
				read := ""
				if text, err := f.store.FindFileText(context.Background(), f.clientID, id); err == nil {
					read = text.Text
				}
				misses = append(misses, missReport(name, field, got[field], want[field], sources[name], read))
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
	if sources != nil {
		t.Logf("accuracy per field, where the page shows it:\n%s\nmisses:\n%s", table.String(), strings.Join(misses, ""))
		return out
	}
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
	testprog.SkipShort(t, "reads the whole evaluation set through PDFium")
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
	scores := score(t, f, "text-layer PDFs", ids, truths, time.Since(start), nil)
	// A floor that a broken pipeline falls under, not the goal.
	for _, field := range []string{"kind", "issueDate", "totalAmount"} {
		if s := scores[field]; 100*s[0] < 80*s[1] {
			t.Errorf("%s right in %d of %d documents: the pipeline is broken", field, s[0], s[1])
		}
	}
}

// TestPhotoEval photographs the first ACCTAPI_EVAL_PHOTOS documents of the
// evaluation set, every page, and reads them as serve reads an uploaded
// photo (a page's JPEG) or scan (a PDF of the pages' photos), with OCR;
// it prints the accuracy per field, and each miss with the lines OCR read
// where the page shows the value. A few seconds a page:
//
//	ACCTAPI_EVAL_PHOTOS=24 go test ./analysis -run TestPhotoEval/plain -v
//
// plain draws each page at 150 dpi in 12-point Liberation Sans, turned
// 1.5°, dim and noisy, as a JPEG. hard varies what phones and printers do:
// 10-point type on half the pages, DejaVu Serif on half, turns of 0.5° to
// 3° either way, a shadow across a third of the pages and a slant (the
// photo taken from below the page's middle) on a fifth.
func TestPhotoEval(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ACCTAPI_EVAL_PHOTOS"))
	if n <= 0 {
		t.Skip("set ACCTAPI_EVAL_PHOTOS=N to photograph and read N documents of the evaluation set")
	}
	engine := mustOCR(t)
	names, texts, truths := evalSet(t)
	names = names[:min(n, len(names))]
	for _, set := range []struct {
		name  string
		photo func(i int, page []string) *image.Gray
	}{{"plain", photoPlain}, {"hard", photoHard}} {
		t.Run(set.name, func(t *testing.T) {
			f := newFixture(t)
			f.worker = analysis.New(analysis.Options{Store: f.store, Files: f.files, Reader: reader, OCR: engine, Workers: 2, TempDir: t.TempDir()})
			ids, pages := map[string]string{}, 0
			for i, name := range names {
				var photos []*image.Gray
				for _, page := range strings.Split(texts[name], "\f") {
					photos = append(photos, set.photo(i, strings.Split(strings.TrimRight(page, "\n"), "\n")))
				}
				pages += len(photos)
				if len(photos) == 1 {
					ids[f.mustStore(t, name+".jpg", "image/jpeg", encode(t, photos[0], true))] = name
					continue
				}
				// A scan of several pages: the photos, as JPEG left them, in a PDF.
				for k, p := range photos {
					img, err := jpeg.Decode(bytes.NewReader(encode(t, p, true)))
					if err != nil {
						t.Fatal(err)
					}
					photos[k] = img.(*image.Gray)
				}
				ids[f.mustStore(t, name+".pdf", "application/pdf", pdftest.Scan(photos...))] = name
			}
			start, cpu := time.Now(), cpuTime()
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
			took, cpu := time.Since(start), cpuTime()-cpu
			t.Logf("%d pages, %.2f s a page, %.2f s of processor time a page (tesseract's and ours)", pages,
				took.Seconds()/float64(pages), cpu.Seconds()/float64(pages))
			score(t, f, "phone photos (OCR), "+set.name, ids, truths, took, texts)
		})
	}
}

// photoPlain is the i-th document's page as the plain set photographs it.
func photoPlain(i int, page []string) *image.Gray {
	return ocrtest.Photo(ocrtest.Page(1240, 1754, 26, page), 1.5, 50, 215, 10, uint64(i))
}

// photoHard is the i-th document's page as the hard set photographs it.
func photoHard(i int, page []string) *image.Gray {
	faces, size := ocrtest.Sans, 26.0
	if i%4 == 1 || i%4 == 2 {
		faces = ocrtest.Serif
	}
	if i%2 == 0 {
		size = 21 // 10 points at 150 dpi
	}
	shot := ocrtest.Shot{Degrees: []float64{1.5, -0.5, 3, -2, 0.8, -1.2}[i%6], Lo: 50, Hi: 215, Sigma: 10, Seed: uint64(i)}
	if i%3 == 0 {
		shot.Shade = 0.35
	}
	if i%5 == 0 {
		shot.Keystone = 0.04
	}
	return shot.Take(ocrtest.PageIn(faces, 1240, 1754, size, page))
}

// fieldsOf are a read file's kind, fields and document date by the
// evaluation's names.
func fieldsOf(f *db.File) map[string]string {
	out := map[string]string{"kind": str(f.Kind), "documentDate": f.DocumentDate.Format(time.DateOnly)}
	if fl := f.Analysis.Fields; fl != nil {
		for name, v := range fl.Values {
			out[name] = v
		}
	}
	return out
}

// truthValues is a truth by the evaluation's names: the file's document date is
// the document's issue date.
func truthValues(tr evalTruth) map[string]string {
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
	testprog.SkipShort(t, "reads every e-invoice PDF of docread/testdata")
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
			"kind": {got.Kind, xml.Kind}, "documentNumber": {got.Fields.DocumentNumber, xml.DocumentNumber},
			"issueDate": {got.Fields.IssueDate, xml.IssueDate}, "dueDate": {got.Fields.DueDate, xml.DueDate},
			"currency": {got.Fields.Currency, xml.Currency}, "netAmount": {got.Fields.NetAmount, xml.NetAmount},
			"taxAmount": {got.Fields.TaxAmount, xml.TaxAmount}, "totalAmount": {got.Fields.TotalAmount, xml.TotalAmount},
			"issuerName": {got.Fields.IssuerName, xml.IssuerName}, "issuerVatId": {got.Fields.IssuerVATID, xml.IssuerVATID},
			"issuerIban": {got.Fields.IssuerIBAN, xml.IssuerIBAN},
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

// missReport tells why a field of a photo was missed: the value expected
// and the one read, the source line that shows the value, and the lines OCR
// read there (the OCR line most like the source line, with its
// neighbours), so that a misread value tells from a wrong choice.
func missReport(name, field, got, want, source, read string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: read %q, want %q\n", name, field, got, want)
	src, ocr := strings.Split(source, "\n"), strings.Split(read, "\n")
	at := -1
	if field != "kind" {
		for i, l := range src {
			if shows(l, field, want) {
				at = i
				break
			}
		}
	}
	if at < 0 {
		// The kind, or a value the source does not spell as the truth
		// does: the heading.
		for i, l := range src {
			if strings.TrimSpace(l) != "" {
				at = i
				break
			}
		}
	}
	if at < 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "    page: %s\n", strings.TrimSpace(src[at]))
	best, bestD := -1, 1.0
	key := []rune(fold(src[at]))
	for i, l := range ocr {
		k := []rune(fold(l))
		if len(k) == 0 {
			continue
		}
		if d := float64(editDistance(k, key)) / float64(max(len(k), len(key))); d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		b.WriteString("    OCR:  (nothing like it)\n")
		return b.String()
	}
	for i := max(best-1, 0); i <= min(best+1, len(ocr)-1); i++ {
		mark := " "
		if i == best {
			mark = ">"
		}
		fmt.Fprintf(&b, "    OCR %s %s\n", mark, ocr[i])
	}
	return b.String()
}

// shows says whether a line of the source shows a field's value, as the
// truth spells it.
func shows(line, field, want string) bool {
	switch field {
	case "netAmount", "taxAmount", "totalAmount":
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, line)
		return strings.Contains(digits, strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, want))
	case "issueDate", "dueDate", "documentDate":
		d, err := time.Parse(time.DateOnly, want)
		return err == nil && strings.Contains(line, strconv.Itoa(d.Year())) &&
			strings.Contains(line, strconv.Itoa(d.Day()))
	}
	return strings.Contains(fold(line), fold(want))
}

// fold keeps a string's letters and digits, in lower case.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b []rune) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
