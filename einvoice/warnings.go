package einvoice

import (
	"fmt"
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
	warn := func(format string, args []any, fields ...string) {
		out = append(out, Warning{Fields: fields, Message: fmt.Sprintf(format, args...)})
	}
	if v := inv.IssuerVATID; v != "" && !vatIDShaped(v) {
		warn("The seller's VAT id %s does not have the shape of a VAT id of its country.", []any{v}, document.IssuerVATID)
	}
	switch v := inv.IssuerIBAN; {
	case v == "":
	case !ibanShaped(v):
		warn("The payment account %s is not an IBAN.", []any{v}, document.IssuerIBAN)
	case !ibanChecks(v):
		warn("The IBAN %s fails its check digits: a digit is wrong or missing.", []any{v}, document.IssuerIBAN)
	}
	if !sums(inv.NetAmount, inv.TaxAmount, inv.TotalAmount) {
		warn("The net amount %s and the tax %s do not add up to the total %s.",
			[]any{inv.NetAmount, inv.TaxAmount, inv.TotalAmount}, document.NetAmount, document.TaxAmount, document.TotalAmount)
	}
	for _, u := range unreadTerms {
		text, ok := r.unread[u.term]
		if !ok || *inv.Field(u.field) != "" {
			continue
		}
		warn("The %s %q is not %s.", []any{u.what, truncate(text, 40), u.isnt}, u.field)
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

// truncate cuts s to at most n runes, for quoting in a sentence.
func truncate(s string, n int) string {
	runes := []rune(s)
	if len(runes) <= n {
		return s
	}
	return string(runes[:n]) + "…"
}
