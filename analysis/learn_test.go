package analysis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docfields"
	"acctapi/document"
	"acctapi/filestore"
)

// learnFirm is a firm of the learning evaluation, with two clients.
type learnFirm struct {
	clients    [2]string
	workspaces [2]string
}

// learnStore is a store that learns, with the worker that reads it.
type learnStore struct {
	store  *db.DB
	files  *filestore.Store
	worker *analysis.Worker
}

func newLearnStore(t *testing.T) *learnStore {
	t.Helper()
	dir := t.TempDir()
	store, err := db.Open(filepath.Join(dir, "acctapi.db"), db.Options{Teacher: analysis.Teach})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	return &learnStore{store: store, files: files,
		worker: analysis.New(analysis.Options{Store: store, Files: files, Reader: reader, TempDir: dir})}
}

func (s *learnStore) firm(t *testing.T, name string) learnFirm {
	t.Helper()
	ctx := context.Background()
	firm, err := s.store.CreateFirm(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var f learnFirm
	for i := range f.clients {
		client, err := s.store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: fmt.Sprintf("Client %d", i), Type: db.ClientLegalPerson})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := s.store.CreateWorkspace(ctx, client.ID, "Accounts")
		if err != nil {
			t.Fatal(err)
		}
		f.clients[i], f.workspaces[i] = client.ID, ws.ID
	}
	return f
}

// read stores a text document for the client and reads it.
func (s *learnStore) read(t *testing.T, clientID, ws, text string) *db.File {
	t.Helper()
	ctx := context.Background()
	pending, err := s.files.Write(strings.NewReader(text), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	id := db.NewID()
	if err := s.files.Keep(pending, id, func() error {
		_, err := s.store.CreateFile(ctx, clientID, db.FileCreate{ID: id, WorkspaceID: ws, Name: "doc.txt",
			MimeType: "text/plain", Size: pending.Size, SHA256: pending.SHA256})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.worker.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	f, err := s.store.FindFile(ctx, clientID, id)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// learnSupplier issues documents in a layout of its own: labels and an
// order the reader does not know, distracting amounts and dates.
type learnSupplier struct {
	name, vat                              string
	numLabel, dateLabel, totalLabel        string
	netLabel, taxLabel, dueLabel, itemWord string
	table, longDates, extraAmounts         bool
}

var (
	oddNumLabels   = []string{"Vorgang", "Ref.", "Belegkennung", "Akte", "Our ref", "Dossier", "Los", "Auftrag/Beleg"}
	oddDateLabels  = []string{"Erstellt", "Stand", "Leipzig, den", "Ausgefertigt", "Printed", "Bearbeitet am"}
	oddTotalLabels = []string{"Zu begleichen", "Saldo zu unseren Gunsten", "Endstand", "Ihr Anteil", "Abschluss", "Überweisungsbetrag"}
	oddNetLabels   = []string{"Warenwert", "Positionen gesamt", "Leistungen", "Basis"}
	oddTaxLabels   = []string{"Steueranteil", "Aufschlag USt", "Abgabe", "Anteil Steuer"}
	oddDueLabels   = []string{"Ausgleich bis", "Spätestens am", "Valuta", "Frist"}
	items          = []string{"Wartung", "Material", "Beratung", "Lizenz", "Porto", "Reinigung"}
	months         = []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
)

// vatID is a German VAT id whose check digit (ISO 7064 MOD 11,10) holds.
func vatID(rng *rand.Rand) string {
	digits := make([]int, 8)
	digits[0] = 1 + rng.IntN(9)
	for i := 1; i < 8; i++ {
		digits[i] = rng.IntN(10)
	}
	p := 10
	for _, d := range digits {
		s := (d + p) % 10
		if s == 0 {
			s = 10
		}
		p = (2 * s) % 11
	}
	check := (11 - p) % 10
	var b strings.Builder
	b.WriteString("DE")
	for _, d := range digits {
		fmt.Fprint(&b, d)
	}
	fmt.Fprint(&b, check)
	return b.String()
}

func newSupplier(rng *rand.Rand, n int) learnSupplier {
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	return learnSupplier{
		name: fmt.Sprintf("%s %s Handels GmbH", pick([]string{"Nord", "Süd", "Alpen", "Rhein", "Elb", "Ost"}), pick([]string{"Technik", "Service", "Logistik", "Bau", "Print"})) + fmt.Sprintf(" %d", n),
		vat:  vatID(rng), numLabel: pick(oddNumLabels), dateLabel: pick(oddDateLabels), totalLabel: pick(oddTotalLabels),
		netLabel: pick(oddNetLabels), taxLabel: pick(oddTaxLabels), dueLabel: pick(oddDueLabels), itemWord: pick(items),
		table: rng.IntN(3) == 0, longDates: rng.IntN(2) == 0, extraAmounts: rng.IntN(2) == 0,
	}
}

// euro writes cents as a German amount.
func euro(c int) string {
	s := fmt.Sprintf("%d,%02d", c/100, c%100)
	if c >= 100000 {
		s = fmt.Sprintf("%d.%03d,%02d", c/100000, c/100%1000, c%100)
	}
	return s
}

func (s learnSupplier) date(t time.Time) string {
	if s.longDates {
		return fmt.Sprintf("%d. %s %d", t.Day(), months[t.Month()-1], t.Year())
	}
	return t.Format("02.01.2006")
}

// document writes one of the supplier's documents and what it says.
func (s learnSupplier) document(rng *rand.Rand) (string, map[string]string) {
	issued := time.Date(2026, time.Month(1+rng.IntN(10)), 1+rng.IntN(28), 0, 0, 0, 0, time.UTC)
	due := issued.AddDate(0, 0, 14+rng.IntN(20))
	number := fmt.Sprintf("%d-%04d", 10+rng.IntN(80), rng.IntN(10000))
	net := 1000 + rng.IntN(300000)
	tax := net * 19 / 100
	truth := map[string]string{
		document.DocumentNumber: number, document.IssueDate: issued.Format(time.DateOnly), document.DueDate: due.Format(time.DateOnly),
		document.NetAmount: fmt.Sprintf("%d.%02d", net/100, net%100), document.TaxAmount: fmt.Sprintf("%d.%02d", tax/100, tax%100),
		document.TotalAmount: fmt.Sprintf("%d.%02d", (net+tax)/100, (net+tax)%100),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nIndustriestraße %d\n04109 Leipzig\nUSt-IdNr. %s\n\nMusterkunde AG\nHauptstraße 1\n\n", s.name, 1+rng.IntN(90), s.vat)
	if s.table {
		fmt.Fprintf(&b, "%s          %s          Kunde\n%s          %s          K-%d\n\n", s.numLabel, s.dateLabel, number, s.date(issued), 100+rng.IntN(900))
	} else {
		fmt.Fprintf(&b, "%s: %s\n%s: %s\n", s.numLabel, number, s.dateLabel, s.date(issued))
	}
	fmt.Fprintf(&b, "Lieferung vom %s\n\n", s.date(issued.AddDate(0, 0, -3)))
	rest := net
	for i := range 3 {
		amount := rest / (3 - i)
		if i < 2 {
			amount = rest * (20 + rng.IntN(40)) / 100
		}
		rest -= amount
		fmt.Fprintf(&b, "%d  %s %d  %s\n", i+1, s.itemWord, 1+rng.IntN(9), euro(amount))
	}
	if s.extraAmounts {
		fmt.Fprintf(&b, "Bereits gezahlt  %s\n", euro(rng.IntN(5000)))
	}
	fmt.Fprintf(&b, "\n%s  %s\n%s  %s\n%s  %s\n\n%s %s\n", s.netLabel, euro(net), s.taxLabel, euro(tax), s.totalLabel, euro(net+tax), s.dueLabel, s.date(due))
	return b.String(), truth
}

// TestLearningEval: suppliers whose documents the reader reads wrong; a
// person corrects each supplier's first document once; the supplier's next
// documents are read right from where the corrections pointed. Firm B,
// reading the same suppliers, is unchanged by firm A's corrections; firm
// A's second client benefits from them.
func TestLearningEval(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a few hundred documents")
	}
	ctx := context.Background()
	s := newLearnStore(t)
	a, b := s.firm(t, "A"), s.firm(t, "B")
	rng := rand.New(rand.NewPCG(7, 11))
	const suppliers, later = 30, 3
	var before, after, fields, corrected int
	var sure, sureRight int
	for n := range suppliers {
		sup := newSupplier(rng, n)
		first, truth := sup.document(rng)
		f := s.read(t, a.clients[0], a.workspaces[0], first)
		fix := map[string]*string{}
		for name, want := range truth {
			if f.Analysis.Fields.Value(name) == nil || *f.Analysis.Fields.Value(name) != want {
				fix[name] = &want
			}
		}
		// The supplier is known by what the reader found, its VAT id here.
		if v := f.Analysis.Fields.Value(document.IssuerVATID); v == nil || *v != sup.vat {
			t.Errorf("supplier %d: VAT id %v read, want %s", n, v, sup.vat)
		}
		corrected += len(fix)
		if len(fix) > 0 {
			if _, err := s.store.UpdateFile(ctx, a.clients[0], f.ID, db.FileUpdate{Fields: fix}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range later {
			text, truth := sup.document(rng)
			client := i % 2 // the second client benefits from the first's corrections
			got := s.read(t, a.clients[client], a.workspaces[client], text)
			other := s.read(t, b.clients[0], b.workspaces[0], text)
			for name, want := range truth {
				fields++
				if v := other.Analysis.Fields.Value(name); v != nil && *v == want {
					before++
				}
				v := got.Analysis.Fields.Value(name)
				if v != nil && *v == want {
					after++
				} else if testing.Verbose() {
					t.Logf("supplier %d (%s, table %v) client %d: %s %v, want %s", n, sup.totalLabel, sup.table, client, name, v, want)
				}
				if c := got.Analysis.Confidence[name]; c >= 0.9 {
					sure++
					if v != nil && *v == want {
						sureRight++
					}
				}
			}
			// Firm B's reading is the reader's alone: firm A's lessons never
			// reach it.
			if name, ok := sameAsReader(other, text); !ok {
				t.Errorf("supplier %d: firm B's %s is not the reader's own: %v", n, name, other.Analysis.Confidence)
			}
		}
	}
	share := float64(after) / float64(fields)
	t.Logf("learning: %d suppliers, %d fields corrected on their first documents; on their next %d documents each, "+
		"%d of %d fields right after one correction (%.1f%%), %d without it (firm B, %.1f%%); at confidence >= 0.9, %d of %d right",
		suppliers, corrected, later, after, fields, 100*share, before, 100*float64(before)/float64(fields), sureRight, sure)
	if share < 0.95 {
		t.Errorf("%.1f%% of fields right after one correction, want >= 95%%", 100*share)
	}
	if sure > 0 && float64(sureRight) < 0.97*float64(sure) {
		t.Errorf("%d of %d values at confidence >= 0.9 right, want >= 97%%", sureRight, sure)
	}
}

// sameAsReader says whether every field of f's reading, value and
// confidence, is what the reader alone makes of text; if not, it names the
// first field that differs.
func sameAsReader(f *db.File, text string) (string, bool) {
	own := docfields.Read(text)
	o := own.Fields
	values := map[string]string{document.DocumentNumber: o.DocumentNumber, document.IssueDate: o.IssueDate,
		document.DueDate: o.DueDate, document.Currency: o.Currency, document.NetAmount: o.NetAmount,
		document.TaxAmount: o.TaxAmount, document.TotalAmount: o.TotalAmount, document.IssuerName: o.IssuerName,
		document.IssuerVATID: o.IssuerVATID, document.IssuerIBAN: o.IssuerIBAN}
	for _, name := range document.FieldNames {
		got := ""
		if v := f.Analysis.Fields.Value(name); v != nil {
			got = *v
		}
		if got != values[name] || f.Analysis.Confidence[name] != own.Confidence[name] {
			return name, false
		}
	}
	return "", true
}

// TestKindLearning: a kind a person set teaches the firm's classifier,
// which names the kind of the next such document where the reader cannot;
// another firm's readings are unchanged, and a person's kind is theirs.
func TestKindLearning(t *testing.T) {
	ctx := context.Background()
	s := newLearnStore(t)
	a, b := s.firm(t, "A"), s.firm(t, "B")
	doc := func(n int) string {
		return fmt.Sprintf("Kleingartenverein Sonnenschein\nJahresumlage Parzelle %d\nWasseruhr Zählerstand %d Kubikmeter\n"+
			"Vereinsheim Pacht Umlage Wegebau\nVorstand Kassenwart\n", n, 100+n)
	}
	first := s.read(t, a.clients[0], a.workspaces[0], doc(1))
	if first.Kind != nil && *first.Kind != document.Other {
		t.Skipf("the reader itself finds kind %s: nothing to learn", *first.Kind)
	}
	kind := document.Invoice
	if _, err := s.store.UpdateFile(ctx, a.clients[0], first.ID, db.FileUpdate{Kind: db.Update[string]{Set: true, Value: &kind}}); err != nil {
		t.Fatal(err)
	}
	if got := s.read(t, a.clients[1], a.workspaces[1], doc(2)); str(got.Kind) != document.Invoice || str(got.KindSource) != db.SourceAnalysis {
		t.Errorf("firm A's next document: kind %s (%s), want invoice from the firm's classifier", str(got.Kind), str(got.KindSource))
	}
	if got := s.read(t, b.clients[0], b.workspaces[0], doc(3)); str(got.Kind) == document.Invoice {
		t.Errorf("firm B's document: kind %s, learnt from firm A", str(got.Kind))
	}
	// An unlike document is not classified by what the firm learnt.
	if got := s.read(t, a.clients[0], a.workspaces[0], "Mondlandung Raumfahrt Apollo Astronaut Rakete\n"); str(got.Kind) == document.Invoice {
		t.Errorf("an unlike document: kind %s", str(got.Kind))
	}
}
