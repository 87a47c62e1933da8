package docfields

import "testing"

// The issuer's reader step by step: candidates, then the choice.

func TestIssuerCandidates(t *testing.T) {
	a := analyze(newDoc([]string{`Muster GmbH · Hauptstr. 1 · 12345 Berlin

Herrn
Max Kunde
Kundenweg 5
54321 Köln

RECHNUNG Nr. 7                                   Datum: 01.02.2024

Verkäufer: Muster GmbH

Summe 100,00`}))
	got := map[string]float64{}
	for _, c := range a.issuerCandidates() {
		got[c.v] = max(got[c.v], c.score)
	}
	if got["Muster GmbH"] < issuerW.Labelled {
		t.Errorf("the labelled seller scored %.2f: %v", got["Muster GmbH"], got)
	}
	for name := range got {
		if name == "Max Kunde" || name == "Herrn" {
			t.Errorf("the recipient %q is a candidate: %v", name, got)
		}
	}
}

func TestChooseIssuerRepeated(t *testing.T) {
	a := analyze(newDoc([]string{"Alpha Handel GmbH\nBeta Bau AG\nAlpha Handel GmbH\nAlpha Handel GmbH"}))
	// Beta scores more alone, Alpha wins by standing three times.
	cs := []nameCand{{"Beta Bau AG", 3.5}, {"Alpha Handel GmbH", 3}}
	if got := a.chooseIssuer(cs); got != "Alpha Handel GmbH" {
		t.Errorf("chose %q, want the repeated Alpha Handel GmbH", got)
	}
	if got := a.chooseIssuer(nil); got != "" {
		t.Errorf("chose %q from no candidates", got)
	}
}
