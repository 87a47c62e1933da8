package docfields

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"acctapi/document"
)

// fitDoc is one document of a real tier, analysed once.
type fitDoc struct {
	tier  string
	half  int
	a     *analysis
	truth map[string]string
}

// TestFitWeights scores the amount and date readers' weights on the real
// tiers that TestRealEval (package analysis) wrote to ACCTAPI_EVAL_DIR/out.
// With ACCTAPI_EVAL_FIT=1 it first searches the weights, one at a time,
// for the values that read the most totals, nets and taxes (and issue
// dates) right on the first halves, and rewrites amountweights.json and
// dateweights.json; the second halves judge.
func TestFitWeights(t *testing.T) {
	dir := os.Getenv("ACCTAPI_EVAL_DIR")
	if dir == "" {
		t.Skip("ACCTAPI_EVAL_DIR names no evaluation data")
	}
	var docs []fitDoc
	for _, tier := range []string{"invoices-text", "invoices-scan", "receipts-sroie"} {
		docs = append(docs, readTier(t, filepath.Join(dir, "out", tier+".jsonl"), tier)...)
	}
	if len(docs) == 0 {
		t.Skip("no tier in DIR/out: run TestRealEval first")
	}
	t.Log("\n" + amountTable(docs) + dateTable(docs))
	if os.Getenv("ACCTAPI_EVAL_FIT") != "1" {
		return
	}
	beforeAmounts, beforeDates := weights, dateW
	defer func() { weights, dateW = beforeAmounts, beforeDates }()
	a := fitFirstHalf(reflect.ValueOf(&weights).Elem(), func() int { return amountScore(docs, 0) })
	d := fitFirstHalf(reflect.ValueOf(&dateW).Elem(), func() int { return dateScore(docs, 0) })
	t.Logf("fitted on the first halves (%d amounts, %d dates right):\n%s%s", a, d, amountTable(docs), dateTable(docs))
	for file, w := range map[string]any{"amountweights.json": weights, "dateweights.json": dateW} {
		data, err := json.MarshalIndent(w, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fitFirstHalf moves each weight of v in turn to the value that makes
// score highest, for up to three rounds, and returns the best score.
func fitFirstHalf(v reflect.Value, score func() int) int {
	best := score()
	for round := 0; round < 3; round++ {
		improved := false
		for i := range v.NumField() {
			f := v.Field(i)
			cur := f.Float()
			for _, next := range []float64{0, cur * 0.5, cur * 0.75, cur * 1.25, cur * 1.5, cur * 2, cur - 0.5, cur + 0.5} {
				next = math.Round(next*100) / 100
				if next == cur {
					continue
				}
				f.SetFloat(next)
				if s := score(); s > best {
					best, cur, improved = s, next, true
				}
			}
			f.SetFloat(cur)
		}
		if !improved {
			break
		}
	}
	return best
}

// dateScore is how many issue dates of the given half are read right.
func dateScore(docs []fitDoc, half int) int {
	n := 0
	for _, d := range docs {
		if d.half != half || d.truth[document.IssueDate] == "" {
			continue
		}
		if issue, _ := d.a.pickDates(); issue == d.truth[document.IssueDate] {
			n++
		}
	}
	return n
}

func dateTable(docs []fitDoc) string {
	var out string
	for _, tier := range []string{"invoices-text", "invoices-scan", "receipts-sroie"} {
		var right, shown [2]int
		for _, d := range docs {
			if d.tier != tier || d.truth[document.IssueDate] == "" {
				continue
			}
			shown[d.half]++
			if issue, _ := d.a.pickDates(); issue == d.truth[document.IssueDate] {
				right[d.half]++
			}
		}
		if shown[0]+shown[1] > 0 {
			out += fmt.Sprintf("%-15s %-12s %4d/%-4d %4d/%-4d\n", tier, document.IssueDate, right[0], shown[0], right[1], shown[1])
		}
	}
	return out
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
			Half  int
			Pages []string
			Truth map[string]string
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, fitDoc{tier: tier, half: d.Half, a: analyze(newDoc(d.Pages)), truth: d.Truth})
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

// amountScore is how many amounts of the given half are read right.
func amountScore(docs []fitDoc, half int) int {
	n := 0
	for _, d := range docs {
		if d.half != half {
			continue
		}
		for _, ok := range amountRight(d) {
			if ok {
				n++
			}
		}
	}
	return n
}

func amountTable(docs []fitDoc) string {
	type key struct {
		tier, field string
		half        int
	}
	right, shown := map[key]int{}, map[key]int{}
	for _, d := range docs {
		for field, ok := range amountRight(d) {
			k := key{d.tier, field, d.half}
			shown[k]++
			if ok {
				right[k]++
			}
		}
	}
	var out string
	for _, tier := range []string{"invoices-text", "invoices-scan", "receipts-sroie"} {
		for _, field := range fitFields {
			a, b := key{tier, field, 0}, key{tier, field, 1}
			if shown[a]+shown[b] == 0 {
				continue
			}
			out += fmt.Sprintf("%-15s %-12s %4d/%-4d %4d/%-4d\n", tier, field, right[a], shown[a], right[b], shown[b])
		}
	}
	return out
}

func sameCents(got, want string) bool {
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && math.Round(g*100) == math.Round(w*100)
}
