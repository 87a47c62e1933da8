package docfields

import (
	"encoding/json"
	"strings"
	"testing"

	"acctapi/document"
)

func TestFindAndReadAnchors(t *testing.T) {
	first := []string{"Acme\nVorgang: 48-2291\nZwischenstand 10,00\nZu begleichen  1.190,00\nBereits gezahlt 5,00"}
	next := []string{"Acme\nVorgang: 51-0007\nZwischenstand 20,00\nZu begleichen  2.380,50\nBereits gezahlt 7,00"}
	var anchors []Anchor
	for field, value := range map[string]string{document.TotalAmount: "1190.0", document.DocumentNumber: "48-2291"} {
		a, ok := FindAnchor(first, field, value)
		if !ok {
			t.Fatalf("%s %s not found", field, value)
		}
		anchors = append(anchors, a)
	}
	got := ReadAnchors(next, anchors)
	if got[document.TotalAmount] != "2380.50" || got[document.DocumentNumber] != "51-0007" {
		t.Errorf("read: %v", got)
	}
	// Labels are kept hashed: the anchor holds none of the text's words.
	encoded, _ := json.Marshal(anchors)
	for _, word := range []string{"begleichen", "vorgang", "48-2291", "1190"} {
		if strings.Contains(strings.ToLower(string(encoded)), word) {
			t.Errorf("the anchor %s holds %q", encoded, word)
		}
	}
	if _, ok := FindAnchor(first, document.TotalAmount, "77.00"); ok {
		t.Error("a value not in the text was found")
	}
	// A document whose labels differ is not read by the anchors.
	if got := ReadAnchors([]string{"Other\nTotal 5,00"}, anchors); len(got) != 0 {
		t.Errorf("read from other labels: %v", got)
	}
}

func TestTableAnchor(t *testing.T) {
	first := []string{"Beleg          Datum          Kunde\n48-2291          05.03.2026          K-7\n"}
	next := []string{"Kopf\nBeleg          Datum          Kunde\n51-0007          11.04.2026          K-9\n"}
	a, ok := FindAnchor(first, document.IssueDate, "2026-03-05")
	if !ok || !a.Above {
		t.Fatalf("anchor: %+v %v, want one on the line above", a, ok)
	}
	if got := ReadAnchors(next, []Anchor{a}); got[document.IssueDate] != "2026-04-11" {
		t.Errorf("read: %v", got)
	}
}

func TestSupplierKeys(t *testing.T) {
	a := SupplierKeys(map[string]string{document.IssuerName: "Müller Bau GmbH"})
	b := SupplierKeys(map[string]string{document.IssuerName: "müller bau"})
	if len(a) != 1 || a[0] != b[0] {
		t.Errorf("a name's key depends on case and legal form: %v %v", a, b)
	}
	if k := SupplierKeys(map[string]string{document.IssuerVATID: "DE123456789", document.IssuerName: "X"}); len(k) != 2 ||
		strings.Contains(k[0], "123456789") {
		t.Errorf("keys: %v", k)
	}
	if k := SupplierKeys(map[string]string{}); len(k) != 0 {
		t.Errorf("no supplier: %v", k)
	}
}

func TestClassifyKind(t *testing.T) {
	ex := func(kind, text string) KindExample { return KindExample{kind, KindFeatures([]string{text})} }
	examples := []KindExample{
		ex("invoice", "Jahresumlage Parzelle Wasseruhr Vereinsheim Pacht"),
		ex("contract", "Mietvertrag zwischen Vermieter und Mieter Laufzeit Kündigung"),
	}
	if kind, p := ClassifyKind(KindFeatures([]string{"Jahresumlage Parzelle Wasseruhr Pacht"}), examples); kind != "invoice" || p < 0.9 {
		t.Errorf("like the invoice: %s %.2f", kind, p)
	}
	if kind, _ := ClassifyKind(KindFeatures([]string{"Rakete Mond Astronaut"}), examples); kind != "" {
		t.Errorf("unlike every example: %s", kind)
	}
	if got := DecodeFeatures(EncodeFeatures([]uint32{1, 1 << 19})); len(got) != 2 || got[1] != 1<<19 {
		t.Errorf("features round trip: %v", got)
	}
}
