package docfields

import (
	"strconv"
	"strings"

	"acctapi/document"
)

// confidence says how likely each value read is right, from what checks
// it: a sum that adds up, an IBAN's or a VAT id's check digits. Values
// nothing checks get a modest figure, but the dates, the number and the
// total take the share of their evidence class that was read right on
// real documents (see calibration), where that class was measured.
func (a *analysis) confidence(f *document.Fields) (map[string]float64, map[string]string) {
	c := map[string]float64{}
	set := func(name, v string, p float64) {
		if v != "" {
			c[name] = p
		}
	}
	sums := f.NetAmount != "" && f.TaxAmount != "" && f.TotalAmount != "" &&
		cents(f.NetAmount)+cents(f.TaxAmount) == cents(f.TotalAmount)
	// A till receipt's subtotal and tax add up to more than one line of
	// it (the rounded total, the cash paid): there the check proves less.
	checked, net, tax, total := 0.9, 0.5, 0.5, 0.6
	if a.kind == document.Receipt {
		checked = 0.75
	}
	if sums {
		net, tax, total = checked, checked, checked
	}
	set(document.NetAmount, f.NetAmount, net)
	set(document.TaxAmount, f.TaxAmount, tax)
	set(document.TotalAmount, f.TotalAmount, total)
	set(document.IssueDate, f.IssueDate, 0.7)
	set(document.DueDate, f.DueDate, 0.6)
	set(document.Currency, f.Currency, 0.8)
	set(document.DocumentNumber, f.DocumentNumber, 0.6)
	set(document.IssuerName, f.IssuerName, 0.5)
	set(document.IssuerIBAN, f.IssuerIBAN, map[bool]float64{true: 0.9, false: 0.2}[ibanValid(f.IssuerIBAN)])
	if v := f.IssuerVATID; v != "" {
		vs := vatsIn(v)
		p := 0.5
		switch {
		case len(vs) == 1 && vs[0].checked:
			p = 0.85
		case len(vs) == 1 && vs[0].misshapen:
			p = 0.2
		}
		set(document.IssuerVATID, v, p)
	}
	evidence := map[string]string{}
	group := "document"
	if a.kind == document.Receipt {
		group = "receipt"
	}
	for _, field := range calibratedFields {
		m, ok := a.margins[field]
		if *f.Field(field) == "" || !ok {
			continue
		}
		name := field
		if field == document.TotalAmount && sums {
			name += "+checked"
		}
		class := evidenceClass(group, name, m)
		evidence[field] = class
		if p, ok := calibration[class]; ok {
			c[field] = p
		}
	}
	return c, evidence
}

// cents reads an amount as the reader writes it ("-12.50").
func cents(s string) int64 {
	n, err := strconv.ParseInt(strings.Replace(s, ".", "", 1), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
