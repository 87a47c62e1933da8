package docfields

import (
	"regexp"
	"strings"
	"unicode"

	"acctapi/document"
)

type kindWord struct {
	kind string
	text string
	w    float64
	// titled: the word names the document when it heads it ("Rechnung",
	// "Kontoauszug"); other words are evidence found in the body.
	titled bool
}

func kw(kind string, w float64, titled bool, words ...string) []kindWord {
	var out []kindWord
	for _, s := range words {
		out = append(out, kindWord{kind: kind, w: w, titled: titled, text: s})
	}
	return out
}

var kindWords = concat(
	// A till receipt is headed "Tax invoice" where the law calls it so
	// (Malaysia, Australia): a weaker title, which a receipt's shape and
	// words outweigh.
	kw(document.Invoice, 1, true, "tax invoice", "simplified tax invoice"),
	kw(document.Invoice, 2, true, "rechnung", "invoice", "facture", "rechnung nr", "handwerkerrechnung",
		"schlussrechnung", "teilrechnung", "abschlagsrechnung", "sammelrechnung", "fattura", "factuur", "invoice no",
		"honorarrechnung", "liquidation", "rechnung / lieferschein", "mobilfunkrechnung", "telefonrechnung",
		"handelsrechnung", "commercial invoice", "rechnung (380)", "invoice (380)", "facture (380)", "(380)", "(389)", "(384)",
		"factuur", "facture commerciale", "fattura elettronica", "fattura differita", "fattura accompagnatoria",
		"factura simplificada", "factura completa", "factura", "rekening", "nota fiscale", "full tax invoice", "tax invoice/receipt", "anzahlungsrechnung",
		"vorauszahlungsrechnung", "endrechnung", "proformarechnung", "kundenrechnung", "gesamtrechnung",
		"lieferrechnung", "dienstleistungsrechnung", "rechnungskorrektur", "rechnungs-korrektur", "korrekturrechnung", "rechnung/invoice", "invoice/rechnung", "facture/invoice"),
	kw(document.Invoice, 0.4, false, "rechnungsnummer", "rechnungsdatum", "rechnungsbetrag", "invoice date", "invoice number",
		"ust-idnr", "zahlbar", "zahlungsziel", "due date", "net", "netto", "zzgl", "mwst", "ust", "vat", "tva",
		"total ttc", "total ht", "leistungszeitraum", "lieferdatum", "bankverbindung", "iban", "bitte überweisen",
		"zahlbar innerhalb", "payment terms", "amount due", "gesamtbetrag", "einzelpreis", "menge", "qty",
		"unit price", "quantité", "prix unitaire", "date de facture", "rechnungsempfänger", "bill to", "pos"),
	kw(document.CreditNote, 3, true, "gutschrift", "credit note", "credit memo", "avoir", "stornorechnung", "storno",
		"facture d'avoir", "gutschriftsanzeige", "credit notice", "nota di credito",
		"(381)", "creditnota", "creditfactuur", "nota de crédito", "nota de credito", "factura rectificativa",
		"factuur credit", "gutschrift/credit note", "credit note/gutschrift", "rechnungsgutschrift"),
	kw(document.CreditNote, 0.6, false, "gutschriftsnummer", "erstattungsbetrag", "gutschriftsbetrag", "wir schreiben ihnen",
		"erstatten", "refund", "rückerstattung", "zu ihren gunsten", "remboursement"),
	kw(document.Receipt, 3, true, "kassenbon", "kassenbeleg", "quittung", "kundenbeleg", "bewirtungsbeleg", "receipt",
		"ticket de caisse", "reçu", "sales receipt", "cash receipt", "barbeleg", "kassenzettel", "bon",
		"kassabon", "bon de caisse", "scontrino", "scontrino fiscale", "ricevuta", "ticket", "recibo",
		"official receipt", "cash sales", "cash sale", "kwitantie", "cash bill"),
	kw(document.Receipt, 1, false, "thank you for your visit", "card", "trans", "bon-nr", "bar", "gegeben", "rückgeld", "ec-karte", "kartenzahlung", "girocard",
		"summe eur", "tse", "kasse", "vielen dank für ihren einkauf", "vielen dank für ihren besuch", "cash", "change",
		"thank you for your purchase", "thank you for shopping", "tisch", "bedienung", "bewirtung", "trinkgeld", "tip",
		"terminal", "händlerbeleg", "kontaktlos", "contactless", "espèces", "rendu", "merci de votre visite",
		"tse-signatur", "tse signatur", "transaktionsnummer", "kassierer", "cashier", "signaturzähler", "visa",
		"mastercard", "maestro", "trace-nr", "genehmigungsnr", "steuer-nr", "anzahl artikel", "stk", "zurück",
		"bewirtete personen", "anlass der bewirtung", "please come again", "thank you", "goods sold are not returnable",
		"rounding", "rounding adj", "gst summary", "total qty", "cashier", "counter", "change due",
		"total sales", "inclusive of gst", "excluding gst", "gst id", "gst reg", "tender"),
	kw(document.BankStatement, 3, true, "kontoauszug", "account statement", "bank statement", "relevé de compte",
		"relevé bancaire", "umsatzübersicht", "kontoumsätze", "statement of account", "depotauszug", "finanzstatus"),
	kw(document.BankStatement, 1.2, false, "kontostand", "alter kontostand", "neuer kontostand", "saldo", "buchungstag",
		"wertstellung", "valuta", "opening balance", "closing balance", "ancien solde", "nouveau solde",
		"auszug", "buchungstext", "verwendungszweck", "dispositionskredit", "habenzins", "sollzins", "gutschriften",
		"lastschrift", "überweisung", "dauerauftrag", "kontoinhaber", "account holder", "date valeur", "solde",
		"value date", "booking date", "balance brought forward", "sepa-lastschrift", "kartenzahlung"),
	kw(document.Payslip, 4, true, "verdienstabrechnung", "entgeltabrechnung", "gehaltsabrechnung", "lohnabrechnung",
		"payslip", "pay slip", "salary statement", "bulletin de paie", "bulletin de salaire", "lohn- und gehaltsabrechnung",
		"abrechnung der brutto/netto-bezüge", "brutto/netto-abrechnung", "earnings statement", "pay stub"),
	kw(document.Payslip, 1.2, false, "gross pay", "net pay", "lohnsteuer", "solidaritätszuschlag", "krankenversicherung",
		"rentenversicherung", "arbeitslosenversicherung", "pflegeversicherung", "steuerklasse", "salaire brut",
		"sv-brutto", "steuer-brutto", "auszahlungsbetrag", "personalnummer", "gesamt-brutto", "kirchensteuer",
		"national insurance", "income tax", "tax code", "ni number", "net salary", "cotisations", "urlaubsanspruch",
		"eintritt", "gesetzliche abzüge", "gesetzliche netto", "stundenlohn", "grundgehalt", "brutto-bezüge"),
	kw(document.TaxNotice, 4, true, "bescheid", "steuerbescheid", "einkommensteuerbescheid", "umsatzsteuerbescheid",
		"gewerbesteuerbescheid", "grundsteuerbescheid", "bescheid über", "tax assessment", "notice of assessment",
		"avis d'imposition", "avis d'impôt", "festsetzung", "vorauszahlungsbescheid", "änderungsbescheid",
		"gewerbesteuermessbescheid", "feststellungsbescheid"),
	kw(document.TaxNotice, 1.2, false, "finanzamt", "festgesetzt", "festgesetzte", "rechtsbehelfsbelehrung", "einspruch",
		"hmrc", "vorauszahlungen", "abschlusszahlung", "zu versteuerndes einkommen", "steuerpflichtige",
		"steuerpflichtiger", "erstattung", "direction générale des finances publiques", "impôt sur le revenu",
		"internal revenue service", "veranlagungszeitraum", "einkünfte", "steuernummer", "nachzahlung",
		"erläuterungen", "finanzkasse"),
	kw(document.Contract, 3, true, "vertrag", "arbeitsvertrag", "mietvertrag", "dienstvertrag", "kaufvertrag",
		"werkvertrag", "rahmenvertrag", "dienstleistungsvertrag", "vereinbarung", "agreement", "contract",
		"contrat", "service agreement", "employment contract", "lease agreement", "wartungsvertrag",
		"beratungsvertrag", "darlehensvertrag", "leasingvertrag", "vertrag über", "vertragsbedingungen",
		"auftragsverarbeitungsvertrag", "nutzungsvertrag"),
	kw(document.Contract, 1, false, "zwischen", "between", "vertragsparteien", "§ 1", "§1", "unterschrift", "entre",
		"the parties", "die parteien", "parties", "laufzeit", "kündigungsfrist", "hereby", "witnesseth",
		"nachfolgend", "hereinafter", "ci-après", "vertragsgegenstand", "inkrafttreten", "schlussbestimmungen",
		"salvatorische klausel", "gerichtsstand", "signature", "signed", "governing law", "term and termination",
		"unterzeichnet", "ort, datum", "vermieter", "mieter", "arbeitgeber", "arbeitnehmer", "article 1", "artikel 1"),
	kw(document.Other, 4, true, "angebot", "kostenvoranschlag", "lieferschein", "auftragsbestätigung",
		"bestellbestätigung", "mahnung", "zahlungserinnerung", "quote", "quotation", "estimate", "delivery note",
		"order confirmation", "payment reminder", "devis", "bon de livraison", "proforma", "pro-forma", "packing slip",
		"newsletter", "kündigungsbestätigung", "bestätigung", "einladung", "protokoll", "bewerbung", "lebenslauf",
		"zeugnis", "versicherungsschein", "police", "rundschreiben", "informationsschreiben", "mitteilung",
		"bestellung", "purchase order", "packliste", "arbeitsbescheinigung", "bescheinigung", "certificate",
		"zertifikat", "memo", "lohnsteuerbescheinigung",
		"spendenbescheinigung", "reisekostenabrechnung", "fahrtenbuch", "notice", "avis", "rappel"),
)

var kindMatcher = func() *matcher {
	var ps []string
	for _, k := range kindWords {
		ps = append(ps, k.text)
	}
	return newMatcher(ps)
}()

func concat(ls ...[]kindWord) []kindWord {
	var out []kindWord
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

// selfBilled are the words of a self-billed invoice, which Germans call a
// Gutschrift too: it is an invoice, not a credit note.
var selfBilled = newMatcher([]string{"gutschriftsverfahren", "selbst ausgestellte", "selbstausgestellte",
	"im sinne des § 14", "§ 14 abs. 2", "§14 abs. 2", "self-billing", "self billing", "self-billed", "self billed",
	"autofacturation", "abrechnungsgutschrift", "provisionsabrechnung", "provisionsgutschrift"})

func isSelfBilled(d *doc) bool {
	for _, l := range d.lines {
		if len(selfBilled.find(l.raw, fold(l.raw))) > 0 {
			return true
		}
	}
	return false
}

// kindOf scores the kind words of the document: a word that heads the
// first page (a short line, a title cell, or followed by its number)
// counts several times a word found in the body, since a page names what
// it is at the top and mentions many things below.
func kindOf(a *analysis) string {
	k, _ := kindScores(a)
	return k
}

// insideLonger reports whether another hit of the same kind spans h and
// more.
func insideLonger(h hit, hits []hit, kind string) bool {
	for _, o := range hits {
		if o != h && kindWords[o.id].kind == kind && o.start <= h.start && h.end <= o.end && o.end-o.start > h.end-h.start {
			return true
		}
	}
	return false
}

func kindScores(a *analysis) (string, map[string]float64) {
	d := a.d
	score := map[string]float64{}
	letters := 0
	titleLines := 0
	for _, l := range d.lines {
		for _, r := range l.raw {
			if unicode.IsLetter(r) {
				letters++
			}
		}
	}
	if letters < 25 {
		return "", score
	}
	seen := map[*kindWord]int{}
	titled := map[string]bool{}
	// A slip's heading is a weaker title than a page's: a restaurant's
	// "Rechnung", a Malaysian till's "TAX INVOICE".
	shape := receiptShape(a)
	invoiceTitle := 3.0
	if shape > 0 {
		invoiceTitle = 1.5
	}
	for _, l := range d.lines {
		if strings.TrimSpace(l.raw) == "" {
			continue
		}
		top := l.page == 0 && titleLines < 18
		if l.page == 0 {
			titleLines++
		}
		for _, c := range cells(l.raw) {
			c.text = unspaced(c.text)
			if top && compoundInvoice(c.text) {
				score[document.Invoice] += 6
				titled[document.Invoice] = true
			}
			hits := kindMatcher.find(c.text, fold(c.text))
			for _, h := range hits {
				k := &kindWords[h.id]
				if k.titled && insideLonger(h, hits, k.kind) {
					// "Invoice No" is one title, not "Invoice" and again
					// "Invoice No".
					continue
				}
				loc := []int{h.start, h.end}
				if seen[k] >= 3 {
					continue
				}
				seen[k]++
				w := k.w
				if k.titled {
					switch {
					case top && isTitle(c.text, loc) && !afterFunctionWord(l.raw[:c.start]) && !(k.kind == document.Other && isReference(l.raw[min(c.start+loc[1], len(l.raw)):])):
						if k.kind == document.Invoice {
							w *= invoiceTitle
						} else {
							w *= 3
						}
						titled[k.kind] = true
					case k.kind == document.Other:
						// "Bestellung", "Lieferavis", "Mitteilung" in the
						// body of an invoice name what it refers to: a
						// document is "other" by its title alone.
						w *= 0.05
					default:
						// Named in passing ("Ihre Bestellung vom"):
						// evidence, not a title.
						w *= 0.3
					}
					if seen[k] > 1 {
						w *= 0.5
					}
				}
				score[k.kind] += w
				if k.kind == document.Invoice && !k.titled {
					// Billing words are as much a credit note's.
					score[document.CreditNote] += w
				}
			}
		}
	}
	score[document.Receipt] += shape
	if a.hasPaid {
		// Cash tendered and change given: paid at a till, whatever the
		// slip is titled ("TAX INVOICE" on a Malaysian receipt).
		score[document.Receipt] += paidAtTill
	}
	selfBilled := score[document.CreditNote] > 0 && isSelfBilled(d)
	if selfBilled {
		score[document.Invoice] += score[document.CreditNote] + 1
	}
	best, bestScore := document.Other, 2.5
	for _, k := range []string{document.Invoice, document.CreditNote, document.Receipt, document.BankStatement, document.Payslip, document.TaxNotice, document.Contract, document.Other} {
		if score[k] > bestScore {
			best, bestScore = k, score[k]
		}
	}
	// A credit note names the invoice it corrects: its own title wins.
	if best == document.Invoice && titled[document.CreditNote] && !selfBilled {
		best = document.CreditNote
	}
	return best, score
}

// isTitle reports whether a kind word found in a cell heads it: it opens
// a short cell, or it is written in capitals.
func isTitle(text string, loc []int) bool {
	w := strings.TrimSpace(text[loc[0]:loc[1]])
	if len(w) > 3 && strings.ToUpper(w) == w && strings.ToLower(w) != w {
		return true
	}
	lead := strings.TrimLeft(text[:loc[0]], " -*#:")
	if lead != "" {
		return false
	}
	// "Credit Note No. 5 dated 15 May 2015" heads the page too.
	return len(strings.Fields(text)) <= 6 || reNumberNext.MatchString(text[loc[1]:])
}

// afterFunctionWord says whether the text before a cell ends with a short
// lower-case word: the cell goes on a sentence whose words OCR spaced
// apart ("Keep  the  invoice  for  returns"), and heads nothing.
func afterFunctionWord(before string) bool {
	f := strings.Fields(before)
	if len(f) == 0 {
		return false
	}
	w := f[len(f)-1]
	return len(w) <= 4 && strings.ToLower(w) == w && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

var (
	reSpaced   = regexp.MustCompile(`^(\p{Lu} ){3,}\p{Lu}$`)
	reCompound = regexp.MustCompile(`(?i)^[\p{L}-]{3,}(rechnung|factuur|fattura)\b`)
)

// unspaced is a title printed letter-spaced ("R E C H N U N G") as a word.
func unspaced(s string) string {
	if reSpaced.MatchString(s) {
		return strings.ReplaceAll(s, " ", "")
	}
	return s
}

// compoundInvoice says whether a cell opens with a word that names a kind
// of invoice ("Mietrechnung", "Warenrechnung", "Verkoopfactuur"), as a
// title does: short. An "Abrechnung" is a statement, not an invoice.
func compoundInvoice(s string) bool {
	m := reCompound.FindString(s)
	if m == "" || len(strings.Fields(s)) > 6 {
		return false
	}
	w := strings.ToLower(m)
	return !strings.HasSuffix(w, "abrechnung") && !strings.Contains(w, "gutschrift")
}

// isReference says whether what follows a kind word makes it a label
// ("Bestellung Nr. Kunde:", "Lieferschein:"): an invoice refers to the
// order and the delivery note it bills.
func isReference(after string) bool {
	return strings.Contains(after, ":") || reNumberNext.MatchString(after)
}

var reNumberNext = regexp.MustCompile(`(?i)^\s*(no\.?|nr\.?|n°|nº|#|number|nummer|num[ée]ro)\s*:?\s*\S*\d`)

// paidAtTill is the weight of a payment with change on a page: more than
// a title's (3, tripled), since invoices are titled so but never give
// change.
const paidAtTill = 10

var reClock = regexp.MustCompile(`\b([01]?\d|2[0-3]):[0-5]\d\b`)

// receiptShape scores the look of a till receipt: a narrow page, a time
// of day beside the date, and short lines of prices.
func receiptShape(a *analysis) float64 {
	wide, clock, priced, lines := 0, false, 0, 0
	for i, l := range a.d.lines {
		t := strings.TrimSpace(l.raw)
		if t == "" {
			continue
		}
		lines++
		if len([]rune(l.raw)) > 52 {
			wide++
		}
		if !clock && len(a.dates[i]) > 0 && reClock.MatchString(l.raw) {
			clock = true
		}
		if len(a.amounts[i]) > 0 {
			priced++
		}
	}
	if lines == 0 || wide*10 > lines || priced < 2 {
		return 0
	}
	s := 1.5
	if clock {
		// A time of day beside the date on a narrow slip of prices: a
		// till printed it, even when titled "TAX INVOICE".
		s += 3.5
	}
	return s
}

var stopwords = map[string][]string{
	"de": {"der", "die", "das", "und", "ist", "nicht", "mit", "für", "von", "zu", "den", "im", "des", "dem", "ein",
		"eine", "auf", "bei", "wir", "sie", "ihr", "ihre", "bitte", "rechnung", "datum", "betrag", "summe", "oder",
		"vom", "bis", "zum", "zur", "nach", "über", "gesamt", "netto", "brutto", "straße", "str", "herrn", "frau",
		"kunde", "kundennummer", "vielen", "dank", "überweisen", "auszug", "kontostand", "steuer"},
	"en": {"the", "and", "of", "to", "for", "is", "in", "on", "with", "your", "we", "please", "invoice", "date",
		"amount", "total", "you", "this", "our", "from", "by", "due", "payment", "thank", "number", "balance",
		"customer", "order", "tax", "pay", "account", "statement", "street", "receipt", "an", "are", "be"},
	"fr": {"le", "la", "les", "et", "de", "des", "du", "pour", "en", "est", "au", "avec", "votre", "nous",
		"facture", "montant", "à", "un", "une", "sur", "par", "date", "total", "client", "paiement", "merci",
		"rue", "tva", "ttc", "ht", "numéro", "règlement", "échéance", "vous", "dans"},
	"es": {"el", "los", "las", "y", "que", "por", "con", "para", "factura", "fecha", "importe", "gracias", "del"},
	"it": {"il", "di", "che", "e", "per", "con", "fattura", "data", "importo", "totale", "grazie", "della", "del"},
	"nl": {"de", "het", "een", "en", "van", "voor", "met", "factuur", "datum", "bedrag", "totaal", "bedankt", "op"},
}

var stopIndex = func() map[string][]string {
	m := map[string][]string{}
	for lang, ws := range stopwords {
		for _, w := range ws {
			m[w] = append(m[w], lang)
		}
	}
	return m
}()

// languageOf counts common words of each language; it answers only when
// one language clearly leads.
func languageOf(d *doc) string {
	count := map[string]int{}
	total := 0
	for _, l := range d.lines {
		for _, w := range strings.FieldsFunc(strings.ToLower(l.raw), func(r rune) bool { return !unicode.IsLetter(r) }) {
			total++
			for _, lang := range stopIndex[w] {
				count[lang]++
			}
		}
		if total > 5000 {
			break
		}
	}
	best, second := "", 0
	for _, lang := range []string{"de", "en", "fr", "es", "it", "nl"} {
		if best == "" || count[lang] > count[best] {
			if best != "" {
				second = count[best]
			}
			best = lang
		} else if count[lang] > second {
			second = count[lang]
		}
	}
	if count[best] < 3 || float64(count[best]) < 1.25*float64(second) {
		return ""
	}
	return best
}
