package document

import (
	"slices"
	"strings"
	"testing"
)

func TestWarningWords(t *testing.T) {
	w := NotAValue(IssueDate, "issue date", strings.Repeat("9", 45), "a day")
	if want := `The issue date "` + strings.Repeat("9", 40) + `…" is not a day.`; w.Message != want || !slices.Equal(w.Fields, []string{IssueDate}) {
		t.Errorf("got %+v, want %q about the issue date", w, want)
	}
	if w := SumsDiffer("1.00", "0.19", "1.20"); !slices.Equal(w.Fields, []string{NetAmount, TaxAmount, TotalAmount}) {
		t.Errorf("got fields %v, want net, tax and total", w.Fields)
	}
}
