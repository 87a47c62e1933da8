package docfields

import (
	"math"
	"testing"

	"acctapi/document"
)

func TestEvidenceClass(t *testing.T) {
	for _, c := range []struct {
		m    margin
		want string
	}{
		{margin{best: 4, other: 0}, "document/issueDate/score-high/lead-high"},
		{margin{best: 2, other: 1.8}, "document/issueDate/score-mid/lead-low"},
		{margin{best: 1, other: 0.2}, "document/issueDate/score-low/lead-mid"},
	} {
		if got := evidenceClass("document", document.IssueDate, c.m); got != c.want {
			t.Errorf("class of %+v = %q, want %q", c.m, got, c.want)
		}
	}
}

// The committed calibration is a table of shares: each in [0, 1], each
// class one evidenceClass can name.
func TestCalibrationTable(t *testing.T) {
	if len(calibration) == 0 {
		t.Fatal("calibration.json is empty")
	}
	for class, p := range calibration {
		if p < 0 || p > 1 || math.IsNaN(p) {
			t.Errorf("%s: %v is no share", class, p)
		}
	}
	// A labelled date on an invoice, alone of its kind on the page, is
	// among the classes measured.
	r := Read(`RECHNUNG Nr. 2024-17
Rechnungsdatum: 01.02.2024
Summe 100,00`)
	class := r.Evidence[document.IssueDate]
	if class == "" {
		t.Fatalf("no evidence for the issue date: %+v", r)
	}
	if p, ok := calibration[class]; ok && r.Confidence[document.IssueDate] != p {
		t.Errorf("confidence %.2f, calibration says %.2f for %s", r.Confidence[document.IssueDate], p, class)
	}
}
