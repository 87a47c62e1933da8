package einvoice

import (
	"math/big"

	"acctapi/document"
)

// unreadTerms are the terms whose text, when it is no value of their type,
// is worth a warning: the field then stays empty though the invoice
// states it.
var unreadTerms = []struct {
	term  term
	field string
	what  string
	isnt  string
}{
	{termIssueDate, document.IssueDate, "issue date", "a day"},
	{termDueDate, document.DueDate, "due date", "a day"},
	{termCurrency, document.Currency, "currency", "an ISO 4217 code"},
	{termNet, document.NetAmount, "net amount", "a decimal number"},
	{termTax, document.TaxAmount, "tax amount", "a decimal number"},
	{termTotal, document.TotalAmount, "total", "a decimal number"},
}

// warnings says what the finished invoice states that cannot be right.
func (r *reader) warnings() []Warning {
	inv := r.inv
	var out []Warning
	if v := inv.IssuerVATID; v != "" && !vatIDShaped(v) {
		out = append(out, document.VATIDMisshapen(v))
	}
	switch v := inv.IssuerIBAN; {
	case v == "":
	case !ibanShaped(v):
		out = append(out, document.NotAnIBAN(v))
	case !ibanChecks(v):
		out = append(out, document.IBANCheckFails(v))
	}
	if !sums(inv.NetAmount, inv.TaxAmount, inv.TotalAmount) {
		out = append(out, document.SumsDiffer(inv.NetAmount, inv.TaxAmount, inv.TotalAmount))
	}
	for _, u := range unreadTerms {
		text, ok := r.unread[u.term]
		if !ok || *inv.Field(u.field) != "" {
			continue
		}
		out = append(out, document.NotAValue(u.field, u.what, text, u.isnt))
	}
	return out
}

// sums reports whether net + tax = total, exactly; true when one is not
// stated.
func sums(net, tax, total string) bool {
	if net == "" || tax == "" || total == "" {
		return true
	}
	n, okN := new(big.Rat).SetString(net)
	t, okT := new(big.Rat).SetString(tax)
	g, okG := new(big.Rat).SetString(total)
	if !okN || !okT || !okG {
		return true
	}
	return n.Add(n, t).Cmp(g) == 0
}
