package docfields

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"

	"acctapi/document"
)

var (
	regen   = flag.Bool("regen", false, "rewrite testdata/eval/gen from the generator")
	evalGen = flag.Int("evalgen", 0, "also evaluate this many freshly generated documents (another seed)")
	misses  = flag.String("misses", "", "log the misses of this field (documentNumber, issueDate, ..., kind)")
)

const evalDir = "testdata/eval"

// TestGenerateEval rewrites the generated part of the evaluation set.
func TestGenerateEval(t *testing.T) {
	if !*regen {
		t.Skip("run with -regen to rewrite testdata/eval/gen")
	}
	dir := filepath.Join(evalDir, "gen")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range generate(2026, 110) {
		writeEvalDoc(t, dir, d)
	}
}

func writeEvalDoc(t *testing.T, dir string, d genDoc) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, d.name+".txt"), []byte(d.text), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(d.truth, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, d.name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func loadEval(t *testing.T) []genDoc {
	t.Helper()
	var docs []genDoc
	paths, err := filepath.Glob(filepath.Join(evalDir, "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var tr truth
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		text, err := os.ReadFile(strings.TrimSuffix(p, ".json") + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, genDoc{name: strings.TrimSuffix(filepath.Base(p), ".json"), text: string(text), truth: tr})
	}
	return docs
}

var evalFields = []string{"kind", document.DocumentNumber, document.IssueDate, document.DueDate, document.Currency,
	document.NetAmount, document.TaxAmount, document.TotalAmount, document.IssuerName, "issuerName~", document.IssuerVATID,
	document.IssuerIBAN}

func fieldOf(r Result, name string) string {
	f := r.Fields
	return map[string]string{
		"kind": r.Kind, document.DocumentNumber: f.DocumentNumber, document.IssueDate: f.IssueDate,
		document.DueDate: f.DueDate, document.Currency: f.Currency, document.NetAmount: f.NetAmount,
		document.TaxAmount: f.TaxAmount, document.TotalAmount: f.TotalAmount, document.IssuerName: f.IssuerName,
		"issuerName~": f.IssuerName, document.IssuerVATID: f.IssuerVATID, document.IssuerIBAN: f.IssuerIBAN,
	}[name]
}

func truthOf(t truth, name string) string {
	f := t.Fields
	return map[string]string{
		"kind": t.Kind, document.DocumentNumber: f.DocumentNumber, document.IssueDate: f.IssueDate,
		document.DueDate: f.DueDate, document.Currency: f.Currency, document.NetAmount: f.NetAmount,
		document.TaxAmount: f.TaxAmount, document.TotalAmount: f.TotalAmount, document.IssuerName: f.IssuerName,
		"issuerName~": f.IssuerName, document.IssuerVATID: f.IssuerVATID, document.IssuerIBAN: f.IssuerIBAN,
	}[name]
}

// sameValue compares a field as a person would: names without regard to
// case, spacing and punctuation, the rest exactly.
//
// "issuerName~" forgives what OCR did to the letters of the right name
// (an edit distance of at most a sixth of its length): it tells a wrong
// choice from a misread one.
func sameValue(field, got, want string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	switch field {
	case "issuerName":
		return norm(got) == norm(want)
	case "issuerName~":
		g, w := []rune(norm(got)), []rune(norm(want))
		return len(g) > 0 && editDistance(g, w) <= max(1, len(w)/6)
	}
	return got == want
}

func editDistance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
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

type tally struct{ right, total, spurious, absent int }

// evaluate reads every document and counts, per variant and field, how
// often the reader is right where the page shows the field, and how
// often it invents one the page does not show.
func evaluate(t *testing.T, docs []genDoc, label string) map[string]map[string]*tally {
	t.Helper()
	res := map[string]map[string]*tally{}
	kinds := map[string]map[string]*tally{}
	for _, d := range docs {
		got := Read(d.text)
		v := d.truth.Variant
		if res[v] == nil {
			res[v] = map[string]*tally{}
			kinds[v] = map[string]*tally{}
		}
		for _, f := range evalFields {
			if res[v][f] == nil {
				res[v][f] = &tally{}
			}
			want, have := truthOf(d.truth, f), fieldOf(got, f)
			tl := res[v][f]
			if want == "" {
				tl.absent++
				if have != "" {
					tl.spurious++
				}
				continue
			}
			tl.total++
			if sameValue(f, have, want) {
				tl.right++
			} else if *misses == f {
				t.Logf("%s %s: got %q, want %q", label, d.name, have, want)
			}
		}
		k := d.truth.Kind
		if kinds[v][k] == nil {
			kinds[v][k] = &tally{}
		}
		kinds[v][k].total++
		if got.Kind == k {
			kinds[v][k].right++
		}
	}
	var b strings.Builder
	variants := []string{}
	for v := range res {
		variants = append(variants, v)
	}
	sort.Strings(variants)
	fmt.Fprintf(&b, "\n%s: right where the page shows the field (n), and invented where it does not\n", label)
	fmt.Fprintf(&b, "%-15s", "field")
	for _, v := range variants {
		fmt.Fprintf(&b, " %22s", v)
	}
	b.WriteString("\n")
	for _, f := range evalFields {
		fmt.Fprintf(&b, "%-15s", f)
		for _, v := range variants {
			tl := res[v][f]
			fmt.Fprintf(&b, " %6.1f%% (%3d) +%2d/%3d", pct(tl.right, tl.total), tl.total, tl.spurious, tl.absent)
		}
		b.WriteString("\n")
	}
	b.WriteString("kind by kind:\n")
	for _, k := range []string{document.Invoice, document.CreditNote, document.Receipt, document.BankStatement, document.Payslip, document.TaxNotice, document.Contract, document.Other} {
		fmt.Fprintf(&b, "%-15s", k)
		for _, v := range variants {
			tl := kinds[v][k]
			if tl == nil {
				fmt.Fprintf(&b, " %22s", "-")
				continue
			}
			fmt.Fprintf(&b, " %6.1f%% (%3d)         ", pct(tl.right, tl.total), tl.total)
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
	return res
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

// TestEvalAccuracy reads the evaluation set and logs the accuracy per
// field and per kind (go test ./docfields -run TestEvalAccuracy -v). It
// fails only below a low floor, so that a broken reader shows.
func TestEvalAccuracy(t *testing.T) {
	docs := loadEval(t)
	if len(docs) == 0 {
		t.Fatal("no evaluation documents")
	}
	res := evaluate(t, docs, "testdata/eval")
	for v, fs := range res {
		for _, f := range []string{"kind", document.IssueDate, document.TotalAmount, document.DocumentNumber} {
			if tl := fs[f]; tl.total > 5 && pct(tl.right, tl.total) < 70 {
				t.Errorf("%s %s: %.1f%% right, below the 70%% floor", v, f, pct(tl.right, tl.total))
			}
		}
	}
	if *evalGen > 0 {
		evaluate(t, generate(7, *evalGen), fmt.Sprintf("%d fresh documents", *evalGen))
	}
}
