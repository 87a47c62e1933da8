package docfields

import (
	"sort"
	"strings"
)

// role is what a label says about the value beside or below it.
type role int

const (
	rNone role = iota
	// dates
	rIssue
	rIssueWeak // "Datum", "Date", "vom": an issue date unless a stronger label says otherwise
	rDue
	rDelivery
	rOrder
	rBirth
	rPeriod
	rOtherDate // entry dates, validity, transaction dates: never the issue date
	// numbers
	rDocNo
	rDocNoWeak // a title ("Rechnung 2018-042") or a bare "Nr."
	rCustomerNo
	rOrderNo
	rTaxNo
	rVATID
	rVATIDRecipient
	rIBAN
	rPhone
	// amounts
	rGross    // Gesamtbetrag, Total TTC: the total including tax
	rDue2     // Zu zahlen, Amount due: usually the total
	rTotal    // Total, Summe: a total of some kind
	rTotalLow // Betrag, BAR, card payments
	rNet
	rTax
	rAmountOther // change, discounts, balances, unit prices: never the total
	// people and parties
	rIssuer
	rRecipient
	rItemHeader // a table header of line items: its columns are not totals
	rLast
)

func (r role) isDate() bool { return r >= rIssue && r <= rOtherDate }
func (r role) isAmount() bool {
	return r >= rGross && r <= rAmountOther || r == rItemHeader
}

// Labels, as spelled on pages in German, English and French. In a label
// a space matches any spacing (or none, as OCR drops spaces), '.' an
// optional dot, '-' an optional hyphen; letters match their OCR
// confusions (see fuzzy).
var labelTable = map[role][]string{
	rIssue: {
		"rechnungsdatum", "rechnungs-datum", "re.-datum", "re-datum", "rg.-datum", "belegdatum", "beleg-datum",
		"datum der rechnung", "ausstellungsdatum", "ausgestellt am", "rechnung vom", "gutschriftsdatum",
		"gutschrift vom", "datum der gutschrift", "auszugsdatum", "erstellt am", "erstellungsdatum", "bescheid vom",
		"kontoauszug vom", "abrechnungsdatum", "quittungsdatum", "verkaufsdatum", "kaufdatum", "druckdatum",
		"invoice date", "date of invoice", "date of issue", "issue date", "issued on", "date issued", "invoice dated",
		"statement date", "date of statement", "credit note date", "receipt date", "document date", "tax invoice date",
		"date de facture", "date de la facture", "date d'émission", "date d'emission", "date facture", "facture du",
		"date de l'avoir", "avoir du", "date du document", "date d'édition", "fait le",
		"factuurdatum", "datum factuur", "factuur datum", "datum van de factuur", "data fattura", "data della fattura", "data documento", "data emissione", "data di emissione", "fecha de factura", "fecha factura", "fecha de emisión", "fecha emisión", "fecha de expedición", "fecha de la factura", "creditnotadatum",
	},
	rIssueWeak: {"datum", "date", "dated", "vom", "von", "du", "den", "am", "le", "del", "van", "fecha", "data"},
	rDue: {
		"fällig am", "fällig bis", "fällig zum", "fälligkeit", "fälligkeitsdatum", "zahlbar bis", "zahlbar am",
		"zahlbar bis zum", "zahlungsziel", "zahlungsfrist", "spätestens am", "spätestens bis", "zu zahlen bis",
		"bitte zahlen sie bis", "bitte überweisen sie bis", "bis zum", "valuta", "abbuchung am", "abbuchung erfolgt am",
		"wird am", "due date", "due on", "due by", "payment due", "pay by", "payable by", "payable on", "date due",
		"payment date", "date d'échéance", "échéance", "à payer avant le", "a payer avant le", "payable le",
		"date limite de paiement", "zahlungstermin", "avant le", "à effectuer avant le", "à régler avant le",
		"before", "no later than", "spätestens",
		"vervaldatum", "vervaldag", "te betalen voor", "uiterlijk betalen voor", "data scadenza", "data di scadenza", "scadenza", "fecha de vencimiento", "vencimiento", "fecha vencimiento",
	},
	rDelivery: {
		"lieferdatum", "liefertermin", "leistungsdatum", "leistungszeitraum", "leistungszeitpunkt", "lieferung vom",
		"lieferung am", "geliefert am", "leistung vom", "ausführungsdatum", "ausgeführt am", "ausführungszeitraum",
		"lieferzeitraum", "versanddatum", "versandt am", "delivery date", "date of delivery", "date of supply",
		"supply date", "service date", "service period", "tax point", "shipping date", "ship date", "shipped on",
		"delivered on", "date de livraison", "date de prestation", "période de prestation", "livré le",
		"lieferschein vom", "leistung im", "leistungsmonat",
		"leverdatum", "data consegna", "data di consegna", "fecha de entrega",
	},
	rOrder: {
		"bestelldatum", "bestellung vom", "ihre bestellung vom", "auftragsdatum", "auftrag vom", "ihr auftrag vom",
		"bestellt am", "angebot vom", "angebotsdatum", "ihr schreiben vom", "ihre anfrage vom", "ihr zeichen vom",
		"order date", "date of order", "ordered on", "your order of", "order placed", "po date",
		"date de commande", "commande du", "devis du", "unser schreiben vom",
		"besteldatum", "orderdatum", "data ordine", "fecha de pedido",
	},
	rBirth: {
		"geburtsdatum", "geb.", "geboren am", "date of birth", "birth date", "dob", "né le", "née le",
		"date de naissance",
	},
	rPeriod: {
		"zeitraum", "abrechnungszeitraum", "abrechnungsmonat", "abrechnung für", "abrechnungsperiode",
		"abrechnung für den monat", "pay period", "period", "statement period", "période", "auszugszeitraum",
		"lohnzeitraum", "monat", "month", "periode",
	},
	rOtherDate: {
		"beginnt am", "beginnt", "starts on", "start on", "commences on", "ab dem", "endet am", "mit wirkung zum",
		"mit wirkung vom", "gültig vom", "eintritt", "eintrittsdatum", "austritt", "gültig bis", "gültig ab", "valid until", "valid from", "stand",
		"buchungstag", "buchungsdatum", "wertstellung", "wert", "mandatsdatum", "vertragsbeginn", "beginn",
		"vertragsende", "kündigung", "ablauf", "start date", "end date", "booking date", "value date",
		"date of entry", "entry date", "hire date", "angebot gültig bis", "date d'entrée", "expires", "expiry",
		"transaction date", "posting date", "mietbeginn", "seit", "date de facture associée", "date de la facture d'origine",
		"date facture d'origine", "original invoice date", "preceding invoice date", "datum der ursprungsrechnung",
		"ursprungsrechnung vom", "datum der ursprünglichen rechnung", "date de debut de prestation", "date de fin de prestation",
		"date de début", "date de fin", "start of service", "end of service",
		"version", "stylesheet-version", "codelisten-version", "zugferd-version", "schema version", "copyright", "printed on", "gedruckt am",
	},
	rDocNo: {
		"rechnungsnummer", "rechnungs-nr", "rechnung nr", "rechnung-nr", "rechnungsnr", "re.-nr", "re-nr", "re nr",
		"rg.-nr", "rg-nr", "rg nr", "rechnung no", "rechnungs-no", "belegnummer", "beleg-nr", "beleg nr", "belegnr",
		"bon-nr", "bonnummer", "bon nr", "bon", "gutschriftsnummer", "gutschrift-nr", "gutschrift nr", "gutschriftnr",
		"dokumentnummer", "dokument-nr", "quittungsnummer", "quittung nr", "auszug nr", "kontoauszug nr",
		"auszugsnummer", "kontoauszugsnummer", "invoice no", "invoice number", "invoice #", "invoice nr",
		"invoice id", "inv. no", "inv #", "inv-no", "invoice n°", "credit note no", "credit note number",
		"credit note #", "credit memo no", "receipt no", "receipt number", "receipt #", "document no",
		"document number", "statement no", "statement number", "n° de facture", "no de facture", "nº de facture",
		"numéro de facture", "numero de facture", "facture n°", "facture no", "facture nº", "avoir n°",
		"n° d'avoir", "numéro d'avoir", "ticket n°", "n° de ticket", "transaktionsnummer", "trans.-nr",
		"rechnungs-nummer", "rechnungs nr", "trans", "trans #", "transaction no", "transaction #", "txn",
		"factuurnummer", "factuurnr", "factuur nr", "factuur nummer", "creditnotanummer", "numero fattura", "numero della fattura", "n. fattura", "fattura n", "fattura nr", "fattura numero", "número de factura", "numero de factura", "nº de factura", "n.º factura", "factura n", "factura nº", "factura no", "factura número", "nº factura", "num. factura", "bill no", "bill #", "cash bill no", "receipt no.", "invoice no.", "doc no", "slip no", "inv no",
	},
	rDocNoWeak: {
		"rechnung", "invoice", "facture", "gutschrift", "credit note", "avoir", "kontoauszug", "quittung",
		"nummer", "nr", "no", "n°", "nº", "number", "#", "beleg",
	},
	rCustomerNo: {
		"kundennummer", "kunden-nr", "kunden nr", "kundennr", "kd.-nr", "kd-nr", "kd nr", "kdnr", "customer no",
		"customer number", "customer id", "customer #", "account no", "account number", "acct no", "client n°",
		"n° client", "numéro client", "numero client", "code client", "client no", "debitor", "debitorennummer",
		"debitoren-nr", "mitgliedsnummer", "personalnummer", "pers.-nr", "pers-nr", "vertragsnummer", "vertrags-nr",
		"vertragskonto", "contract no", "contract number", "kontonummer", "konto-nr", "konto nr", "kto.-nr",
		"kto-nr", "employee no", "employee id", "matricule", "identifikationsnummer", "id-nr", "sv-nummer",
		"versicherungsnummer", "rv-nummer", "aktenzeichen", "az.", "zeichen", "ihr zeichen", "unser zeichen",
		"buchungskonto", "anschlusskennung", "teilnehmernummer", "user id", "benutzerkonto",
		"klantnummer", "klantnr", "codice cliente", "número de cliente", "numero cliente", "member no", "member id", "card no",
	},
	rOrderNo: {
		"bestellnummer", "bestell-nr", "bestellnr", "bestellung nr", "auftragsnummer", "auftrags-nr", "auftrag nr",
		"auftragsnr", "order no", "order number", "order #", "order id", "purchase order", "po number", "po no",
		"po #", "n° de commande", "commande n°", "numéro de commande", "lieferschein-nr", "lieferscheinnummer",
		"lieferschein nr", "delivery note no", "delivery note", "lieferschein", "angebotsnummer", "angebot nr",
		"projektnummer", "projekt-nr", "projekt nr", "project no", "referenz", "ihre referenz", "your reference",
		"reference", "ref.", "réf.", "référence", "mandatsreferenz", "mandate reference", "gläubiger-id",
		"gläubiger-identifikationsnummer", "creditor id", "terminal-id", "terminal id", "tse", "trace-nr", "trace nr",
		"beleg-nr. terminal", "kasse", "kassen-nr", "filiale", "tisch", "table", "sendungsnummer", "tracking",
		"artikelnummer", "art.-nr", "art-nr", "sku", "item no", "bestellnummer amazon", "auftrag",
		"n° de facture associée", "facture associée", "facture d'origine", "original invoice", "preceding invoice",
		"ursprungsrechnung", "ursprüngliche rechnung", "bezug rechnung", "referenced invoice", "corrected invoice",
		"bestelnummer", "ordernummer", "numero ordine", "número de pedido", "pedido", "cashier", "counter", "pos no", "table no",
	},
	rTaxNo: {
		"steuernummer", "steuer-nr", "st.-nr", "st-nr", "stnr", "st.nr", "steuer nr", "tax number", "tax no",
		"tax reference", "utr", "siret", "siren", "rcs", "hrb", "hra", "amtsgericht", "handelsregister",
		"registergericht", "registre du commerce", "company no", "company number", "registration no",
		"reg. no", "steuer-id", "steueridentifikationsnummer", "idnr", "finanzamt", "ape", "naf",
		"kvk", "kvk-nummer", "kvk nummer", "gst reg no", "gst reg", "gst id", "gst no", "co reg no", "co. reg", "company reg", "roc no", "sst id", "sst reg",
	},
	rVATID: {
		"ust-idnr", "ust-id-nr", "ust-id", "ust.-idnr", "ust.-id", "ust id", "ustid", "ust.id", "ust-ident-nr",
		"umsatzsteuer-id", "umsatzsteuer-identifikationsnummer", "umsatzsteuer-idnr", "ust-identnummer",
		"mwst-nr", "uid", "uid-nr", "vat id", "vat-id", "vat no", "vat number", "vat reg no", "vat reg. no",
		"vat registration number", "vat registration no", "n° tva", "no tva", "numéro de tva", "tva intracom",
		"tva intracommunautaire", "n° tva intracommunautaire", "identifiant tva", "id. tva", "btw-nummer",
		"partita iva", "p. iva", "nif", "cif",
		"btw-nr", "btw nr", "btw nummer", "btw-id", "btw id", "btw-identificatienummer", "p.iva", "p. i.v.a", "codice fiscale e partita iva", "n.i.f", "nif/cif", "número de iva",
	},
	rVATIDRecipient: {
		"ihre ust-idnr", "ihre ust-id", "kunden-ust-idnr", "ust-idnr des kunden", "ust-idnr. des leistungsempfängers",
		"ust-id des kunden", "ust-idnr kunde", "leistungsempfänger", "customer vat", "customer vat id",
		"customer vat no", "your vat", "your vat id", "buyer vat", "client vat", "tva client", "n° tva client",
		"votre n° tva", "vat id customer", "kunden-ust-id", "empfänger ust-idnr", "recipient vat",
	},
	rIBAN: {"iban", "bankverbindung", "bank details", "kontoverbindung", "coordonnées bancaires", "rib"},
	rPhone: {
		"telefon", "tel", "tel.", "fon", "fax", "telefax", "mobil", "handy", "phone", "mobile", "hotline",
		"téléphone", "tél", "portable", "blz", "bic", "swift", "bank code", "sort code", "plz",
		"tel no", "telp", "h/p", "phone no", "fax no",
	},
	rGross: {
		"gesamtbetrag", "rechnungsbetrag", "bruttobetrag", "summe brutto", "brutto summe", "bruttosumme",
		"gesamtsumme", "gesamt brutto", "brutto gesamt", "endbetrag", "endsumme", "rechnungssumme",
		"rechnungsendbetrag", "gesamtbetrag brutto", "gesamtbetrag inkl", "summe inkl", "betrag inkl",
		"gesamt inkl", "bruttorechnungsbetrag", "gutschriftsbetrag", "gutschriftbetrag", "erstattungsbetrag",
		"gesamtpreis brutto", "total amount", "grand total", "invoice total", "total invoice amount",
		"total incl", "total including", "total (incl", "total gross", "gross total", "gross amount",
		"total inc", "total ttc", "montant ttc", "total t.t.c", "montant total ttc", "montant total",
		"total facture", "credit total", "total credit", "summe eur", "brutto", "auszahlungsbetrag",
		"auszahlung", "net pay", "take home pay", "net salary", "salaire net", "net payé", "net à payer avant",
		"überweisungsbetrag", "abschlusszahlung", "nachzahlung", "verbleibende nachzahlung", "zu entrichten",
		"festgesetzt", "ttc", "eur ttc", "montant eur ttc", "somme à payer", "total facture ttc", "verbleibende beträge", "verbleibender betrag", "amount payable", "balance payable", "tax due",
		"totaal te betalen", "totaalbedrag", "totaal incl", "totaal incl. btw", "totaal inclusief btw", "te betalen bedrag", "totale fattura", "totale documento", "totale da pagare", "totale complessivo", "importo totale", "importe total", "total factura", "total a pagar", "importe a pagar", "total con iva", "rounded total", "total rounded", "total (incl gst)", "total incl gst", "total inclusive gst", "total inclusive", "total incl. gst", "total amount payable", "nett total", "net total payable", "total payable", "grand total (rm)", "total (rm)", "total rm", "total sales (inclusive", "total sales inclusive", "total sales incl",
		"total amt rounded", "totalamtrounded", "total after adj", "total after adjustment", "total after rounding", "total amount rounded", "rounded amount", "round total", "rounded total (rm)", "round d total", "total sales", "total amt", "nett amount", "net amount payable", "amount payable (rm)",
	},
	rDue2: {
		"zu zahlen", "zahlbetrag", "zu zahlender betrag", "zahlungsbetrag", "offener betrag", "noch zu zahlen",
		"amount due", "total due", "balance due", "total to pay", "amount to pay", "to pay", "total payable",
		"net à payer", "net a payer", "total à payer", "total a payer", "montant dû", "montant du", "reste à payer",
		"à payer", "a payer", "den betrag von", "betrag von",
	},
	rTotal: {
		"summe", "total", "gesamt", "betrag gesamt", "total eur", "total €", "totaal", "totale", "sum",
	},
	rTotalLow: {
		"betrag", "bar", "bar eur", "ec-karte", "ec karte", "kartenzahlung", "girocard", "visa", "mastercard",
		"maestro", "kreditkarte", "cash", "card", "amount", "montant", "paid", "bezahlt", "espèces", "carte bancaire",
		"cb", "payé",
	},
	rNet: {
		"nettobetrag", "netto", "summe netto", "gesamt netto", "netto gesamt", "nettosumme", "zwischensumme",
		"warenwert", "gesamtbetrag netto", "rechnungsbetrag netto", "betrag netto", "summe positionen",
		"subtotal", "sub-total", "sub total", "net amount", "net total", "total net", "total excl",
		"total excluding", "amount excl", "total before tax", "total ht", "montant ht", "sous-total", "sous total",
		"total hors taxes", "total h.t", "montant net", "net", "nettowert", "entgelt", "bemessungsgrundlage",
		"total (excl", "zwischensumme netto", "positionssumme", "summe positionen netto", "ht", "eur ht", "montant eur ht",
		"total hors taxe", "base ht", "base tva", "base imposable", "taxable amount", "net value",
		"ohne mwst", "ohne ust", "exkl. mwst", "exkl. ust", "excl. vat", "excl. tax", "hors tva", "before tax", "warenwert netto", "nettowarenwert", "steuerbasisbetrag", "steuerbasis",
		"subtotaal", "totaal excl", "totaal excl. btw", "totaal exclusief btw", "netto bedrag", "imponibile", "totale imponibile", "base imponibile", "base imponible", "importe neto", "total sin iva", "total excl gst", "total excluding gst", "total exclusive gst", "total sales (excluding", "total sales excluding", "total sales (excl",
	},
	rTax: {
		"mwst", "mwst.", "mehrwertsteuer", "ust", "ust.", "umsatzsteuer", "zzgl. mwst", "zzgl. ust", "zzgl mwst",
		"zzgl. umsatzsteuer", "zzgl.", "enthaltene mwst", "enthaltene ust", "inkl. mwst", "inkl. ust",
		"darin enthalten", "enthalten", "vat", "tax", "sales tax", "vat amount", "total vat", "tax amount",
		"plus vat", "tva", "montant tva", "total tva", "t.v.a", "steuer", "mwst-betrag", "ust-betrag", "ust.-betrag", "montant de la tva", "total tva",
		"umsatzsteuerbetrag", "steuerbetrag", "gst", "iva", "btw", "summe mwst", "summe ust", "mwst gesamt",
		"incl. vat", "including vat",
		"btw-bedrag", "btw bedrag", "totaal btw", "imposta", "totale iva", "importo iva", "cuota iva", "cuota de iva", "total iva", "total gst", "gst amount", "gst payable", "sst", "service tax", "total tax",
	},
	rAmountOther: {
		"rückgeld", "gegeben", "zurück", "change", "change due", "change cash", "cash change", "cash tendered", "tendered", "bereits bezahlt",
		"bereits gezahlt", "anzahlung", "abschlag", "abschlagszahlung", "skonto", "rabatt", "discount", "nachlass",
		"einzelpreis", "unit price", "e-preis", "ep", "stückpreis", "prix unitaire", "pu ht", "kontostand",
		"saldo", "alter kontostand", "neuer kontostand", "balance", "opening balance", "closing balance",
		"ancien solde", "nouveau solde", "solde", "gesamt-brutto", "gesamtbrutto", "gross pay", "bruttoverdienst",
		"bruttolohn", "bruttogehalt", "steuer-brutto", "steuerbrutto", "sv-brutto", "lohnsteuer", "kirchensteuer",
		"solidaritätszuschlag", "solizuschlag", "krankenversicherung", "rentenversicherung",
		"arbeitslosenversicherung", "pflegeversicherung", "gesamtabzüge", "abzüge", "total deductions",
		"deductions", "trinkgeld", "tip", "versandkosten", "versand", "shipping", "porto", "verpackung",
		"gutschein", "voucher", "pfand", "payment received", "zahlung erhalten", "gezahlt", "erhalten",
		"vorauszahlung", "vorauszahlungen", "einkommensteuer", "solidaritätszuschlag", "zu versteuerndes einkommen",
		"summe der einkünfte", "gesamtbetrag der einkünfte", "einkünfte", "dispositionskredit", "verfügbar",
		"kreditlinie", "available", "salaire brut", "brut", "gross", "cotisations", "miete", "kaution",
		"monatsmiete", "entgelt brutto", "stundenlohn", "summe soll", "summe haben", "umsätze", "bereits erstattet",
		"erstattung", "zuviel gezahlt", "anrechnung", "festgesetzte", "lohnsteuerabzug", "mindestbetrag",
		"rounding", "rounding adj", "rounding adjustment", "round adj", "round off", "adjustment", "wisselgeld", "resto", "cambio", "tendered cash", "cash paid", "paid amount", "amount paid", "amount tendered", "discount", "total qty", "total quantity", "qty total", "total item", "total items", "no of items", "item count", "saving", "you saved", "points",
		"payment", "tender", "tendered amount", "cash received", "received", "balance due to customer", "rebate",
	},
	rIssuer: {
		"rechnungssteller", "verkäufer", "seller", "from", "vendor", "supplier", "lieferant", "auftragnehmer",
		"fournisseur", "vendeur", "émetteur", "emetteur", "arbeitgeber", "employer", "leistungserbringer",
		"absender", "issued by", "sold by", "verkauft von", "company", "firma", "händler", "merchant",
	},
	rRecipient: {
		"rechnungsempfänger", "rechnungsadresse", "rechnungsanschrift", "bill to", "billed to", "billing address",
		"invoice to", "invoiced to", "sold to", "ship to", "deliver to", "lieferadresse", "lieferanschrift",
		"empfänger", "kunde", "customer", "an", "to", "client", "facturé à", "facture à", "adresse de facturation",
		"adresse de livraison", "destinataire", "adressé à", "kontoinhaber", "account holder", "arbeitnehmer",
		"employee", "mitarbeiter", "auftraggeber", "mieter", "tenant", "käufer", "buyer", "steuerpflichtige",
		"steuerpflichtiger", "herrn", "herr", "frau", "eheleute", "mr", "mrs", "ms", "m.", "mme", "madame",
		"monsieur", "z. hd", "z.hd", "attn", "c/o", "zu händen",
	},
	rItemHeader: {
		"menge", "anzahl", "stk", "stück", "qty", "quantity", "einzelpreis", "e-preis", "unit price", "ep",
		"beschreibung", "bezeichnung", "artikel", "leistung", "description", "item", "pos", "pos.", "position",
		"désignation", "quantité", "prix unitaire", "qté", "einheit", "unit", "ust %", "mwst %", "tax %",
		"stückpreis", "preis", "price", "einh.", "rate", "hours", "std.", "line total", "prix", "p.u.", "p.u. ht",
		"artikelnummer", "art.-nr", "anz.", "stk.", "me", "vorgang", "buchungstext", "verwendungszweck",
	},
}

// labelWeight ranks labels of one role: a longer, more specific label is
// more trustworthy than a short one. Weak roles weigh themselves.
func labelWeight(r role, text string) float64 {
	switch r {
	case rIssueWeak, rDocNoWeak, rTotalLow:
		return 1
	}
	return 1 + float64(min(len(text), 20))/40
}

type labelDef struct {
	role role
	text string
}

var (
	labelDefs    []labelDef
	labelMatcher *matcher
)

func init() {
	var phrases []string
	for r := role(0); r < rLast; r++ {
		for _, l := range labelTable[r] {
			labelDefs = append(labelDefs, labelDef{role: r, text: l})
			phrases = append(phrases, l)
		}
	}
	labelMatcher = newMatcher(phrases)
}

// found is a label found on a line.
type found struct {
	role       role
	start, end int    // byte offsets in the line
	text       string // as printed
	canon      string // as listed in labelTable
}

// labelsIn finds the labels of a line. A label must start and end at a
// word edge (a digit or punctuation counts: OCR glues labels to values),
// and where two overlap the longer wins.
func labelsIn(s string) []found {
	var all []found
	for _, h := range labelMatcher.find(s, fold(s)) {
		d := labelDefs[h.id]
		all = append(all, found{role: d.role, start: h.start, end: h.end, text: s[h.start:h.end], canon: d.text})
	}
	sort.Slice(all, func(i, j int) bool {
		li, lj := all[i].end-all[i].start, all[j].end-all[j].start
		if li != lj {
			return li > lj
		}
		return all[i].role < all[j].role
	})
	var kept []found
	for _, f := range all {
		overlap := false
		for _, k := range kept {
			if f.start < k.end && k.start < f.end {
				overlap = true
				break
			}
		}
		if !overlap {
			kept = append(kept, f)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })
	// "zzgl. 19% MwSt." is one label, not two.
	out := kept[:0]
	for _, f := range kept {
		if n := len(out); n > 0 && out[n-1].role == f.role && strings.Trim(s[out[n-1].end:f.start], " .:%0123456789,()") == "" && !strings.Contains(s[out[n-1].end:f.start], "  ") {
			out[n-1].end = f.end
			out[n-1].text = s[out[n-1].start:f.end]
			if len(f.canon) > len(out[n-1].canon) {
				out[n-1].canon = f.canon
			}
			continue
		}
		out = append(out, f)
	}
	return out
}
