package document

import "fmt"

// Warning is what a reading states that cannot be right: the fields it
// concerns and one plain English sentence, fit to show a person. Every
// reader (an e-invoice's XML, a page's text) says it in the words of the
// functions below, so that a person meets one wording.
type Warning struct {
	// Fields are the fields whose values the warning concerns; a value
	// that is none (not a day, not a decimal) is dropped, so its field is
	// named but has no value.
	Fields []string
	// Message is the sentence.
	Message string
}

// VATIDMisshapen warns of a seller's VAT id that does not have its
// country's shape.
func VATIDMisshapen(id string) Warning {
	return Warning{Fields: []string{IssuerVATID},
		Message: fmt.Sprintf("The seller's VAT id %s does not have the shape of a VAT id of its country.", id)}
}

// NotAnIBAN warns of a payment account that is no IBAN.
func NotAnIBAN(account string) Warning {
	return Warning{Fields: []string{IssuerIBAN}, Message: fmt.Sprintf("The payment account %s is not an IBAN.", account)}
}

// IBANCheckFails warns of an IBAN whose check digits fail.
func IBANCheckFails(iban string) Warning {
	return Warning{Fields: []string{IssuerIBAN},
		Message: fmt.Sprintf("The IBAN %s fails its check digits: a digit is wrong or missing.", iban)}
}

// SumsDiffer warns of a net amount and a tax that do not add up to the
// total.
func SumsDiffer(net, tax, total string) Warning {
	return Warning{Fields: []string{NetAmount, TaxAmount, TotalAmount},
		Message: fmt.Sprintf("The net amount %s and the tax %s do not add up to the total %s.", net, tax, total)}
}

// NotAValue warns of a field's text that is no value of its type: what
// names the field ("issue date"), the text as stated (cut to 40
// characters), and what it is not ("a day").
func NotAValue(field, what, text, isnt string) Warning {
	if r := []rune(text); len(r) > 40 {
		text = string(r[:40]) + "…"
	}
	return Warning{Fields: []string{field}, Message: fmt.Sprintf("The %s %q is not %s.", what, text, isnt)}
}
