package docfields

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"acctapi/document"
)

func (g *gen) receipt() (string, truth) {
	g.setup("de", "de", "de", "en", "fr")
	shop := g.pick("Bäckerei", "Café", "Restaurant", "Tankstelle", "Baumarkt", "Drogerie", "Buchhandlung", "Getränkemarkt") + " " + g.pick(deLast...)
	switch g.lang {
	case "en":
		shop = g.pick("The", "") + " " + g.pick(enBrand...) + " " + g.pick("Café", "Bakery", "Stores", "Pub", "Kitchen")
		shop = strings.TrimSpace(shop)
	case "fr":
		shop = g.pick("Boulangerie", "Café", "Brasserie", "Librairie", "Pharmacie") + " " + g.pick(frLast...)
	}
	if g.chance(0.3) {
		shop = strings.ToUpper(shop)
	}
	p := g.company()
	day := g.date()
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	w := 38
	center := func(s string) string {
		n := (w - len([]rune(s))) / 2
		if n < 0 {
			n = 0
		}
		return strings.Repeat(" ", n) + s
	}
	add(center(shop), center(p.street), center(p.city))
	if g.chance(0.6) {
		add(center(g.pick("Tel.", "Tel:", "Tél.") + " " + g.digits(4) + " " + g.digits(6)))
	}
	showVAT := p.vat != "" && g.chance(0.5)
	if showVAT {
		add(center(g.pick("USt-IdNr.", "UID", "VAT No.", "N° TVA") + " " + p.vat))
	}
	if g.lang == "de" && g.chance(0.5) {
		add(center("St.-Nr. " + g.digits(3) + "/" + g.digits(3) + "/" + g.digits(5)))
	}
	add("")
	restaurant := strings.Contains(strings.ToLower(shop), "restaurant") || strings.Contains(strings.ToLower(shop), "café") || strings.Contains(strings.ToLower(shop), "brasserie") || strings.Contains(strings.ToLower(shop), "pub")
	if restaurant && g.chance(0.7) {
		add(pad(g.pick("Tisch", "Table")+" "+strconv.Itoa(1+g.r.IntN(30)), g.pick("Bedienung", "Server", "Serveur")+": "+g.pick(deFirst...), 20))
	}
	bon := g.digits(4 + g.r.IntN(3))
	hhmm := fmt.Sprintf("%02d:%02d", 7+g.r.IntN(14), g.r.IntN(60))
	bonLabel := map[string]string{"de": g.pick("Bon-Nr.", "Beleg-Nr.", "Bon", "Belegnummer"), "en": g.pick("Receipt No.", "Receipt #", "Trans"), "fr": g.pick("Ticket n°", "N° de ticket")}[g.lang]
	dateLine := g.fmtDate(day) + " " + hhmm
	if g.chance(0.5) {
		add(pad(dateLine, bonLabel+" "+bon, 22))
	} else {
		add(bonLabel+": "+bon, g.pick("Datum: ", "Date: ", "")+dateLine)
	}
	if g.lang == "de" && g.chance(0.4) {
		add("Kasse: " + strconv.Itoa(1+g.r.IntN(5)) + "  Kassierer: " + g.pick(deFirst...))
	}
	add(strings.Repeat("-", w))
	var total int64
	goods := map[string][]string{
		"de": {"Brötchen", "Kaffee", "Cappuccino", "Wasser 0,5l", "Schnitzel", "Apfelschorle", "Schrauben 4x40", "Zeitung", "Duschgel", "Benzin Super E10"},
		"en": {"Coffee", "Sandwich", "Tea", "Water", "Fish & Chips", "Newspaper", "Pint of Ale", "Scone"},
		"fr": {"Baguette", "Croissant", "Café", "Eau minérale", "Menu du jour", "Journal"},
	}[g.lang]
	n := 1 + g.r.IntN(6)
	for i := 0; i < n; i++ {
		q := 1 + g.r.IntN(3)
		c := int64(q * (80 + g.r.IntN(2500)))
		total += c
		d := g.pick(goods...)
		if q > 1 {
			d = fmt.Sprintf("%d x %s", q, d)
		}
		add(pad(d, g.money(c)+" "+g.pick("A", "B", "1", ""), w-10))
	}
	add(strings.Repeat("-", w))
	rate := int64(19)
	if g.lang == "fr" || g.lang == "en" {
		rate = 20
	}
	if g.lang == "de" && (restaurant && g.chance(0.5) || g.chance(0.2)) {
		rate = 7
	}
	net := total * 100 / (100 + rate)
	tax := total - net
	sumLabel := map[string]string{"de": g.pick("SUMME EUR", "Summe", "SUMME", "Gesamt", "Zu zahlen", "TOTAL"), "en": g.pick("TOTAL", "Total", "Amount due", "Balance due"), "fr": g.pick("TOTAL TTC", "Total", "TOTAL EUR")}[g.lang]
	add(pad(sumLabel, g.money(total), w-10))
	paidCash := g.chance(0.5)
	if paidCash {
		given := (total/1000 + 1) * 1000
		add(pad(map[string]string{"de": g.pick("BAR", "Bar", "Gegeben"), "en": g.pick("CASH", "Cash"), "fr": "Espèces"}[g.lang], g.money(given), w-10))
		add(pad(map[string]string{"de": g.pick("Rückgeld", "Zurück"), "en": "Change", "fr": "Rendu"}[g.lang], g.money(given-total), w-10))
	} else {
		add(pad(map[string]string{"de": g.pick("EC-Karte", "Kartenzahlung", "girocard"), "en": g.pick("CARD", "Visa", "Contactless"), "fr": "Carte bancaire"}[g.lang], g.money(total), w-10))
	}
	showTax := g.chance(0.7)
	if showTax {
		add("")
		switch g.r.IntN(2) {
		case 0:
			add(pad(pad(pad(map[string]string{"de": "MwSt", "en": "VAT", "fr": "TVA"}[g.lang], map[string]string{"de": "Netto", "en": "Net", "fr": "HT"}[g.lang], 10), map[string]string{"de": "Steuer", "en": "Tax", "fr": "TVA"}[g.lang], 20), map[string]string{"de": "Brutto", "en": "Gross", "fr": "TTC"}[g.lang], 30))
			add(pad(pad(pad(fmt.Sprintf("A %d%%", rate), g.money(net), 10), g.money(tax), 20), g.money(total), 30))
		default:
			add(fmt.Sprintf("%s %d%% %s", map[string]string{"de": "enth. MwSt", "en": "incl. VAT", "fr": "dont TVA"}[g.lang], rate, g.money(tax)))
			add(fmt.Sprintf("%s %s", map[string]string{"de": "Netto", "en": "Net", "fr": "Total HT"}[g.lang], g.money(net)))
		}
	}
	add("")
	if g.lang == "de" && g.chance(0.5) {
		add("TSE-Signatur: "+g.digits(8)+"ABCDEF"+g.digits(6), "TSE-Transaktion: "+g.digits(5), "Start: "+day.Format("2006-01-02")+"T"+hhmm+":00")
	}
	add(center(map[string]string{"de": g.pick("Vielen Dank für Ihren Einkauf!", "Vielen Dank für Ihren Besuch"), "en": "Thank you for your visit!", "fr": "Merci de votre visite !"}[g.lang]))
	if restaurant && g.lang == "de" && g.chance(0.4) {
		add("", "Bewirtungsbeleg", "Bewirtete Personen: ______", "Anlass der Bewirtung: ______", "Trinkgeld: ______")
	}
	t := truth{Kind: document.Receipt, Language: g.lang, Fields: document.Fields{
		DocumentNumber: bon, IssueDate: iso(day), Currency: g.cur, TotalAmount: formatCents(total), IssuerName: shop,
	}}
	if showTax {
		t.Fields.NetAmount, t.Fields.TaxAmount = formatCents(net), formatCents(tax)
	}
	if showVAT {
		t.Fields.IssuerVATID = p.vat
	}
	return strings.Join(lines, "\n"), t
}

func (g *gen) statement() (string, truth) {
	g.setup("de", "de", "en", "fr")
	g.cur = "EUR"
	bank := g.pick("Sparkasse "+strings.Fields(g.pick(deCities...))[1], "Volksbank Mittelhessen eG", "Commerzbank AG", "Deutsche Bank AG", "Postbank", "DKB Deutsche Kreditbank AG", "ING-DiBa AG", "Berliner Volksbank eG")
	switch g.lang {
	case "en":
		bank = g.pick("Barclays Bank UK PLC", "HSBC UK Bank plc", "Lloyds Bank plc", "Revolut Bank UAB")
	case "fr":
		bank = g.pick("Crédit Agricole", "BNP Paribas", "Société Générale", "Caisse d'Épargne", "Banque Populaire")
	}
	holder := g.person()
	acc := g.iban(map[string]string{"de": "DE", "en": "GB", "fr": "FR"}[g.lang])
	end := g.date()
	start := time.Date(end.Year(), end.Month(), 1, 0, 0, 0, 0, time.UTC)
	end = time.Date(end.Year(), end.Month()+1, 0, 0, 0, 0, 0, time.UTC)
	no := strconv.Itoa(1+g.r.IntN(12)) + g.pick("", "/"+strconv.Itoa(end.Year()))
	L := map[string][]string{
		"de": {"Kontoauszug", "Auszug Nr.", "Datum", "Zeitraum", "Kontoinhaber", "IBAN", "Alter Kontostand", "Neuer Kontostand", "Buchungstag", "Wert", "Verwendungszweck", "Betrag", "bis"},
		"en": {"Account statement", "Statement No.", "Statement date", "Period", "Account holder", "IBAN", "Opening balance", "Closing balance", "Date", "Value date", "Description", "Amount", "to"},
		"fr": {"Relevé de compte", "Relevé n°", "Date", "Période", "Titulaire", "IBAN", "Ancien solde", "Nouveau solde", "Date", "Valeur", "Libellé", "Montant", "au"},
	}[g.lang]
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	add(bank)
	if g.chance(0.5) {
		add(g.pick(deStreet...)+" "+strconv.Itoa(1+g.r.IntN(90)), g.pick(deCities...))
	}
	add("")
	add(holder, g.pick(deStreet...)+" "+strconv.Itoa(1+g.r.IntN(90)), g.pick(deCities...), "")
	stmtDate := end.AddDate(0, 0, g.r.IntN(3))
	explicit := g.chance(0.6)
	titleLine := L[0]
	if g.chance(0.6) {
		titleLine = pad(L[0], L[1]+" "+no, 30)
	}
	add(titleLine)
	if explicit {
		add(L[2] + ": " + g.fmtDate(stmtDate))
	}
	add(L[3]+": "+g.fmtDate(start)+" "+g.pick(L[12], "-")+" "+g.fmtDate(end), L[4]+": "+holder, L[5]+": "+groupIBAN(acc), "")
	bal := int64(g.r.IntN(800000)) - 100000
	add(pad(L[6], g.money(bal), 50))
	add(pad(pad(pad(L[8], L[9], 14), L[10], 26), L[11], 60))
	d := start
	for i := 0; i < 3+g.r.IntN(8); i++ {
		d = d.AddDate(0, 0, g.r.IntN(4))
		if d.After(end) {
			d = end
		}
		amt := int64(g.r.IntN(200000)) - 120000
		bal += amt
		what := g.pick("Lastschrift Telekom Deutschland GmbH", "Gutschrift Gehalt", "Kartenzahlung REWE", "Überweisung Miete", "Dauerauftrag Sparplan", "SEPA-Lastschrift Stadtwerke", "Card payment TESCO", "Virement reçu")
		ds := d.Format("02.01.")
		if g.lang != "de" {
			ds = d.Format("02/01")
		}
		add(pad(pad(pad(ds, ds, 14), what, 26), g.money(amt), 60))
	}
	add(pad(L[7], g.money(bal), 50))
	add("", bank+g.pick(" · ", " - ")+"BIC "+g.pick("COBADEFFXXX", "BYLADEM1001", "GENODEF1S06"))
	issue := end
	if explicit {
		issue = stmtDate
	}
	t := truth{Kind: document.BankStatement, Language: g.lang, Fields: document.Fields{
		DocumentNumber: no, IssueDate: iso(issue), Currency: "EUR", IssuerName: bank, IssuerIBAN: acc,
	}}
	if !strings.Contains(titleLine, no) {
		t.Fields.DocumentNumber = ""
	}
	return strings.Join(lines, "\n"), t
}

func (g *gen) payslip() (string, truth) {
	g.setup("de", "de", "de", "en")
	g.cur = "EUR"
	if g.lang == "en" {
		g.cur = "GBP"
		g.us = false
	}
	emp := g.company()
	who := g.person()
	month := g.date()
	monthEndDay := time.Date(month.Year(), month.Month()+1, 0, 0, 0, 0, 0, time.UTC)
	birth := time.Date(1960+g.r.IntN(40), time.Month(1+g.r.IntN(12)), 1+g.r.IntN(28), 0, 0, 0, 0, time.UTC)
	entry := time.Date(2000+g.r.IntN(15), time.Month(1+g.r.IntN(12)), 1, 0, 0, 0, 0, time.UTC)
	gross := int64(250000 + g.r.IntN(500000))
	ded := gross * int64(30+g.r.IntN(15)) / 100
	netPay := gross - ded
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	dated := g.chance(0.35)
	payDate := monthEndDay.AddDate(0, 0, -g.r.IntN(4))
	if g.lang == "en" {
		add(emp.name, emp.street+", "+emp.city, "")
		add(g.pick("PAYSLIP", "Payslip", "Pay Slip"), "")
		add(pad("Employee: "+who, "Employee No.: "+g.digits(5), 40))
		add(pad("Pay period: "+month.Format("January 2006"), "Tax code: 1257L", 40))
		if dated {
			add("Pay date: " + g.fmtDate(payDate))
		}
		add("NI number: QQ "+g.digits(6)+" C", "")
		add(pad("Basic salary", g.money(gross), 40), pad("Gross pay", g.money(gross), 40))
		add(pad("Income tax", g.money(-ded*6/10), 40), pad("National Insurance", g.money(-ded*4/10), 40))
		add(pad("Total deductions", g.money(-ded), 40), "", pad("Net pay", g.money(netPay), 40))
		add("Paid to account " + groupIBAN(g.iban("GB")))
	} else {
		if g.chance(0.5) {
			add(emp.name, emp.street, emp.city, "")
		} else {
			add(pad(emp.name, "Personal-Nr. "+g.digits(5), 50), "")
		}
		title := g.pick("Verdienstabrechnung", "Entgeltabrechnung", "Gehaltsabrechnung", "Abrechnung der Brutto/Netto-Bezüge", "Lohnabrechnung")
		per := g.pick(deMonths[month.Month()-1]+" "+strconv.Itoa(month.Year()), fmt.Sprintf("%02d/%d", int(month.Month()), month.Year()))
		add(title+" "+g.pick("für ", "")+per, "")
		add(who, g.pick(deStreet...)+" "+strconv.Itoa(1+g.r.IntN(90)), g.pick(deCities...), "")
		add(pad("Geburtsdatum: "+g.fmtDate(birth), "Eintritt: "+g.fmtDate(entry), 40))
		add(pad("Steuerklasse: "+strconv.Itoa(1+g.r.IntN(5)), "Konfession: "+g.pick("rk", "ev", "--"), 40))
		if dated {
			add("Datum: " + g.fmtDate(payDate))
		}
		add("")
		add(pad("Gehalt", g.money(gross), 40), pad("Gesamt-Brutto", g.money(gross), 40))
		add(pad("Lohnsteuer", g.money(ded*5/10), 40), pad("Solidaritätszuschlag", g.money(ded/20), 40))
		add(pad("Krankenversicherung", g.money(ded*2/10), 40), pad("Rentenversicherung", g.money(ded*25/100), 40))
		add(pad("Gesetzliche Abzüge", g.money(ded), 40), "", pad(g.pick("Auszahlungsbetrag", "Überweisungsbetrag", "Auszahlung"), g.money(netPay), 40))
		add("Überweisung an IBAN " + groupIBAN(g.iban("DE")))
	}
	issue := monthEndDay
	if dated {
		issue = payDate
	}
	t := truth{Kind: document.Payslip, Language: g.lang, Fields: document.Fields{
		IssueDate: iso(issue), Currency: g.cur, TotalAmount: formatCents(netPay), IssuerName: emp.name,
	}}
	return strings.Join(lines, "\n"), t
}

func (g *gen) taxNotice() (string, truth) {
	g.setup("de")
	city := strings.Fields(g.pick(deCities...))[1]
	fa := "Finanzamt " + city
	who := g.person()
	day := g.date()
	iban := g.iban("DE")
	pay := int64(10000 + g.r.IntN(400000))
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	add(fa, g.pick(deStreet...)+" "+strconv.Itoa(1+g.r.IntN(90)), g.pick(deCities...), "")
	add(fa+" · Postfach "+g.digits(4)+" · "+g.pick(deCities...), who, g.pick(deStreet...)+" "+strconv.Itoa(1+g.r.IntN(90)), g.pick(deCities...), "")
	add(pad("Steuernummer: "+g.digits(3)+"/"+g.digits(3)+"/"+g.digits(5), pad(g.pick("Datum", "Datum:", ""), g.fmtDate(day), 8), 46), "")
	year := day.Year() - 1
	add(g.pick("Bescheid für "+strconv.Itoa(year)+" über Einkommensteuer und Solidaritätszuschlag", "Einkommensteuerbescheid für "+strconv.Itoa(year), "Bescheid über Umsatzsteuer für "+strconv.Itoa(year)), "")
	add("Festsetzung", pad("Einkommensteuer", g.money(pay*3), 50), pad("abzüglich Steuerabzug vom Lohn", g.money(pay*2), 50))
	refund := g.chance(0.3)
	total := ""
	if refund {
		add(pad("Erstattung", g.money(pay), 50))
	} else {
		add(pad(g.pick("Nachzahlung", "Abschlusszahlung", "Verbleibende Beträge: zu zahlen"), g.money(pay), 50))
		add("Bitte zahlen Sie den Betrag bis zum " + g.fmtDate(day.AddDate(0, 1, 0)) + ".")
		total = formatCents(pay)
	}
	add("", "Bankverbindung: Bundesbank, IBAN "+groupIBAN(iban), "", "Rechtsbehelfsbelehrung", "Dieser Bescheid kann mit dem Einspruch angefochten werden.")
	t := truth{Kind: document.TaxNotice, Language: "de", Fields: document.Fields{
		IssueDate: iso(day), Currency: "EUR", TotalAmount: total, IssuerName: fa, IssuerIBAN: iban,
	}}
	if !refund {
		t.Fields.DueDate = iso(day.AddDate(0, 1, 0))
	}
	return strings.Join(lines, "\n"), t
}

func (g *gen) contract() (string, truth) {
	g.setup("de", "en")
	a := g.company()
	b := g.recipient()
	day := g.date()
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	if g.lang == "en" {
		add(g.pick("SERVICE AGREEMENT", "Consulting Agreement", "Lease Agreement", "Contract for Services"), "")
		add("between", "", a.name+", "+a.street+", "+a.city, "(hereinafter \"Provider\")", "", "and", "", b.name+", "+b.street+", "+b.city, "(hereinafter \"Client\")", "")
		add("1. Subject matter", "The Provider shall provide consulting services as described in Annex 1.", "", "2. Term and termination", "This agreement starts on "+g.fmtDate(day.AddDate(0, 1, 0))+" and may be terminated with three months' notice.", "", "3. Fees", "The Client pays a monthly fee of "+g.money(int64(100000+g.r.IntN(500000)))+" plus VAT.", "")
		add("4. Governing law", "This agreement is governed by the laws of England and Wales.", "", "London, "+g.fmtDate(day), "", "______________________          ______________________", "Provider                        Client")
	} else {
		add(g.pick("Dienstleistungsvertrag", "Mietvertrag", "Wartungsvertrag", "Beratungsvertrag", "Arbeitsvertrag"), "")
		add("zwischen", "", a.name, a.street, a.city, "- nachfolgend \"Auftragnehmer\" genannt -", "", "und", "", b.name, b.street, b.city, "- nachfolgend \"Auftraggeber\" genannt -", "")
		add("§ 1 Vertragsgegenstand", "Der Auftragnehmer erbringt für den Auftraggeber Leistungen gemäß Anlage 1.", "", "§ 2 Laufzeit und Kündigung", "Der Vertrag beginnt am "+g.fmtDate(day.AddDate(0, 1, 0))+" und kann mit einer Frist von drei Monaten gekündigt werden.", "", "§ 3 Vergütung", "Die monatliche Vergütung beträgt "+g.money(int64(100000+g.r.IntN(500000)))+" zzgl. gesetzlicher USt.", "")
		add("§ 4 Schlussbestimmungen", "Änderungen bedürfen der Schriftform. Gerichtsstand ist "+strings.Fields(a.city)[len(strings.Fields(a.city))-1]+".", "", strings.Fields(a.city)[len(strings.Fields(a.city))-1]+", den "+g.fmtDate(day), "", "______________________          ______________________", "Auftragnehmer                   Auftraggeber")
	}
	t := truth{Kind: document.Contract, Language: g.lang, Fields: document.Fields{IssueDate: iso(day), IssuerName: a.name, Currency: g.cur}}
	return strings.Join(lines, "\n"), t
}

func (g *gen) other() (string, truth) {
	g.setup("de", "de", "en")
	a := g.company()
	b := g.recipient()
	day := g.date()
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	add(a.name, a.street, a.city, "")
	add(a.name+" · "+a.street+" · "+a.city, b.name, b.street, b.city, "")
	if g.lang == "en" {
		add(pad("", "Date: "+g.fmtDate(day), 40), "")
		add(g.pick("Delivery note", "Quotation", "Payment reminder", "Order confirmation"), "")
		add("Dear Sir or Madam,", "", "please find enclosed the documents you requested. Do not hesitate to contact us.", "", "Kind regards", a.name)
	} else {
		add(pad("", g.pick("Datum: ", strings.Fields(a.city)[1]+", den ")+g.fmtDate(day), 40), "")
		add(g.pick("Lieferschein", "Angebot", "Zahlungserinnerung", "Auftragsbestätigung", "Ihre Anfrage vom "+g.fmtDate(day.AddDate(0, 0, -5))), "")
		add("Sehr geehrte Damen und Herren,", "", "anbei erhalten Sie die gewünschten Unterlagen. Für Rückfragen stehen wir Ihnen gerne zur Verfügung.", "", "Mit freundlichen Grüßen", a.name)
	}
	add("", a.name+" · "+g.pick("USt-IdNr. ", "VAT No. ")+a.vat)
	t := truth{Kind: document.Other, Language: g.lang, Fields: document.Fields{IssueDate: iso(day), IssuerName: a.name, IssuerVATID: a.vat, Currency: ""}}
	if a.vat == "" {
		t.Fields.IssuerVATID = ""
	}
	return strings.Join(lines, "\n"), t
}

// noise makes what OCR makes of a page: letters read as digits and back,
// lost and doubled spaces, columns squeezed, lines glued, junk lines.
func (g *gen) noise(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	conf := map[rune][]string{
		'0': {"O", "o"}, '1': {"l", "I", "|"}, '5': {"S"}, '8': {"B"}, '6': {"b"},
		'O': {"0"}, 'o': {"0"}, 'l': {"1", "I", "|"}, 'I': {"l", "1"}, 'S': {"5"}, 'B': {"8"},
		'm': {"rn"}, 'e': {"c"}, 'a': {"o"}, 'ü': {"u", "ii"}, 'ä': {"a"}, 'ö': {"o"}, 'ß': {"B"}, 'i': {"l"}, ',': {"."}, '.': {","},
	}
	squeeze := g.chance(0.5)
	for _, l := range lines {
		if l == "\f" || strings.Contains(l, "\f") {
			out = append(out, l)
			continue
		}
		var b strings.Builder
		rs := []rune(l)
		for i := 0; i < len(rs); i++ {
			r := rs[i]
			if c, ok := conf[r]; ok && g.chance(0.025) {
				// Keep the separators of numbers mostly intact.
				if (r == ',' || r == '.') && g.chance(0.7) {
					b.WriteRune(r)
					continue
				}
				b.WriteString(c[g.r.IntN(len(c))])
				continue
			}
			if r == ' ' && i > 0 && rs[i-1] != ' ' && i+1 < len(rs) && rs[i+1] != ' ' && g.chance(0.06) {
				continue
			}
			if r == ' ' && squeeze && i+1 < len(rs) && rs[i+1] == ' ' {
				// Columns lose their spacing: runs of spaces shrink to one or two.
				j := i
				for j < len(rs) && rs[j] == ' ' {
					j++
				}
				b.WriteString(strings.Repeat(" ", 1+g.r.IntN(2)))
				i = j - 1
				continue
			}
			b.WriteRune(r)
			if g.chance(0.004) {
				b.WriteString(g.pick("'", ".", ",", "~", "`"))
			}
		}
		s := b.String()
		if len(out) > 0 && strings.TrimSpace(s) != "" && strings.TrimSpace(out[len(out)-1]) != "" && g.chance(0.05) {
			out[len(out)-1] += " " + strings.TrimSpace(s)
			continue
		}
		out = append(out, s)
		if g.chance(0.03) {
			out = append(out, g.pick("~ ' , . ¦", "|| _ -", "..", "ı", "—  —", "' '"))
		}
	}
	return strings.Join(out, "\n")
}
