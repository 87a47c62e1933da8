package docfields

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"acctapi/document"
)

// The generator of the evaluation set: documents of every kind in many
// layouts, with their truth, and an OCR-noise copy of each. It is
// deterministic for a seed, so the stored set can be rebuilt
// (go test ./docfields -run TestGenerateEval -regen).

type truth struct {
	Kind     string          `json:"kind"`
	Language string          `json:"language"`
	Variant  string          `json:"variant"` // "clean", "ocr" or "hand"
	Fields   document.Fields `json:"fields"`
}

type genDoc struct {
	name  string
	text  string
	truth truth
}

type gen struct {
	r    *rand.Rand
	lang string // de, en, fr
	us   bool   // American: dollars, month-first dates
	cur  string
	// how this document writes dates and amounts
	dateStyle, amountStyle int
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) chance(p float64) bool    { return g.r.Float64() < p }
func (g *gen) digits(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(byte('0' + g.r.IntN(10)))
	}
	return b.String()
}

// generate makes n documents (and their OCR copies) from seed.
func generate(seed uint64, n int) []genDoc {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []genDoc
	for i := 0; i < n; i++ {
		g := &gen{r: r}
		x := r.Float64()
		var text string
		var t truth
		switch {
		case x < 0.40:
			text, t = g.invoice(false)
		case x < 0.50:
			text, t = g.invoice(true)
		case x < 0.62:
			text, t = g.receipt()
		case x < 0.72:
			text, t = g.statement()
		case x < 0.80:
			text, t = g.payslip()
		case x < 0.86:
			text, t = g.taxNotice()
		case x < 0.92:
			text, t = g.contract()
		default:
			text, t = g.other()
		}
		if !strings.ContainsAny(text, "€$£") && !strings.Contains(text, t.Fields.Currency) {
			// The page does not say its currency.
			t.Fields.Currency = ""
		}
		t.Variant = "clean"
		name := fmt.Sprintf("g%03d-%s-%s", i, t.Kind, t.Language)
		out = append(out, genDoc{name: name, text: text, truth: t})
		nt := t
		nt.Variant = "ocr"
		out = append(out, genDoc{name: name + "-ocr", text: g.noise(text), truth: nt})
	}
	return out
}

// ---- values ----

var (
	deFirst  = []string{"Max", "Anna", "Lukas", "Sophie", "Jonas", "Marie", "Felix", "Lea", "Paul", "Emma", "Karl", "Ines"}
	deLast   = []string{"Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Hoffmann", "Schäfer", "Koch", "Richter", "Klein", "Wolf", "Schröder", "Neumann"}
	enFirst  = []string{"John", "Emily", "James", "Olivia", "Oliver", "Sarah", "David", "Laura", "Michael", "Grace"}
	enLast   = []string{"Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Evans", "Thomas", "Walker", "Wright"}
	frFirst  = []string{"Jean", "Marie", "Pierre", "Camille", "Louis", "Chloé", "Hugo", "Léa", "Thomas", "Manon"}
	frLast   = []string{"Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau"}
	deCities = []string{"10115 Berlin", "80331 München", "20095 Hamburg", "50667 Köln", "60311 Frankfurt am Main", "70173 Stuttgart", "04109 Leipzig", "01067 Dresden", "90402 Nürnberg", "28195 Bremen", "30159 Hannover", "44135 Dortmund"}
	atCities = []string{"1010 Wien", "8010 Graz", "5020 Salzburg", "4020 Linz"}
	frCities = []string{"75001 Paris", "69002 Lyon", "13001 Marseille", "31000 Toulouse", "33000 Bordeaux", "67000 Strasbourg"}
	ukCities = []string{"London EC1A 1BB", "Manchester M1 1AE", "Bristol BS1 4DJ", "Leeds LS1 4AP"}
	usCities = []string{"New York, NY 10001", "Austin, TX 78701", "Chicago, IL 60601", "Seattle, WA 98101"}
	deStreet = []string{"Hauptstraße", "Bahnhofstr.", "Gartenweg", "Lindenallee", "Schillerstraße", "Goethestr.", "Am Markt", "Industriestraße", "Mühlenweg", "Kirchplatz"}
	enStreet = []string{"High Street", "Station Road", "Church Lane", "Main Street", "Park Avenue", "Mill Road"}
	frStreet = []string{"rue de la Paix", "avenue Victor Hugo", "boulevard Voltaire", "rue du Commerce", "place de la République"}
	deTrade  = []string{"Haustechnik", "Elektro", "Software", "Bau", "Consulting", "Druckerei", "Medien", "Logistik", "Gartenbau", "Malerbetrieb", "Schreinerei", "IT-Service", "Steuerberatung", "Immobilien", "Reinigung"}
	deBrand  = []string{"Nordlicht", "Grünwerk", "Sonnenschein", "Bergmann", "Rheinblick", "Alpenland", "Blauwal", "Eichenhof", "Morgenrot", "Falkenstein", "Kaiser", "Lindner"}
	enBrand  = []string{"Brightside", "Northwind", "Redwood", "Bluebell", "Oakridge", "Silverline", "Greenfield", "Harbour", "Summit", "Kestrel"}
	enTrade  = []string{"Consulting", "Supplies", "Digital", "Logistics", "Print", "Solutions", "Services", "Design", "Engineering"}
	frBrand  = []string{"Dupont", "Lumière", "Belle Vue", "Horizon", "Soleil", "Martin", "Rivage", "Atelier Bleu", "Azur"}
	frTrade  = []string{"Rénovation", "Conseil", "Informatique", "Transports", "Boulangerie", "Imprimerie", "Services"}
)

func (g *gen) person() string {
	switch g.lang {
	case "en":
		return g.pick(enFirst...) + " " + g.pick(enLast...)
	case "fr":
		return g.pick(frFirst...) + " " + g.pick(frLast...)
	}
	return g.pick(deFirst...) + " " + g.pick(deLast...)
}

type party struct {
	name, street, city, country string
	vat, iban                   string
}

// company makes a firm of the document's country.
func (g *gen) company() party {
	p := party{}
	switch g.lang {
	case "en":
		if g.us {
			p.name = g.pick(enBrand...) + " " + g.pick(enTrade...) + " " + g.pick("Inc.", "LLC", "Corp.")
			p.street = g.digits(3) + " " + g.pick(enStreet...)
			p.city = g.pick(usCities...)
			p.country = "US"
			return p
		}
		p.name = g.pick(enBrand...) + " " + g.pick(enTrade...) + " " + g.pick("Ltd", "Ltd.", "Limited", "LLP", "plc")
		p.street = strconv.Itoa(1+g.r.IntN(200)) + " " + g.pick(enStreet...)
		p.city = g.pick(ukCities...)
		p.country = "GB"
		p.vat = "GB" + g.digits(9)
		p.iban = g.iban("GB")
	case "fr":
		p.name = g.pick(frBrand...) + " " + g.pick(frTrade...) + " " + g.pick("SARL", "SAS", "SA", "EURL")
		if g.chance(0.2) {
			p.name = g.pick(frTrade...) + " " + g.pick(frLast...)
		}
		p.street = strconv.Itoa(1+g.r.IntN(120)) + " " + g.pick(frStreet...)
		p.city = g.pick(frCities...)
		p.country = "FR"
		p.vat = g.frVAT()
		p.iban = g.iban("FR")
	default:
		if g.chance(0.15) {
			p.country = "AT"
			p.city = g.pick(atCities...)
			p.vat = g.atVAT()
			p.iban = g.iban("AT")
		} else {
			p.country = "DE"
			p.city = g.pick(deCities...)
			p.vat = g.deVAT()
			p.iban = g.iban("DE")
		}
		switch g.r.IntN(5) {
		case 0:
			p.name = g.pick(deTrade...) + " " + g.pick(deLast...) + " " + g.pick("GmbH", "e.K.", "GmbH & Co. KG")
		case 1:
			p.name = g.pick(deLast...) + " & " + g.pick(deLast...) + " " + g.pick("GbR", "PartG mbB", "OHG")
		case 2:
			p.name = g.pick(deBrand...) + " " + g.pick(deTrade...) + " " + g.pick("GmbH", "AG", "UG (haftungsbeschränkt)", "KG")
		case 3:
			p.name = g.pick("Malermeister", "Elektromeister", "Tischlerei", "Dachdeckerei", "Sanitär") + " " + g.person()
		default:
			p.name = g.pick(deBrand...) + " " + g.pick("GmbH", "AG", "SE")
		}
		p.street = g.pick(deStreet...) + " " + strconv.Itoa(1+g.r.IntN(150))
	}
	return p
}

// recipient is a person or a firm in the address window; a firm may
// carry a VAT id of its own (a trap).
func (g *gen) recipient() party {
	if g.chance(0.5) {
		p := g.company()
		return p
	}
	p := party{name: g.person()}
	switch g.lang {
	case "en":
		if g.us {
			p.street = g.digits(3) + " " + g.pick(enStreet...)
			p.city = g.pick(usCities...)
		} else {
			p.street = strconv.Itoa(1+g.r.IntN(200)) + " " + g.pick(enStreet...)
			p.city = g.pick(ukCities...)
		}
	case "fr":
		p.street = strconv.Itoa(1+g.r.IntN(120)) + " " + g.pick(frStreet...)
		p.city = g.pick(frCities...)
	default:
		p.street = g.pick(deStreet...) + " " + strconv.Itoa(1+g.r.IntN(150))
		p.city = g.pick(deCities...)
	}
	return p
}

func (g *gen) deVAT() string {
	b := g.digits(8)
	if b[0] == '0' {
		b = "1" + b[1:]
	}
	p := 10
	for i := 0; i < 8; i++ {
		s := (int(b[i]-'0') + p) % 10
		if s == 0 {
			s = 10
		}
		p = (2 * s) % 11
	}
	c := 11 - p
	if c == 10 {
		c = 0
	}
	return "DE" + b + strconv.Itoa(c)
}

func (g *gen) atVAT() string {
	for {
		b := g.digits(7)
		for c := 0; c < 10; c++ {
			s := "U" + b + strconv.Itoa(c)
			if vatChecks("AT", s) {
				return "AT" + s
			}
		}
	}
}

func (g *gen) frVAT() string {
	siren := g.digits(9)
	if siren[0] == '0' {
		siren = "3" + siren[1:]
	}
	n, _ := strconv.ParseInt(siren, 10, 64)
	key := (12 + 3*(n%97)) % 97
	return fmt.Sprintf("FR%02d%s", key, siren)
}

func (g *gen) iban(cc string) string {
	var bban string
	switch cc {
	case "DE":
		bban = g.digits(18)
	case "AT":
		bban = g.digits(16)
	case "FR":
		bban = g.digits(23)
	case "GB":
		bban = g.pick("NWBK", "BARC", "LOYD", "HBUK") + g.digits(14)
	}
	for c := 2; c < 99; c++ {
		s := fmt.Sprintf("%s%02d%s", cc, c, bban)
		if ibanValid(s) {
			return s
		}
	}
	return ""
}

func groupIBAN(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(len(s), i+4)])
	}
	return b.String()
}

func (g *gen) spacedVAT(v string) string {
	if g.chance(0.8) || !strings.HasPrefix(v, "DE") {
		return v
	}
	return "DE " + v[2:5] + " " + v[5:8] + " " + v[8:]
}

func (g *gen) date() time.Time {
	return time.Date(2015+g.r.IntN(11), time.Month(1+g.r.IntN(12)), 1+g.r.IntN(28), 0, 0, 0, 0, time.UTC)
}

var (
	deMonths  = []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
	deMonAbbr = []string{"Jan.", "Feb.", "Mrz.", "Apr.", "Mai", "Jun.", "Jul.", "Aug.", "Sep.", "Okt.", "Nov.", "Dez."}
	frMonths  = []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
)

func ordinal(d int) string {
	switch {
	case d == 1 || d == 21 || d == 31:
		return strconv.Itoa(d) + "st"
	case d == 2 || d == 22:
		return strconv.Itoa(d) + "nd"
	case d == 3 || d == 23:
		return strconv.Itoa(d) + "rd"
	}
	return strconv.Itoa(d) + "th"
}

// fmtDate writes a date in this document's style.
func (g *gen) fmtDate(t time.Time) string {
	d, m, y := t.Day(), int(t.Month()), t.Year()
	switch g.lang {
	case "en":
		if g.us {
			switch g.dateStyle % 3 {
			case 0:
				return fmt.Sprintf("%02d/%02d/%d", m, d, y)
			case 1:
				return fmt.Sprintf("%s %d, %d", t.Month(), d, y)
			}
			return fmt.Sprintf("%s %d, %d", t.Month().String()[:3], d, y)
		}
		switch g.dateStyle % 6 {
		case 0:
			return fmt.Sprintf("%d %s %d", d, t.Month(), y)
		case 1:
			return fmt.Sprintf("%02d/%02d/%d", d, m, y)
		case 2:
			return fmt.Sprintf("%d-%02d-%02d", y, m, d)
		case 3:
			return fmt.Sprintf("%02d-%s-%d", d, t.Month().String()[:3], y)
		case 4:
			return fmt.Sprintf("%s %s %d", ordinal(d), t.Month(), y)
		}
		return fmt.Sprintf("%s %d, %d", t.Month(), d, y)
	case "fr":
		switch g.dateStyle % 3 {
		case 0:
			return fmt.Sprintf("%02d/%02d/%d", d, m, y)
		case 1:
			return fmt.Sprintf("%d %s %d", d, frMonths[m-1], y)
		}
		return fmt.Sprintf("%02d.%02d.%d", d, m, y)
	}
	switch g.dateStyle % 7 {
	case 0, 1:
		return fmt.Sprintf("%02d.%02d.%d", d, m, y)
	case 2:
		return fmt.Sprintf("%d.%d.%02d", d, m, y%100)
	case 3:
		return fmt.Sprintf("%d. %s %d", d, deMonths[m-1], y)
	case 4:
		return fmt.Sprintf("%02d. %s %d", d, deMonAbbr[m-1], y)
	case 5:
		return fmt.Sprintf("%d-%02d-%02d", y, m, d)
	}
	return fmt.Sprintf("%02d.%02d.%02d", d, m, y%100)
}

func iso(t time.Time) string { return t.Format("2006-01-02") }

// money writes cents in this document's style.
func (g *gen) money(c int64) string {
	neg := c < 0
	if neg {
		c = -c
	}
	ip, fp := c/100, c%100
	group := func(sep string) string {
		s := strconv.FormatInt(ip, 10)
		var parts []string
		for len(s) > 3 {
			parts = append([]string{s[len(s)-3:]}, parts...)
			s = s[:len(s)-3]
		}
		parts = append([]string{s}, parts...)
		return strings.Join(parts, sep)
	}
	var num string
	sign := ""
	if neg {
		sign = "-"
	}
	comma := g.lang != "en"
	switch g.amountStyle % 4 {
	case 0:
		if comma {
			num = group(".") + "," + fmt.Sprintf("%02d", fp)
			if g.lang == "fr" {
				num = group(" ") + "," + fmt.Sprintf("%02d", fp)
			}
		} else {
			num = group(",") + "." + fmt.Sprintf("%02d", fp)
		}
	default:
		sep := "."
		if comma {
			sep = ","
		}
		num = strconv.FormatInt(ip, 10) + sep + fmt.Sprintf("%02d", fp)
	}
	sym := map[string]string{"EUR": "€", "GBP": "£", "USD": "$"}[g.cur]
	switch g.amountStyle % 3 {
	case 0:
		if g.lang == "en" {
			return sign + sym + num
		}
		return sign + num + " " + sym
	case 1:
		return sign + num + " " + g.cur
	}
	return sign + num
}

func (g *gen) setup(langs ...string) {
	g.lang = langs[g.r.IntN(len(langs))]
	g.us = g.lang == "en" && g.chance(0.3)
	g.cur = "EUR"
	if g.lang == "en" {
		g.cur = "GBP"
		if g.us {
			g.cur = "USD"
		} else if g.chance(0.4) {
			g.cur = "EUR"
		}
	}
	g.dateStyle = g.r.IntN(42)
	g.amountStyle = g.r.IntN(12)
}

func (g *gen) docNo(t time.Time) string {
	y := strconv.Itoa(t.Year())
	switch g.r.IntN(8) {
	case 0:
		return "RE-" + y + "-" + g.digits(4)
	case 1:
		return y + "-" + g.digits(4)
	case 2:
		return "INV-" + g.digits(5)
	case 3:
		return "F" + y + "/" + g.digits(4)
	case 4:
		return g.digits(6)
	case 5:
		return "R" + y[2:] + g.digits(6)
	case 6:
		return g.pick("AB", "RG", "SR") + g.digits(3) + "/" + y[2:]
	}
	return g.digits(4) + "-" + g.digits(2)
}

// pad writes left, then right at column col (or after two spaces).
func pad(left, right string, col int) string {
	n := col - len([]rune(left))
	if n < 2 {
		n = 2
	}
	return left + strings.Repeat(" ", n) + right
}

type kv struct{ k, v string }

// ---- invoices and credit notes ----

type item struct {
	desc        string
	qty         int
	unit, total int64
}

func (g *gen) items() []item {
	descs := map[string][]string{
		"de": {"Beratung", "Montage Heizkörper", "Material", "Arbeitszeit Geselle", "Software-Lizenz", "Wartung", "Anfahrt", "Druck Flyer A5", "Webdesign", "Reinigung Büro", "Kabel NYM 3x1,5", "Fliesen 30x60"},
		"en": {"Consulting", "Installation", "Materials", "Labour", "Software licence", "Maintenance", "Travel", "Printing", "Web design", "Cleaning"},
		"fr": {"Conseil", "Installation", "Matériel", "Main d'œuvre", "Licence logiciel", "Maintenance", "Déplacement", "Impression"},
	}[g.lang]
	n := 1 + g.r.IntN(5)
	var out []item
	for i := 0; i < n; i++ {
		it := item{desc: g.pick(descs...), qty: 1 + g.r.IntN(5), unit: int64(500 + g.r.IntN(60000))}
		it.total = int64(it.qty) * it.unit
		out = append(out, it)
	}
	return out
}

func (g *gen) taxRate(country string) int64 {
	switch country {
	case "AT", "FR", "GB":
		return 20
	case "US":
		return 8
	}
	if g.chance(0.15) {
		return 7
	}
	return 19
}

func (g *gen) invoice(credit bool) (string, truth) {
	g.setup("de", "de", "de", "en", "en", "fr")
	iss := g.company()
	rec := g.recipient()
	issued := g.date()
	no := g.docNo(issued)
	custNo := g.pick("K", "KD", "") + g.digits(5)
	orderNo := g.pick("B", "PO-", "") + g.digits(6)
	delivery := issued.AddDate(0, 0, -g.r.IntN(10))
	ordered := issued.AddDate(0, 0, -3-g.r.IntN(30))
	due := issued.AddDate(0, 0, g.pick2(14, 30, 10, 7))
	hasDue := g.chance(0.6)
	items := g.items()
	var net int64
	for _, it := range items {
		net += it.total
	}
	rate := g.taxRate(iss.country)
	tax := (net*rate + 50) / 100
	total := net + tax
	sign := int64(1)
	if credit && g.chance(0.4) {
		sign = -1
	}
	L := invoiceLabels(g.lang, g)
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	col := 44 + g.r.IntN(14)
	showVAT := iss.vat != "" && g.chance(0.9)
	recVAT := rec.vat != "" && g.chance(0.35)
	title := L.title
	if credit {
		title = L.credit
	}

	// Letterhead.
	layout := g.r.IntN(5)
	letter := []string{iss.name, iss.street, iss.city}
	if g.chance(0.5) {
		letter = append(letter, g.pick("Tel.", "Telefon", "Phone", "Tél.")+" "+g.pick("030", "089", "+49 40", "0221")+" "+g.digits(7))
	}
	switch {
	case layout == 0 || layout == 3:
		add(letter...)
		add("")
	case layout == 1:
		for _, l := range letter {
			add(strings.Repeat(" ", col) + l)
		}
		add("")
	case layout == 2:
		add(strings.ToUpper(iss.name))
		add("")
	}
	if g.chance(0.7) && !g.us {
		add(iss.name + g.pick(" · ", " - ", " | ", ", ") + iss.street + g.pick(" · ", " - ", " | ", ", ") + iss.city)
	}
	recLines := []string{}
	if g.chance(0.3) {
		recLines = append(recLines, L.billTo)
	}
	if !strings.Contains(rec.name, " ") || g.chance(0.5) {
		if g.lang == "de" && g.chance(0.5) && rec.vat == "" {
			recLines = append(recLines, g.pick("Herrn", "Frau"))
		}
	}
	recLines = append(recLines, rec.name, rec.street, rec.city)
	if recVAT {
		recLines = append(recLines, L.yourVAT+" "+rec.vat)
	}
	meta := []kv{{L.no, no}, {L.date, g.fmtDate(issued)}}
	if g.chance(0.6) {
		meta = append(meta, kv{L.cust, custNo})
	}
	if g.chance(0.4) {
		meta = append(meta, kv{L.order, orderNo})
	}
	if g.chance(0.5) {
		meta = append(meta, kv{L.delivery, g.fmtDate(delivery)})
	}
	if g.chance(0.3) {
		meta = append(meta, kv{L.orderDate, g.fmtDate(ordered)})
	}
	if hasDue && g.chance(0.4) {
		meta = append(meta, kv{L.due, g.fmtDate(due)})
		hasDue = false
		defer func() {}()
	}
	// Truth for due: set below.
	dueShown := false
	for _, m := range meta {
		if m.k == L.due {
			dueShown = true
		}
	}
	g.r.Shuffle(len(meta)-1, func(i, j int) { meta[i+1], meta[j+1] = meta[j+1], meta[i+1] })
	if g.chance(0.3) {
		g.r.Shuffle(len(meta), func(i, j int) { meta[i], meta[j] = meta[j], meta[i] })
	}
	sep := g.pick(": ", ": ", " ", ":  ")
	metaStyle := g.r.IntN(5)
	switch metaStyle {
	case 0: // beside the address window
		for i := 0; i < max(len(recLines), len(meta)); i++ {
			left, right := "", ""
			if i < len(recLines) {
				left = recLines[i]
			}
			if i < len(meta) {
				right = meta[i].k + sep + meta[i].v
			}
			if right == "" {
				add(left)
			} else {
				add(pad(left, right, col))
			}
		}
		add("")
		add(title)
	case 1: // below, label column
		add(recLines...)
		add("")
		add(title)
		add("")
		for _, m := range meta {
			add(pad(m.k+":", m.v, 24))
		}
	case 2: // a table: labels over values
		add(recLines...)
		add("")
		add(title)
		add("")
		var h, v []string
		for _, m := range meta {
			w := max(len([]rune(m.k)), len([]rune(m.v))) + 3
			h = append(h, m.k+strings.Repeat(" ", w-len([]rune(m.k))))
			v = append(v, m.v+strings.Repeat(" ", w-len([]rune(m.v))))
		}
		add(strings.TrimRight(strings.Join(h, ""), " "), strings.TrimRight(strings.Join(v, ""), " "))
	case 3: // title with number and date
		add(recLines...)
		add("")
		add(fmt.Sprintf("%s %s %s %s %s", title, L.nrWord, no, L.vom, g.fmtDate(issued)))
		for _, m := range meta[2:] {
			add(m.k + sep + m.v)
		}
	default: // stacked: label above value, right side
		add(recLines...)
		add("")
		for _, m := range meta {
			add(strings.Repeat(" ", col)+m.k, strings.Repeat(" ", col)+m.v)
		}
		add("", title)
	}
	add("")
	if g.chance(0.5) {
		add(g.pick(L.intro...))
		add("")
	}
	// Items.
	add(pad(pad(pad(L.pos+"  "+L.desc, L.qty, 34), L.unit, 44), L.amount, 60))
	for i, it := range items {
		add(pad(pad(pad(fmt.Sprintf("%-3d  %s", i+1, it.desc), strconv.Itoa(it.qty), 34), g.money(sign*it.unit), 44), g.money(sign*it.total), 60))
	}
	add("")
	// Totals.
	prepaid := int64(0)
	if !credit && g.chance(0.1) {
		prepaid = total / 3
	}
	taxLabel := strings.ReplaceAll(L.tax, "{r}", strconv.FormatInt(rate, 10))
	tc := 36 + g.r.IntN(10)
	switch g.r.IntN(4) {
	case 0, 1:
		add(pad(strings.Repeat(" ", tc-20)+L.net, g.money(sign*net), tc+16))
		add(pad(strings.Repeat(" ", tc-20)+taxLabel, g.money(sign*tax), tc+16))
		add(pad(strings.Repeat(" ", tc-20)+L.total, g.money(sign*total), tc+16))
	case 2:
		add(pad(pad(L.net, taxLabel, 18), L.total, 38))
		add(pad(pad(g.money(sign*net), g.money(sign*tax), 18), g.money(sign*total), 38))
	default:
		add(L.net + " " + g.money(sign*net))
		add(taxLabel + " " + g.money(sign*tax))
		add(L.total + ": " + g.money(sign*total))
	}
	if prepaid > 0 {
		add(pad(L.prepaid, g.money(prepaid), 40))
		add(pad(L.payNow, g.money(total-prepaid), 40))
	}
	add("")
	trueDue := ""
	if dueShown {
		trueDue = iso(due)
	}
	if hasDue {
		add(strings.ReplaceAll(g.pick(L.dueSentence...), "{d}", g.fmtDate(due)))
		trueDue = iso(due)
	} else if !dueShown {
		add(g.pick(L.terms...))
	}
	if credit {
		add(strings.ReplaceAll(strings.ReplaceAll(L.creditRef, "{n}", g.docNo(ordered)), "{d}", g.fmtDate(ordered)))
	}
	debit := !credit && g.chance(0.12) && rec.iban != ""
	if debit {
		add(strings.ReplaceAll(L.debit, "{i}", groupIBAN(rec.iban)))
	}
	add("", "")
	// Footer.
	taxNo := fmt.Sprintf("%s/%s/%s", g.digits(2), g.digits(3), g.digits(5))
	fparts := []string{iss.name, iss.street, iss.city}
	if g.chance(0.5) && g.lang == "de" {
		fparts = append(fparts, "Geschäftsführer: "+g.person(), "Amtsgericht "+strings.Fields(iss.city)[1]+" HRB "+g.digits(5))
	}
	var ids []string
	if showVAT {
		ids = append(ids, L.vat+" "+g.spacedVAT(iss.vat))
	}
	if g.lang == "de" && g.chance(0.6) {
		ids = append(ids, L.taxNo+" "+taxNo)
	}
	bank := ""
	showIBAN := iss.iban != "" && g.chance(0.85)
	if showIBAN {
		bank = g.pick("Commerzbank", "Sparkasse KölnBonn", "Deutsche Bank", "Volksbank Mittelhessen", "Barclays", "BNP Paribas", "GLS Bank") + g.pick(" · ", " | ", "  ") + "IBAN " + g.pickIBAN(iss.iban) + g.pick(" · BIC COBADEFFXXX", "  BIC: GENODEF1GIL", "")
	}
	switch g.r.IntN(3) {
	case 0:
		add(strings.Join(fparts, " · "))
		if len(ids) > 0 {
			add(strings.Join(ids, " · "))
		}
		if bank != "" {
			add(bank)
		}
	case 1:
		left := append([]string{}, fparts...)
		right := append(append([]string{}, ids...), strings.Split(bank, " · ")...)
		for i := 0; i < max(len(left), len(right)); i++ {
			l, r := "", ""
			if i < len(left) {
				l = left[i]
			}
			if i < len(right) {
				r = right[i]
			}
			add(pad(l, r, 40))
		}
	default:
		add(fparts...)
		add(ids...)
		if bank != "" {
			add(strings.Split(bank, " · ")...)
		}
	}
	text := strings.Join(lines, "\n")
	if g.chance(0.15) {
		// Two pages: the footer repeats and the page is numbered.
		cut := len(lines) / 2
		text = strings.Join(lines[:cut], "\n") + "\n" + g.pick("Seite 1 von 2", "Page 1 of 2", "Page 1/2") + "\n\f" + strings.Join(lines[cut:], "\n") + "\n" + g.pick("Seite 2 von 2", "Page 2 of 2", "Page 2/2")
	}
	kind := document.Invoice
	if credit {
		kind = document.CreditNote
	}
	t := truth{Kind: kind, Language: g.lang, Fields: document.Fields{
		DocumentNumber: no, IssueDate: iso(issued), DueDate: trueDue, Currency: g.cur,
		NetAmount: formatCents(sign * net), TaxAmount: formatCents(sign * tax), TotalAmount: formatCents(sign * total),
		IssuerName: iss.name,
	}}
	if showVAT {
		t.Fields.IssuerVATID = iss.vat
	}
	if showIBAN {
		t.Fields.IssuerIBAN = iss.iban
	}
	return text, t
}

func (g *gen) pickIBAN(s string) string {
	if g.chance(0.7) {
		return groupIBAN(s)
	}
	return s
}

func (g *gen) pick2(xs ...int) int { return xs[g.r.IntN(len(xs))] }

type invLabels struct {
	title, credit, no, date, cust, order, delivery, orderDate, due, nrWord, vom string
	net, tax, total, prepaid, payNow, vat, taxNo, yourVAT, billTo               string
	pos, desc, qty, unit, amount, creditRef, debit                              string
	intro, dueSentence, terms                                                   []string
}

func invoiceLabels(lang string, g *gen) invLabels {
	switch lang {
	case "en":
		l := invLabels{
			title: g.pick("INVOICE", "Invoice", "Tax Invoice"), credit: g.pick("CREDIT NOTE", "Credit Note", "Credit note"),
			no: g.pick("Invoice No.", "Invoice number", "Invoice #", "Inv. No."), date: g.pick("Invoice date", "Date", "Date of issue", "Invoice Date"),
			cust: g.pick("Customer No.", "Customer ID", "Account number"), order: g.pick("Order No.", "PO number", "Your reference"),
			delivery: g.pick("Delivery date", "Date of supply", "Tax point"), orderDate: g.pick("Order date", "Date of order"),
			due: g.pick("Due date", "Payment due", "Pay by"), nrWord: "No.", vom: "dated",
			net: g.pick("Subtotal", "Net amount", "Total excl. VAT"), tax: g.pick("VAT {r}%", "VAT ({r}%)", "Tax {r}%"),
			total:   g.pick("Total", "Amount due", "Total due", "Grand total", "Invoice total", "Total (incl. VAT)"),
			prepaid: "Less deposit paid", payNow: "Balance due", vat: g.pick("VAT No.", "VAT Reg. No.", "VAT ID:"), taxNo: "Company No.",
			yourVAT: "Customer VAT ID:", billTo: g.pick("Bill to:", "Invoice to:", "Billed to"),
			pos: "#", desc: "Description", qty: "Qty", unit: "Unit price", amount: "Amount",
			creditRef: "This credit note refers to invoice {n} of {d}.", debit: "The amount will be debited from your account {i}.",
			intro:       []string{"Thank you for your business.", "Please find below our invoice for services rendered."},
			dueSentence: []string{"Please pay by {d}.", "Payment is due by {d}.", "Payable by {d} to the account below."},
			terms:       []string{"Payment terms: 30 days net.", "Please pay within 14 days."},
		}
		if g.us {
			l.tax = "Sales Tax {r}%"
			l.vat = "EIN"
		}
		return l
	case "fr":
		return invLabels{
			title: g.pick("FACTURE", "Facture"), credit: g.pick("AVOIR", "Avoir", "Facture d'avoir"),
			no: g.pick("N° de facture", "Facture n°", "Numéro de facture"), date: g.pick("Date de facture", "Date", "Date d'émission"),
			cust: g.pick("N° client", "Code client"), order: g.pick("N° de commande", "Votre référence"),
			delivery: g.pick("Date de livraison", "Date de prestation"), orderDate: "Date de commande",
			due: g.pick("Date d'échéance", "Échéance", "À payer avant le"), nrWord: "n°", vom: "du",
			net: g.pick("Total HT", "Montant HT", "Sous-total HT"), tax: g.pick("TVA {r}%", "TVA ({r} %)", "Montant TVA {r}%"),
			total:   g.pick("Total TTC", "Net à payer", "Montant TTC", "Total TTC à payer"),
			prepaid: "Acompte versé", payNow: "Reste à payer", vat: g.pick("N° TVA intracommunautaire :", "TVA intracom.", "N° TVA"),
			taxNo: "SIRET", yourVAT: "N° TVA client :", billTo: g.pick("Facturé à :", "Adresse de facturation", "Client :"),
			pos: "N°", desc: "Désignation", qty: "Qté", unit: "Prix unitaire", amount: "Montant",
			creditRef: "Avoir sur facture {n} du {d}.", debit: "Le montant sera prélevé sur votre compte {i}.",
			intro:       []string{"Nous vous remercions de votre confiance.", "Veuillez trouver ci-dessous notre facture."},
			dueSentence: []string{"À régler avant le {d}.", "Paiement à effectuer avant le {d}.", "Date limite de paiement : {d}"},
			terms:       []string{"Paiement à 30 jours.", "Pas d'escompte pour paiement anticipé."},
		}
	}
	return invLabels{
		title: g.pick("Rechnung", "RECHNUNG", "Rechnung"), credit: g.pick("Gutschrift", "GUTSCHRIFT", "Rechnungskorrektur"),
		no:   g.pick("Rechnungsnummer", "Rechnungs-Nr.", "Rechnung Nr.", "Re.-Nr.", "Belegnummer", "Rechnungsnr."),
		date: g.pick("Rechnungsdatum", "Datum", "Belegdatum", "Rechnungsdatum"), cust: g.pick("Kundennummer", "Kunden-Nr.", "Kd.-Nr."),
		order: g.pick("Bestellnummer", "Auftragsnummer", "Auftrags-Nr."), delivery: g.pick("Lieferdatum", "Leistungsdatum", "Liefertermin"),
		orderDate: g.pick("Bestelldatum", "Ihre Bestellung vom", "Auftragsdatum"), due: g.pick("Fällig am", "Zahlbar bis", "Fälligkeitsdatum"),
		nrWord: "Nr.", vom: "vom",
		net: g.pick("Nettobetrag", "Zwischensumme", "Summe netto", "Netto"), tax: g.pick("zzgl. {r}% MwSt.", "MwSt. {r}%", "USt. {r} %", "{r}% Umsatzsteuer"),
		total:   g.pick("Gesamtbetrag", "Rechnungsbetrag", "Summe brutto", "Zu zahlen", "Endbetrag", "Gesamtsumme"),
		prepaid: "abzgl. Anzahlung", payNow: "Noch zu zahlen", vat: g.pick("USt-IdNr.", "USt-ID:", "Umsatzsteuer-ID:", "UID"),
		taxNo: g.pick("Steuernummer:", "St.-Nr."), yourVAT: g.pick("Ihre USt-IdNr.:", "USt-IdNr. des Kunden:"),
		billTo: g.pick("Rechnungsempfänger:", "Rechnungsadresse", "An:"),
		pos:    "Pos.", desc: g.pick("Beschreibung", "Bezeichnung", "Artikel"), qty: g.pick("Menge", "Anzahl"), unit: g.pick("Einzelpreis", "E-Preis"), amount: g.pick("Gesamt", "Betrag", "Gesamtpreis"),
		creditRef: "Gutschrift zu Rechnung {n} vom {d}.", debit: "Der Betrag wird per SEPA-Lastschrift von Ihrem Konto {i} eingezogen.",
		intro:       []string{"Vielen Dank für Ihren Auftrag. Wir berechnen Ihnen wie folgt:", "Sehr geehrte Damen und Herren, für unsere Leistungen erlauben wir uns zu berechnen:"},
		dueSentence: []string{"Bitte überweisen Sie den Betrag bis zum {d} auf unser Konto.", "Zahlbar bis {d} ohne Abzug.", "Fällig am {d}."},
		terms:       []string{"Zahlbar innerhalb von 14 Tagen ohne Abzug.", "Zahlungsziel: 30 Tage netto."},
	}
}
