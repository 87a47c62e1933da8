package docfields

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"acctapi/document"
)

// fitDoc is one document of a real tier, analysed once.
type fitDoc struct {
	tier, name string
	// family is who made the document (a repository's seller, a shop);
	// fold is the fold its family is left out of a fit by.
	family string
	fold   int
	pages  []string
	a      *analysis
	truth  map[string]string
}

// folds is how many folds TestRealEval spreads the families over.
const folds = 5

// tiers are the real tiers TestRealEval writes, in the tables' order.
var tiers = []string{"invoices-text", "invoices-scan", "receipts-sroie"}

// TestFitWeights scores the amount and date readers' weights on the real
// tiers that TestRealEval (package analysis) wrote to ACCTAPI_EVAL_DIR/out.
// With ACCTAPI_EVAL_FIT=1 it fits them by family: for each fold, the
// weights that read the most totals, nets, taxes and issue dates right on
// the other folds' families, and a calibration of the confidence measured
// on those families' left-out readings; each document is then read by the
// fit that never saw its family, and DIR/out/<tier>.leftout.jsonl keeps
// that reading for TestRealEval to print as the headline. Last it fits on
// every family and rewrites amountweights.json, dateweights.json and
// calibration.json: what the reader ships.
func TestFitWeights(t *testing.T) {
	dir := os.Getenv("ACCTAPI_EVAL_DIR")
	if dir == "" {
		t.Skip("ACCTAPI_EVAL_DIR names no evaluation data")
	}
	var docs []fitDoc
	for _, tier := range tiers {
		docs = append(docs, readTier(t, filepath.Join(dir, "out", tier+".jsonl"), tier)...)
	}
	if len(docs) == 0 {
		t.Skip("no tier in DIR/out: run TestRealEval first")
	}
	all := func(fitDoc) bool { return true }
	t.Log("\nthe committed weights, right/shown by fold:\n" + foldTable(docs))
	if os.Getenv("ACCTAPI_EVAL_FIT") != "1" {
		return
	}
	committedA, committedD, committedC := weights, dateW, calibration
	defer func() { weights, dateW, calibration = committedA, committedD, committedC }()
	// Each fold's fit starts where the committed one stands and sees
	// only the other folds.
	type fit struct {
		a amountWeights
		d dateWeights
	}
	var fits [folds]fit
	for k := range folds {
		weights, dateW = committedA, committedD
		others := func(d fitDoc) bool { return d.fold != k }
		fitWeights(reflect.ValueOf(&weights).Elem(), func() int { return amountScore(docs, others) })
		fitWeights(reflect.ValueOf(&dateW).Elem(), func() int { return dateScore(docs, others) })
		fits[k] = fit{weights, dateW}
	}
	// The left-out readings, twice: first to measure each evidence class
	// on families a fit never saw, then with each fold's confidence
	// calibrated on the other folds' measure alone.
	measured := make([]Result, len(docs))
	for i, d := range docs {
		weights, dateW = fits[d.fold].a, fits[d.fold].d
		measured[i] = ReadPages(d.pages)
	}
	leftOut := make([]Result, len(docs))
	var report strings.Builder
	for k := range folds {
		weights, dateW = fits[k].a, fits[k].d
		calibration = calibrate(docs, measured, func(d fitDoc) bool { return d.fold != k }, nil)
		for i, d := range docs {
			if d.fold == k {
				leftOut[i] = ReadPages(d.pages)
			}
		}
	}
	weights, dateW = committedA, committedD
	fitWeights(reflect.ValueOf(&weights).Elem(), func() int { return amountScore(docs, all) })
	fitWeights(reflect.ValueOf(&dateW).Elem(), func() int { return dateScore(docs, all) })
	calibration = calibrate(docs, measured, all, &report)
	inFamily := make([]Result, len(docs))
	for i, d := range docs {
		inFamily[i] = ReadPages(d.pages)
	}
	t.Logf("\nthe fit on every family, right/shown by fold:\n%s\neach fold read by the fit that never saw it:\n%s\n%s",
		foldTable(docs), leftOutTable(docs, leftOut), report.String())
	for file, w := range map[string]any{"amountweights.json": weights, "dateweights.json": dateW, "calibration.json": calibration} {
		data, err := json.MarshalIndent(w, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeLeftOut(t, dir, docs, leftOut, inFamily)
}

// writeLeftOut writes, for each tier, every document's reading by the fit
// that never saw its family and its reading by the fit on every family
// (by which TestRealEval tells whether the file is stale).
func writeLeftOut(t *testing.T, dir string, docs []fitDoc, leftOut, inFamily []Result) {
	files := map[string]*bytes.Buffer{}
	for i, d := range docs {
		if files[d.tier] == nil {
			files[d.tier] = &bytes.Buffer{}
		}
		line, err := json.Marshal(map[string]any{"name": d.name, "family": d.family, "fold": d.fold,
			"leftOut":  map[string]any{"read": values(leftOut[i]), "confidence": leftOut[i].Confidence},
			"inFamily": map[string]any{"read": values(inFamily[i]), "confidence": inFamily[i].Confidence}})
		if err != nil {
			t.Fatal(err)
		}
		files[d.tier].Write(append(line, '\n'))
	}
	for tier, b := range files {
		if err := os.WriteFile(filepath.Join(dir, "out", tier+".leftout.jsonl"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// values are a reading's values by field name, as TestRealEval names them.
func values(r Result) map[string]string {
	f := r.Fields
	return map[string]string{"kind": r.Kind, document.DocumentNumber: f.DocumentNumber, document.IssueDate: f.IssueDate,
		document.DueDate: f.DueDate, document.Currency: f.Currency, document.NetAmount: f.NetAmount,
		document.TaxAmount: f.TaxAmount, document.TotalAmount: f.TotalAmount, document.IssuerName: f.IssuerName,
		document.IssuerVATID: f.IssuerVATID, document.IssuerIBAN: f.IssuerIBAN}
}

// fitWeights moves each weight of v in turn to the value that makes
// score highest, in one pass from where it stands, and returns the best
// score. One pass of four moves: a score over every tier costs a second
// or two, and six fits are made (one a fold and one on every family).
func fitWeights(v reflect.Value, score func() int) int {
	best := score()
	for i := range v.NumField() {
		f := v.Field(i)
		cur := f.Float()
		for _, next := range []float64{cur * 0.5, cur * 1.5, cur - 0.5, cur + 0.5} {
			next = math.Round(next*100) / 100
			if next == cur {
				continue
			}
			f.SetFloat(next)
			if s := score(); s > best {
				best, cur = s, next
			}
		}
		f.SetFloat(cur)
	}
	return best
}

// dateScore is how many issue dates of the documents kept are read right.
func dateScore(docs []fitDoc, keep func(fitDoc) bool) int {
	n := 0
	for _, d := range docs {
		if !keep(d) || d.truth[document.IssueDate] == "" {
			continue
		}
		if issue, _ := d.a.pickDates(); issue == d.truth[document.IssueDate] {
			n++
		}
	}
	return n
}

func readTier(t *testing.T, path, tier string) []fitDoc {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var docs []fitDoc
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var d struct {
			Name, Family string
			Fold         int
			Pages        []string
			Truth        map[string]string
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, fitDoc{tier: tier, name: d.Name, family: d.Family, fold: d.Fold, pages: d.Pages,
			a: analyze(newDoc(d.Pages)), truth: d.Truth})
	}
	return docs
}

var fitFields = []string{document.TotalAmount, document.NetAmount, document.TaxAmount}

// amountRight counts a document's amounts read as the truth states them.
func amountRight(d fitDoc) map[string]bool {
	net, tax, total, _ := d.a.pickAmounts()
	got := map[string]string{document.NetAmount: net, document.TaxAmount: tax, document.TotalAmount: total}
	right := map[string]bool{}
	for _, field := range fitFields {
		if w := d.truth[field]; w != "" {
			right[field] = sameCents(got[field], w)
		}
	}
	return right
}

// amountScore is how many amounts of the documents kept are read right,
// counted on two goroutines (the reader is safe for concurrent use, and
// the weights do not change while it counts).
func amountScore(docs []fitDoc, keep func(fitDoc) bool) int {
	var wg sync.WaitGroup
	var n [2]int
	for g := range 2 {
		wg.Go(func() {
			for i := g; i < len(docs); i += 2 {
				if !keep(docs[i]) {
					continue
				}
				for _, ok := range amountRight(docs[i]) {
					if ok {
						n[g]++
					}
				}
			}
		})
	}
	wg.Wait()
	return n[0] + n[1]
}

// foldTable is, for each tier and fitted field, how many of each fold's
// documents the weights now in force read right.
func foldTable(docs []fitDoc) string {
	return byFold(docs, func(i int, field string) bool { return fitRight(docs[i], field) })
}

// leftOutTable is foldTable for readings already made.
func leftOutTable(docs []fitDoc, read []Result) string {
	return byFold(docs, func(i int, field string) bool {
		return rightValue(field, values(read[i])[field], docs[i].truth[field])
	})
}

// byFold counts, for each tier and fitted field, the documents of each
// fold that right says are read right.
func byFold(docs []fitDoc, right func(i int, field string) bool) string {
	var b strings.Builder
	for _, tier := range tiers {
		for _, field := range append(slices.Clone(fitFields), document.IssueDate) {
			var ok, shown [folds]int
			for i, d := range docs {
				if d.tier != tier || d.truth[field] == "" {
					continue
				}
				shown[d.fold]++
				if right(i, field) {
					ok[d.fold]++
				}
			}
			writeFolds(&b, tier, field, ok, shown)
		}
	}
	return b.String()
}

func writeFolds(b *strings.Builder, tier, field string, right, shown [folds]int) {
	var r, n int
	for k := range folds {
		r, n = r+right[k], n+shown[k]
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "%-15s %-12s", tier, field)
	for k := range folds {
		fmt.Fprintf(b, " %4d/%-4d", right[k], shown[k])
	}
	fmt.Fprintf(b, "  all %4d/%-4d\n", r, n)
}

// fitRight says whether the weights in force read a fitted field right.
func fitRight(d fitDoc, field string) bool {
	if field == document.IssueDate {
		issue, _ := d.a.pickDates()
		return issue == d.truth[field]
	}
	return amountRight(d)[field]
}

// rightValue says whether a value read is the truth, for the fitted and
// calibrated fields: amounts by value, numbers without spaces or case,
// dates exactly.
func rightValue(field, got, want string) bool {
	switch field {
	case document.NetAmount, document.TaxAmount, document.TotalAmount:
		return sameCents(got, want)
	case document.DocumentNumber:
		strip := strings.NewReplacer(" ", "", "\u00a0", "")
		return got != "" && strings.EqualFold(strip.Replace(got), strip.Replace(want))
	}
	return got == want
}

func sameCents(got, want string) bool {
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && math.Round(g*100) == math.Round(w*100)
}

// minClassValues is how many values of an evidence class the families a
// calibration is measured on must hold for the class to be calibrated.
const minClassValues = 20

// sureShare is the share of a class's values that must be read right for
// it to reach 0.9: values at 0.9 or more are promised 97% right on
// families never seen, and a new family's share runs a point or two below
// the measure.
const sureShare = 0.98

// calibrate gives each evidence class of the documents kept the
// confidence its values earn, measured on their readings: the lower bound
// of the 95% interval of the share read right, no more than its share on
// any tier that saw it at least minClassValues times, and under 0.9
// unless sureShare of it is right. The report, when given, shows each
// class's share by tier and the confidence.
func calibrate(docs []fitDoc, read []Result, keep func(fitDoc) bool, report *strings.Builder) map[string]float64 {
	type count struct{ right, shown int }
	byClass := map[string]map[string]*count{}
	for i, d := range docs {
		if !keep(d) {
			continue
		}
		got := values(read[i])
		for field, class := range read[i].Evidence {
			want := d.truth[field]
			if want == "" {
				continue
			}
			if byClass[class] == nil {
				byClass[class] = map[string]*count{}
			}
			c := byClass[class][d.tier]
			if c == nil {
				c = &count{}
				byClass[class][d.tier] = c
			}
			c.shown++
			if rightValue(field, got[field], want) {
				c.right++
			}
		}
	}
	fitted := map[string]float64{}
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		p, right, shown := 1.0, 0, 0
		for _, tier := range tiers {
			c := byClass[class][tier]
			if c == nil {
				continue
			}
			right, shown = right+c.right, shown+c.shown
			if c.shown >= minClassValues {
				p = min(p, float64(c.right)/float64(c.shown))
			}
			if report != nil {
				fmt.Fprintf(report, "%-52s %-15s %4d/%-4d\n", class, tier, c.right, c.shown)
			}
		}
		if shown < minClassValues {
			continue
		}
		fitted[class] = math.Floor(min(p, wilsonLow(right, shown))*100) / 100
		if float64(right) < sureShare*float64(shown) {
			fitted[class] = min(fitted[class], 0.89)
		}
		if report != nil {
			fmt.Fprintf(report, "%-52s %-15s %9s  %.2f\n", "", "", "", fitted[class])
		}
	}
	return fitted
}

// wilsonLow is the lower bound of the 95% Wilson interval of right/n.
func wilsonLow(right, n int) float64 {
	const z = 1.96
	p, fn := float64(right)/float64(n), float64(n)
	return (p + z*z/(2*fn) - z*math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))) / (1 + z*z/fn)
}
