package docfields

import (
	"strings"
	"testing"

	"acctapi/document"
)

// A second witness names its own evidence class: a till's payment that
// proves the total, a date the page prints twice.

func TestPaidTotalEvidence(t *testing.T) {
	paid := `KEDAI RUNCIT MAJU
TAX INVOICE
Date: 12/03/2018 10:41
TOTAL            24.50
CASH             50.00
CHANGE           25.50`
	r := Read(paid)
	if r.Fields.TotalAmount != "24.50" {
		t.Fatalf("total %q, want 24.50: %+v", r.Fields.TotalAmount, r)
	}
	if class := r.Evidence[document.TotalAmount]; !strings.Contains(class, "+paid") {
		t.Errorf("a total that cash less change proves is in class %q", class)
	}
	// Change that does not give the total back proves nothing.
	r = Read(strings.Replace(paid, "25.50", "20.50", 1))
	if class := r.Evidence[document.TotalAmount]; strings.Contains(class, "+paid") {
		t.Errorf("a total the payment contradicts is in class %q", class)
	}
}

func TestPrintedTwiceEvidence(t *testing.T) {
	twice := `KEDAI RUNCIT MAJU
Date: 12/03/2018
TOTAL            24.50
12/03/2018 10:41 Thank you`
	r := Read(twice)
	if r.Fields.IssueDate != "2018-03-12" {
		t.Fatalf("date %q, want 2018-03-12", r.Fields.IssueDate)
	}
	if class := r.Evidence[document.IssueDate]; !strings.HasSuffix(class, "+twice") && !strings.Contains(class, "+twice/") {
		t.Errorf("a date printed twice is in class %q", class)
	}
	// Read once, a receipt's date stays under 0.9 whatever its class.
	once := Read(strings.Replace(twice, "12/03/2018 10:41", "10:41", 1))
	if p := once.Confidence[document.IssueDate]; once.Fields.IssueDate == "" || p >= 0.9 {
		t.Errorf("a receipt's date read once: %q at %.2f", once.Fields.IssueDate, p)
	}
	// OCR's slip in the second one: two dates, each once.
	r = Read(strings.Replace(twice, "12/03/2018 10:41", "12/03/2013 10:41", 1))
	if class := r.Evidence[document.IssueDate]; strings.Contains(class, "+twice") {
		t.Errorf("dates that differ are in class %q", class)
	}
}
