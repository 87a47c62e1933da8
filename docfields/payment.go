package docfields

import "strings"

// payment is what a till receipt says was paid: the amount tendered and
// the change given back, each on its own line.
type payment struct {
	tendered, change         int64
	tenderedLine, changeLine int
	guessed                  bool // the tendered line's label was not read
}

// Labels of the two lines of a payment, as labelTable spells them.
var (
	changeLabels = map[string]bool{"rückgeld": true, "zurück": true, "change": true, "change due": true,
		"change cash": true, "cash change": true,
		"wisselgeld": true, "resto": true, "cambio": true, "balance due to customer": true}
	tenderLabels = map[string]bool{"gegeben": true, "bar": true, "bar eur": true, "cash": true, "tendered": true,
		"cash tendered": true, "tendered cash": true, "cash paid": true, "amount tendered": true,
		"tendered amount": true, "cash received": true, "received": true, "tender": true, "paid": true,
		"bezahlt": true, "espèces": true, "card": true, "visa": true, "mastercard": true, "ec-karte": true,
		"girocard": true, "payment": true, "amount paid": true, "paid amount": true}
)

// payment finds the first change line and the tendered amount within the
// four lines above it, larger than the change. OCR often loses the
// tendered line's label ("N  bssisine .... RM 70.30"): then the last
// amount of the line just above the change counts, the payment marked
// guessed.
func (a *analysis) payment() (payment, bool) {
	for i := range a.amounts {
		change, ok := a.labelledAmount(i, changeLabels)
		if !ok || change < 0 {
			continue
		}
		for up := i - 1; up >= 0 && up >= i-4; up-- {
			// Some tills print what was tendered as a credit: "Cash -51.00".
			if tendered, ok := a.labelledAmount(up, tenderLabels); ok && abs(tendered) > change {
				return payment{tendered: abs(tendered), change: change, tenderedLine: up, changeLine: i}, true
			}
		}
		if up := a.prevNonBlank(i); up >= 0 && len(a.labels[up]) == 0 {
			if xs := a.amounts[up]; len(xs) > 0 && !xs[len(xs)-1].percent && xs[len(xs)-1].cents > change {
				return payment{tendered: xs[len(xs)-1].cents, change: change, tenderedLine: up, changeLine: i, guessed: true}, true
			}
		}
	}
	return payment{}, false
}

// labelledAmount is the last amount of line i when the last label before
// it is one of labels.
func (a *analysis) labelledAmount(i int, labels map[string]bool) (int64, bool) {
	xs := a.amounts[i]
	if len(xs) == 0 || xs[len(xs)-1].percent {
		return 0, false
	}
	x := xs[len(xs)-1]
	var label string
	for _, l := range a.labels[i] {
		if l.end <= x.start {
			label = l.canon
		}
	}
	return x.cents, labels[label]
}

func (a *analysis) prevNonBlank(i int) int {
	for up := i - 1; up >= 0; up-- {
		if strings.TrimSpace(a.d.lines[up].raw) != "" {
			return up
		}
	}
	return -1
}
