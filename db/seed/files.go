package seed

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"acctapi/db"
	vocab "acctapi/document"
)

// Files are generated as documents already read: a record, its text and its
// row in the search index, with no bytes in the file store (a download of
// one fails), so that lists and searches can be measured at scale.

// seedFileKind names the file records in their ids.
const seedFileKind = "7"

// documentVendors issue the generated documents; the first are frequent,
// the last rare, as in a real client's year.
var documentVendors = []string{
	"Telekom Deutschland GmbH", "Vodafone GmbH", "Amazon EU S.à r.l.", "Deutsche Bahn AG", "Stadtwerke Leipzig GmbH",
	"Allianz Versicherungs-AG", "Sparkasse Leipzig", "Commerzbank AG", "Shell Deutschland GmbH", "IKEA Deutschland GmbH & Co. KG",
	"Bäckerei Müller", "Büro Meyer e.K.", "Hotel Adler", "Lufthansa AG", "Conrad Electronic SE", "Hetzner Online GmbH",
	"DATEV eG", "Finanzamt Leipzig I", "AOK Plus", "Zimmerei Schröder GmbH", "Weinhandel Kowalski", "Café Élysée",
	"Autohaus Novák KG", "Ingenieurbüro Fischer", "Verlag Weber & Söhne", "Praxis Dr. Öztürk",
}

// documentKinds are the kinds of the generated documents, with the words
// of each.
var documentKinds = []struct {
	kind, title string
	words       []string
}{
	{vocab.Invoice, "Rechnung", []string{"Rechnungsnummer", "Rechnungsdatum", "Leistungszeitraum", "Nettobetrag", "Umsatzsteuer 19 %", "Gesamtbetrag", "Zahlbar bis", "Kundennummer"}},
	{vocab.Invoice, "Invoice", []string{"Invoice number", "Invoice date", "Service period", "Subtotal", "VAT 19%", "Total", "Due date", "Customer number"}},
	{vocab.Receipt, "Kassenbon", []string{"SUMME EUR", "BAR", "EC-Karte", "Rückgeld", "MwSt", "Beleg-Nr.", "Filiale", "Vielen Dank für Ihren Einkauf"}},
	{vocab.BankStatement, "Kontoauszug", []string{"alter Kontostand", "neuer Kontostand", "Buchungstag", "Wertstellung", "Lastschrift", "Gutschrift", "Überweisung", "IBAN"}},
	{vocab.Payslip, "Entgeltabrechnung", []string{"Bruttobezüge", "Lohnsteuer", "Solidaritätszuschlag", "Krankenversicherung", "Rentenversicherung", "Auszahlungsbetrag", "Steuerklasse", "Personalnummer"}},
	{vocab.CreditNote, "Gutschrift", []string{"Gutschriftsnummer", "Datum", "Rücksendung", "Nettobetrag", "Umsatzsteuer", "Gutschriftsbetrag", "Ihre Bestellung vom", "Kundennummer"}},
	{vocab.TaxNotice, "Bescheid", []string{"Finanzamt", "Steuernummer", "Festsetzung", "Einkommensteuer", "Vorauszahlungen", "Rechtsbehelfsbelehrung", "Einspruch", "Bescheid für 2025"}},
	{vocab.Contract, "Vertrag", []string{"zwischen", "Vertragsbeginn", "Laufzeit", "Kündigungsfrist", "monatlich", "Unterschrift", "Vertragsnummer", "Gerichtsstand"}},
}

// documentWords fill the lines of a document: items and services, with the
// odd rare word that a search for something specific finds.
var documentWords = []string{
	"Druckerpapier", "Toner", "Bürostuhl", "Monitor", "Laptop", "Wartung", "Reparatur", "Beratung", "Fahrtkosten",
	"Übernachtung", "Frühstück", "Bewirtung", "Porto", "Versand", "Lizenz", "Hosting", "Domain", "Mobilfunk",
	"Festnetz", "Strom", "Gas", "Wasser", "Miete", "Nebenkosten", "Versicherung", "Beitrag", "Schulung",
	"Fachliteratur", "Werkzeug", "Material", "Arbeitszeit", "Anfahrt", "Entsorgung", "Reinigung", "Software",
	"Abonnement", "Kaffee", "Brötchen", "Kraftstoff", "Parkgebühr", "Bahnticket", "Flug", "Taxi", "Messe",
}

// files inserts the first client's documents, spread over its workspaces
// and the two years before now.
func (s *seeder) files(ctx context.Context, start int64) error {
	if s.spec.Files == 0 {
		return nil
	}
	fileStmt, err := s.tx.PrepareContext(ctx, `INSERT INTO files (id, client_id, workspace_id, name, mimetype, size, sha256,
		document_date, document_date_source, kind, kind_source, analysis_status, analysis_source, analyzed_at, analysis_fields,
		analysis_kind, created_at, updated_at)
		VALUES (?, ?, ?, ?, 'application/pdf', ?, zeroblob(32), ?, 'analysis', ?, 'analysis', 'done', 'text', ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer fileStmt.Close()
	textStmt, err := s.tx.PrepareContext(ctx, `INSERT INTO file_texts (file_id, client_id, source, pages, text)
		VALUES (?, ?, 'text', ?, ?)`)
	if err != nil {
		return err
	}
	defer textStmt.Close()
	rowStmt, err := s.tx.PrepareContext(ctx, `INSERT INTO file_search_rows (seq, file_id, client_id) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer rowStmt.Close()
	indexStmt, err := s.tx.PrepareContext(ctx, `INSERT INTO file_search (rowid, name, text, fields) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer indexStmt.Close()

	rng := rand.New(rand.NewPCG(uint64(s.now), 7))
	client := s.id(seedClientKind, 0)
	for n := range s.spec.Files {
		doc := s.document(rng, n)
		created := start + int64(n)*seedTwoYears/int64(s.spec.Files)
		id := s.id(seedFileKind, n)
		workspace := s.id(seedWorkspaceKind, rng.IntN(s.spec.Workspaces))
		fields, err := json.Marshal(doc.fields)
		if err != nil {
			return fmt.Errorf("seed file: %w", err)
		}
		if _, err := fileStmt.ExecContext(ctx, id, client, workspace, doc.name, len(doc.text)*3, doc.date.Unix(), doc.kind,
			created, fields, doc.kind, created, created); err != nil {
			return fmt.Errorf("seed file: %w", err)
		}
		if _, err := textStmt.ExecContext(ctx, id, client, doc.pages, doc.text); err != nil {
			return fmt.Errorf("seed file text: %w", err)
		}
		if _, err := rowStmt.ExecContext(ctx, n+1, id, client); err != nil {
			return fmt.Errorf("seed file index: %w", err)
		}
		if _, err := indexStmt.ExecContext(ctx, n+1, doc.name, doc.text, doc.number+"\n"+doc.vendor); err != nil {
			return fmt.Errorf("seed file index: %w", err)
		}
	}
	return nil
}

// document is one generated document.
type document struct {
	name, kind, text, number, vendor string
	fields                           db.DocumentFields
	pages                            int
	date                             time.Time
}

// document makes the n-th document: a vendor (the first of the list far
// more often), a kind, a date in the two years before now, and one or two
// pages of the kind's words with items and amounts.
func (s *seeder) document(rng *rand.Rand, n int) document {
	vendor := documentVendors[min(int(rng.ExpFloat64()*4), len(documentVendors)-1)]
	kind := documentKinds[rng.IntN(len(documentKinds))]
	date := time.Unix(s.now-rng.Int64N(seedTwoYears), 0).UTC().Truncate(24 * time.Hour)
	number := fmt.Sprintf("RE-%d-%05d", date.Year(), n%100000)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nMusterstraße %d, %05d Leipzig\nUSt-IdNr. DE%09d\n\n%s\n", vendor, 1+rng.IntN(120),
		4000+rng.IntN(5000), rng.IntN(1_000_000_000), kind.title)
	fmt.Fprintf(&b, "%s %s\n%s %s\n", kind.words[0], number, kind.words[1], date.Format("02.01.2006"))
	var net int
	lines := 3 + rng.IntN(12)
	for i := range lines {
		amount := 100 + rng.IntN(50_000)
		net += amount
		fmt.Fprintf(&b, "%d %s %s %d,%02d EUR\n", i+1, documentWords[rng.IntN(len(documentWords))],
			documentWords[rng.IntN(len(documentWords))], amount/100, amount%100)
	}
	for _, w := range kind.words[2:] {
		fmt.Fprintf(&b, "%s: %d,%02d\n", w, rng.IntN(5000), rng.IntN(100))
	}
	tax := net * 19 / 100
	fmt.Fprintf(&b, "Summe netto %d,%02d EUR\nMwSt. 19 %% %d,%02d EUR\nGesamt %d,%02d EUR\n", net/100, net%100, tax/100, tax%100,
		(net+tax)/100, (net+tax)%100)
	pages := 1 + lines/10
	fields := db.DocumentFields{Values: map[string]string{
		vocab.DocumentNumber: number, vocab.IssueDate: date.Format(time.DateOnly), vocab.Currency: "EUR",
		vocab.NetAmount: cents(net), vocab.TaxAmount: cents(tax), vocab.TotalAmount: cents(net + tax), vocab.IssuerName: vendor,
	}}
	name := fmt.Sprintf("%s %s %s.pdf", kind.title, strings.Fields(vendor)[0], date.Format("2006-01"))
	return document{name: name, kind: kind.kind, text: b.String(), number: number, vendor: vendor, fields: fields,
		pages: pages, date: date}
}

// cents writes an amount in cents as the fields hold it.
func cents(n int) string { return fmt.Sprintf("%d.%02d", n/100, n%100) }
