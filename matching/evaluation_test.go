package matching

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/bankstatement"
	"acctapi/document"
)

// iban gives the IBAN of a country and a national account number, with its
// check digits computed.
func iban(country, bban string) string {
	var digits strings.Builder
	for _, c := range bban + country + "00" {
		if c >= 'A' && c <= 'Z' {
			fmt.Fprint(&digits, int(c-'A'+10))
		} else {
			digits.WriteRune(c)
		}
	}
	n, _ := new(big.Int).SetString(digits.String(), 10)
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("%s%02d%s", country, check, bban)
}

// supplier is one business the client buys from: its name on its
// documents, its name as banks write it, its IBAN.
type supplier struct{ name, bankName, iban string }

var (
	clientName   = "Bäckerei Schmidt GmbH"
	mainAccount  = iban("DE", "370400440532013000")
	cardAccount  = iban("DE", "700500000012345678")
	muellerMehl  = supplier{"Müller Mehl GmbH", "MUELLER MEHL GMBH", iban("DE", "512108001245126199")}
	stadtwerke   = supplier{"Stadtwerke München GmbH", "STADTWERKE MUENCHEN", iban("DE", "701500000000012345")}
	telekom      = supplier{"Deutsche Telekom AG", "Telekom Deutschland GmbH", iban("DE", "200400000123456700")}
	vodafone     = supplier{"Vodafone GmbH", "Vodafone GmbH", iban("DE", "300700100222333444")}
	schulz       = supplier{"Bäckereibedarf Schulz KG", "Baeckereibedarf Schulz", iban("DE", "100500000190012345")}
	amazon       = supplier{"Amazon EU S.à r.l.", "AMAZON EU SARL", iban("LU", "751000135104200E")}
	hofmann      = supplier{"Hofmann Verpackungen e.K.", "Hofmann Verpackungen", iban("DE", "600501010001234567")}
	weber        = supplier{"Steuerberatung Weber & Partner mbB", "Weber und Partner Steuerberatung", iban("DE", "430609670033445566")}
	zuckerNord   = supplier{"Zucker Nord AG", "ZUCKER NORD AG", iban("DE", "210500000055667788")}
	allianz      = supplier{"Allianz Versicherungs-AG", "Allianz Versicherungs-AG", iban("DE", "700800000123456789")}
	metro        = supplier{"METRO Deutschland GmbH", "METRO Cash + Carry", ""}
	elektroKraus = supplier{"Elektro Krause GmbH", "ELEKTRO KRAUSE", iban("DE", "120300000098765432")}
	molkerei     = supplier{"Molkerei Berger eG", "MOLKEREI BERGER EG", iban("DE", "733699200000123456")}
	stranger     = supplier{"", "Hans Meier", iban("DE", "500105170648489890")}
	landlord     = supplier{"", "Immobilien Huber", iban("DE", "830200860001112223")}
)

// evalDoc builds a document of the month.
func evalDoc(tb testing.TB, id, kind string, s supplier, number, date, due, total string) Document {
	tb.Helper()
	d := Document{FileID: id, Kind: kind, Number: number, Currency: "EUR", IssuerName: s.name, IssuerIBAN: s.iban,
		Date: mustDay(tb, date), Total: amt(tb, total)}
	if due != "" {
		d.DueDate = mustDay(tb, due)
	}
	return d
}

func mustDay(tb testing.TB, s string) time.Time {
	tb.Helper()
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// What a transaction of the month is, by construction.
const (
	caseNumber   = "number in remittance"
	caseIBAN     = "supplier IBAN, exact amount"
	caseCredit   = "credit note, money in"
	caseSales    = "sales invoice, money in"
	caseRefund   = "issued credit note, money out"
	caseDiscount = "discount in time"
	casePartial  = "instalment"
	caseCombined = "one payment, several invoices"
	caseNothing  = "naming nothing"
	caseUnsaid   = "less than the total, unsaid"
	caseTwoOpen  = "two open invoices, one payment"
	caseFee      = "bank fee"
	caseOwn      = "own-account transfer"
	caseStranger = "stranger, coinciding amount"
	caseTwice    = "invoice paid twice"
	casePaid     = "invoice paid last month"
	caseLate     = "discount taken too late"
	caseWrongSum = "several invoices, wrong sum"
	caseWrongWay = "sales invoice's amount out"
	caseNoDoc    = "no document"
)

// evalTx is one transaction of the month with its truth.
type evalTx struct {
	card              bool // on the MT940 card account, else the CAMT main account
	date, amount      string
	party             supplier
	remittance        string
	truth             string // the FileIDs that explain it, joined by "+"; "" if none
	what              string
	counterpartyIBAN  bool // the bank gives the counterparty's IBAN
	counterpartyOwner bool // the counterparty is the client itself
}

// certain reports whether the rules can match the transaction without a
// person: what a document explains and the transaction says enough of.
func (e evalTx) certain() bool {
	switch e.what {
	case caseNumber, caseIBAN, caseCredit, caseSales, caseRefund, caseDiscount, casePartial, caseCombined:
		return true
	}
	return false
}

// trap reports whether the transaction must never be matched.
func (e evalTx) trap() bool {
	switch e.what {
	case caseUnsaid, caseTwoOpen, caseFee, caseOwn, caseStranger, caseNoDoc, caseTwice, casePaid, caseLate, caseWrongSum, caseWrongWay:
		return true
	}
	return false
}

// The client's identity, by which its own invoices are told apart.
var (
	clientVATID = "DE811223344"
	identity    = Identity{VATIDs: []string{clientVATID}, IBANs: []string{mainAccount, cardAccount}, Names: []string{clientName}}
)

// The client's customers: a sales invoice names each as its buyer.
var (
	cafeSonne  = supplier{"Café Sonne", "Café Sonne", iban("DE", "100100100000111222")}
	hotelAdler = supplier{"Hotel Adler GmbH & Co. KG", "HOTEL ADLER GMBH + CO KG", iban("DE", "700202700015557777")}
	kita       = supplier{"Kita Sonnenschein e.V.", "KITA SONNENSCHEIN EV", iban("DE", "430609671234000000")}
)

// salesDoc builds an invoice or credit note the client issued to a
// customer: its own name, VAT id and IBAN as the issuer's.
func salesDoc(tb testing.TB, id, kind string, buyer supplier, number, date, due, total string) Document {
	tb.Helper()
	d := evalDoc(tb, id, kind, supplier{clientName, "", mainAccount}, number, date, due, total)
	d.IssuerVATID, d.BuyerName = clientVATID, buyer.name
	return d
}

// withDiscount gives a document the discount its payment terms state.
func withDiscount(tb testing.TB, d Document, discount, until string) Document {
	tb.Helper()
	d.Discount, d.DiscountUntil = amt(tb, discount), mustDay(tb, until)
	return d
}

func evaluationMonth(tb testing.TB) ([]Document, []evalTx) {
	paidInFebruary := evalDoc(tb, "sz-012", document.Invoice, schulz, "2026-012", "2026-02-06", "2026-02-20", "560.00")
	paidInFebruary.Paid = paidInFebruary.Total
	docs := []Document{
		evalDoc(tb, "mm-0117", document.Invoice, muellerMehl, "RE-2026-0117", "2026-02-27", "2026-03-13", "1249.50"),
		evalDoc(tb, "mm-0142", document.Invoice, muellerMehl, "RE-2026-0142", "2026-03-10", "2026-03-24", "980.00"),
		evalDoc(tb, "mm-0188", document.Invoice, muellerMehl, "RE-2026-0188", "2026-03-17", "2026-03-31", "415.80"),
		evalDoc(tb, "sw-strom", document.Invoice, stadtwerke, "4711-0326", "2026-03-01", "2026-03-15", "312.40"),
		evalDoc(tb, "sw-wasser", document.Invoice, stadtwerke, "4712-0326", "2026-03-01", "2026-03-15", "128.00"),
		evalDoc(tb, "tk-03", document.Invoice, telekom, "3412 5566 7788", "2026-03-03", "2026-03-17", "59.95"),
		evalDoc(tb, "vf-03", document.Invoice, vodafone, "VF-88812", "2026-03-02", "2026-03-16", "39.99"),
		evalDoc(tb, "sz-031", document.Invoice, schulz, "2026-031", "2026-02-20", "2026-03-06", "2380.00"),
		evalDoc(tb, "az-554433", document.Invoice, amazon, "INV-DE-2026-554433", "2026-03-08", "", "49.99"),
		evalDoc(tb, "hv-9921", document.Invoice, hofmann, "H-9921", "2026-03-01", "2026-03-31", "640.00"),
		evalDoc(tb, "hv-99", document.Invoice, hofmann, "H-99", "2026-02-10", "", "75.00"),
		evalDoc(tb, "hv-991", document.Invoice, hofmann, "H-991", "2026-03-02", "", "75.00"),
		evalDoc(tb, "wp-0311", document.Invoice, weber, "2026/0311", "2026-03-05", "2026-03-19", "1190.00"),
		evalDoc(tb, "wp-0320", document.Invoice, weber, "2026/0320", "2026-03-20", "2026-04-03", "500.00"),
		evalDoc(tb, "zn-501", document.Invoice, zuckerNord, "ZN-501", "2026-03-02", "2026-03-16", "450.00"),
		evalDoc(tb, "zn-502", document.Invoice, zuckerNord, "ZN-502", "2026-03-09", "2026-03-23", "450.00"),
		evalDoc(tb, "al-2026", document.Invoice, allianz, "VS-77-1234", "2026-02-15", "2026-03-01", "1022.40"),
		evalDoc(tb, "mt-0305", document.Receipt, metro, "0815 4711 0305", "2026-03-05", "", "87.35"),
		evalDoc(tb, "mt-0319", document.Receipt, metro, "0815 4711 0319", "2026-03-19", "", "212.10"),
		evalDoc(tb, "mt-0312", document.Receipt, metro, "0815 4711 0312", "2026-03-12", "", "9.90"),
		evalDoc(tb, "mt-0326", document.Receipt, metro, "0815 4711 0326", "2026-03-26", "", "4.50"),
		evalDoc(tb, "ek-17", document.Invoice, elektroKraus, "EK-2026-17", "2026-03-04", "2026-03-18", "1500.00"),
		evalDoc(tb, "mb-077", document.Invoice, molkerei, "MB-2026-077", "2026-03-06", "2026-03-20", "860.00"),
		evalDoc(tb, "mb-gs004", document.CreditNote, molkerei, "GS-2026-004", "2026-03-12", "", "120.00"),
		evalDoc(tb, "mb-081", document.Invoice, molkerei, "MB-2026-081", "2026-03-13", "2026-03-27", "344.00"),
		evalDoc(tb, "hv-1001", document.Invoice, hofmann, "H-1001", "2026-03-03", "", "210.00"),
		evalDoc(tb, "hv-1002", document.Invoice, hofmann, "H-1002", "2026-03-04", "", "90.00"),
		withDiscount(tb, evalDoc(tb, "mm-0205", document.Invoice, muellerMehl, "RE-2026-0205", "2026-03-02", "2026-03-30", "2000.00"), "40.00", "2026-03-16"),
		withDiscount(tb, evalDoc(tb, "zn-510", document.Invoice, zuckerNord, "ZN-510", "2026-03-03", "2026-04-02", "1000.00"), "30.00", "2026-03-13"),
		withDiscount(tb, evalDoc(tb, "zn-511", document.Invoice, zuckerNord, "ZN-511", "2026-02-20", "2026-03-22", "800.00"), "16.00", "2026-03-02"),
		evalDoc(tb, "mb-090", document.Invoice, molkerei, "MB-2026-090", "2026-03-02", "2026-03-16", "210.00"),
		evalDoc(tb, "mb-091", document.Invoice, molkerei, "MB-2026-091", "2026-03-05", "2026-03-19", "185.50"),
		evalDoc(tb, "mb-092", document.Invoice, molkerei, "MB-2026-092", "2026-03-09", "2026-03-23", "99.90"),
		evalDoc(tb, "mb-095", document.Invoice, molkerei, "MB-2026-095", "2026-03-16", "2026-03-30", "500.00"),
		evalDoc(tb, "mb-gs005", document.CreditNote, molkerei, "GS-2026-005", "2026-03-18", "", "50.00"),
		evalDoc(tb, "ek-30", document.Invoice, elektroKraus, "EK-2026-30", "2026-03-05", "2026-03-19", "720.00"),
		evalDoc(tb, "ek-31", document.Invoice, elektroKraus, "EK-2026-31", "2026-03-06", "2026-03-20", "95.00"),
		paidInFebruary,
		salesDoc(tb, "ar-12", document.Invoice, cafeSonne, "AR-2026-12", "2026-03-14", "2026-03-28", "230.00"),
		salesDoc(tb, "ar-15", document.Invoice, hotelAdler, "AR-2026-15", "2026-03-06", "2026-03-20", "1428.00"),
		withDiscount(tb, salesDoc(tb, "ar-16", document.Invoice, hotelAdler, "AR-2026-16", "2026-03-09", "2026-03-23", "642.60"), "12.85", "2026-03-16"),
		salesDoc(tb, "ar-17", document.Invoice, kita, "AR-2026-17", "2026-03-10", "2026-03-24", "356.40"),
		salesDoc(tb, "ar-gs2", document.CreditNote, hotelAdler, "AR-GS-2026-02", "2026-03-18", "", "45.00"),
		// The gas supplier's direct-debit notice prints the client's own
		// IBAN, and the reader took it for the issuer's.
		evalDoc(tb, "sw-gas", document.Invoice, supplier{stadtwerke.name, "", cardAccount}, "4713-0326", "2026-03-01", "2026-03-20", "500.00"),
	}
	for i := range docs {
		docs[i].Direction = DirectionOf(docs[i], identity)
	}
	own := supplier{"", clientName, cardAccount}
	ownMain := supplier{"", clientName, mainAccount}
	txs := []evalTx{
		{date: "2026-03-10", amount: "-1249.50", party: muellerMehl, remittance: "RE-2026-0117", truth: "mm-0117", what: caseNumber, counterpartyIBAN: true},
		{date: "2026-03-24", amount: "-980.00", party: muellerMehl, remittance: "Rechnung RE 2026 0142 vom 10.03.", truth: "mm-0142", what: caseNumber, counterpartyIBAN: true},
		{date: "2026-03-16", amount: "-312.40", party: stadtwerke, remittance: "Abschlag Maerz Vertragskonto 800012345", truth: "sw-strom", what: caseIBAN, counterpartyIBAN: true},
		{date: "2026-03-17", amount: "-59.95", party: telekom, remittance: "Kd-Nr 123456789 RG 341255667788/03.2026", truth: "tk-03", what: caseNumber},
		{date: "2026-03-16", amount: "-39.99", party: vodafone, remittance: "Vodafone Kundennr 1122334 Rechnung Maerz", truth: "vf-03", what: caseNothing},
		{date: "2026-03-05", amount: "-2380.00", party: schulz, remittance: "Danke", truth: "sz-031", what: caseIBAN, counterpartyIBAN: true},
		{date: "2026-03-09", amount: "-49.99", party: amazon, remittance: "302-1234567-7654321 Amazon.de", truth: "az-554433", what: caseNothing},
		{date: "2026-03-20", amount: "-320.00", party: hofmann, remittance: "H-9921 Teilzahlung 1/2", truth: "hv-9921", what: casePartial, counterpartyIBAN: true},
		{date: "2026-03-14", amount: "-1960.00", party: muellerMehl, remittance: "RE-2026-0205 abzgl. 2% Skonto", truth: "mm-0205", what: caseDiscount, counterpartyIBAN: true},
		{date: "2026-03-12", amount: "-970.00", party: zuckerNord, remittance: "Lieferung Februar", truth: "zn-510", what: caseDiscount, counterpartyIBAN: true},
		{date: "2026-03-20", amount: "-784.00", party: zuckerNord, remittance: "ZN-511 abzgl. 2% Skonto", what: caseLate, counterpartyIBAN: true},
		{date: "2026-03-18", amount: "-495.40", party: molkerei, remittance: "MB-2026-090 MB-2026-091 MB-2026-092", truth: "mb-090+mb-091+mb-092", what: caseCombined, counterpartyIBAN: true},
		{date: "2026-03-27", amount: "-450.00", party: molkerei, remittance: "MB-2026-095 abzgl. Gutschrift GS-2026-005", truth: "mb-095+mb-gs005", what: caseCombined, counterpartyIBAN: true},
		{date: "2026-03-19", amount: "-800.00", party: elektroKraus, remittance: "EK-2026-30 EK-2026-31", what: caseWrongSum, counterpartyIBAN: true},
		{date: "2026-03-19", amount: "-360.00", party: elektroKraus, remittance: "EK-2026-30", what: caseUnsaid, counterpartyIBAN: true},
		{date: "2026-03-04", amount: "-560.00", party: schulz, remittance: "RE 2026-012", what: casePaid, counterpartyIBAN: true},
		{date: "2026-03-19", amount: "1428.00", party: hotelAdler, remittance: "Rechnung AR-2026-15", truth: "ar-15", what: caseSales, counterpartyIBAN: true},
		{date: "2026-03-16", amount: "629.75", party: hotelAdler, remittance: "AR-2026-16 2% Skonto", truth: "ar-16", what: caseDiscount, counterpartyIBAN: true},
		{date: "2026-03-23", amount: "356.40", party: kita, remittance: "Brot Maerz", truth: "ar-17", what: caseNothing, counterpartyIBAN: true},
		{date: "2026-03-20", amount: "-45.00", party: hotelAdler, remittance: "Gutschrift AR-GS-2026-02", truth: "ar-gs2", what: caseRefund, counterpartyIBAN: true},
		{date: "2026-03-24", amount: "-1428.00", party: hotelAdler, remittance: "AR-2026-15 Rueckbuchung", what: caseWrongWay, counterpartyIBAN: true},
		{date: "2026-03-06", amount: "-75.00", party: supplier{"", "PayPal Europe S.a.r.l. et Cie S.C.A.", ""}, remittance: "PP.1234.PP H-991 Hofmann Verpackungen", truth: "hv-991", what: caseNumber},
		{date: "2026-03-18", amount: "-1190.00", party: weber, remittance: "Rechnung 2026/0311", truth: "wp-0311", what: caseNumber, counterpartyIBAN: true},
		{date: "2026-03-20", amount: "-450.00", party: zuckerNord, remittance: "Zucker Lieferung", what: caseTwoOpen, counterpartyIBAN: true},
		{date: "2026-03-02", amount: "-1022.40", party: allianz, remittance: "VS-77-1234 Betriebshaftpflicht 2026", truth: "al-2026", what: caseNumber},
		{date: "2026-03-19", amount: "-860.00", party: molkerei, remittance: "MB-2026-077", truth: "mb-077", what: caseNumber, counterpartyIBAN: true},
		{date: "2026-03-20", amount: "120.00", party: molkerei, remittance: "Gutschrift GS-2026-004 Bruchware", truth: "mb-gs004", what: caseCredit, counterpartyIBAN: true},
		{date: "2026-03-25", amount: "-1000.00", party: elektroKraus, remittance: "EK-2026-17 Anzahlung", truth: "ek-17", what: casePartial, counterpartyIBAN: true},
		{date: "2026-03-31", amount: "-500.00", party: elektroKraus, remittance: "EK-2026-17", truth: "ek-17", what: casePartial, counterpartyIBAN: true},
		{date: "2026-03-31", amount: "-9.90", party: supplier{}, remittance: "Kontofuehrungsentgelt 03/2026", what: caseFee},
		{date: "2026-03-21", amount: "-500.00", party: own, remittance: "Umbuchung Kartenkonto", what: caseOwn, counterpartyIBAN: true, counterpartyOwner: true},
		{date: "2026-03-22", amount: "-1190.00", party: stranger, remittance: "Auslage Fest", what: caseStranger, counterpartyIBAN: true},
		{date: "2026-03-23", amount: "120.00", party: stranger, remittance: "Rueckzahlung", what: caseStranger, counterpartyIBAN: true},
		{date: "2026-03-26", amount: "-2380.00", party: schulz, remittance: "Danke", what: caseTwice, counterpartyIBAN: true},
		{date: "2026-03-30", amount: "-980.00", party: muellerMehl, remittance: "RE-2026-0142 nach Mahnung", what: caseTwice, counterpartyIBAN: true},
		{date: "2026-03-12", amount: "-300.00", party: hofmann, remittance: "H-1001 H-1002", truth: "hv-1001+hv-1002", what: caseCombined, counterpartyIBAN: true},
		{date: "2026-03-03", amount: "-3500.00", party: landlord, remittance: "Miete Maerz Backstube", what: caseNoDoc, counterpartyIBAN: true},

		{card: true, date: "2026-03-21", amount: "500.00", party: ownMain, remittance: "Umbuchung Kartenkonto", what: caseOwn, counterpartyIBAN: true, counterpartyOwner: true},
		{card: true, date: "2026-03-05", amount: "-87.35", party: metro, remittance: "METRO SAGT DANKE 2026-03-05T10:15:22 Karte 1", truth: "mt-0305", what: caseNothing},
		{card: true, date: "2026-03-19", amount: "-212.10", party: metro, remittance: "METRO SAGT DANKE 2026-03-19T08:02:51 Karte 1", truth: "mt-0319", what: caseNothing},
		{card: true, date: "2026-03-30", amount: "-415.80", party: muellerMehl, remittance: "SVWZ+RE 2026-0188 Danke fuer die Lieferung", truth: "mm-0188", what: caseNumber, counterpartyIBAN: true},
		{card: true, date: "2026-03-16", amount: "-128.00", party: stadtwerke, remittance: "EREF+SW4712 SVWZ+Wasser 4712-0326", truth: "sw-wasser", what: caseNumber, counterpartyIBAN: true},
		{card: true, date: "2026-03-27", amount: "-344.00", party: molkerei, remittance: "SVWZ+Milch KW 11", truth: "mb-081", what: caseIBAN, counterpartyIBAN: true},
		{card: true, date: "2026-03-31", amount: "-4.50", party: supplier{}, remittance: "Entgelt Kartenzahlungen", what: caseFee},
		{card: true, date: "2026-03-18", amount: "-59.95", party: stranger, remittance: "Geburtstag Oma", what: caseStranger, counterpartyIBAN: true},
		{card: true, date: "2026-03-28", amount: "230.00", party: supplier{"", "Café Sonne", iban("DE", "100100100000111222")}, remittance: "SVWZ+AR-2026-12 Brot und Kuchen", truth: "ar-12", what: caseSales, counterpartyIBAN: true},
	}
	return docs, txs
}

// camtStatement writes the CAMT.053 (version .08) statement of the main
// account.
func camtStatement(txs []evalTx) string {
	var b strings.Builder
	opening := int64(2500000) // cents
	sum := int64(0)
	for _, tx := range txs {
		if !tx.card {
			sum += cents(tx.amount)
		}
	}
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">
<BkToCstmrStmt><GrpHdr><MsgId>EVAL-1</MsgId><CreDtTm>2026-04-01T05:00:00+02:00</CreDtTm></GrpHdr>
<Stmt><Id>EVAL-2026-03</Id><FrToDt><FrDtTm>2026-03-01T00:00:00+01:00</FrDtTm><ToDtTm>2026-03-31T23:59:59+02:00</ToDtTm></FrToDt>
<Acct><Id><IBAN>%s</IBAN></Id><Ccy>EUR</Ccy><Ownr><Nm>%s</Nm></Ownr></Acct>
<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-02-28</Dt></Dt></Bal>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">%s</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-03-31</Dt></Dt></Bal>
`, mainAccount, esc(clientName), decimal(opening), decimal(opening+sum))
	for i, tx := range txs {
		if tx.card {
			continue
		}
		c := cents(tx.amount)
		ind, party, acct := "DBIT", "Cdtr", "CdtrAcct"
		if c > 0 {
			ind, party, acct = "CRDT", "Dbtr", "DbtrAcct"
		}
		fmt.Fprintf(&b, `<Ntry><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%[3]s</Dt></ValDt><AcctSvcrRef>EVAL%04d</AcctSvcrRef>`,
			decimal(abs(c)), ind, tx.date, i)
		b.WriteString(`<BkTxCd/><NtryDtls><TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs><RltdPties>`)
		if tx.party.bankName != "" {
			fmt.Fprintf(&b, `<%s><Pty><Nm>%s</Nm></Pty></%[1]s>`, party, esc(tx.party.bankName))
		}
		if tx.counterpartyIBAN && tx.party.iban != "" {
			fmt.Fprintf(&b, `<%s><Id><IBAN>%s</IBAN></Id></%[1]s>`, acct, tx.party.iban)
		}
		fmt.Fprintf(&b, `</RltdPties><RmtInf><Ustrd>%s</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>
`, esc(tx.remittance))
	}
	b.WriteString("</Stmt></BkToCstmrStmt></Document>\n")
	return b.String()
}

// mt940Statement writes the MT940 statement of the card account as a
// German bank does: ?-subfields of 27 characters, lines wrapped at 65,
// ISO 8859-1.
func mt940Statement(txs []evalTx) []byte {
	var b strings.Builder
	opening := int64(150000)
	sum := int64(0)
	for _, tx := range txs {
		if tx.card {
			sum += cents(tx.amount)
		}
	}
	fmt.Fprintf(&b, ":20:STARTUMS\r\n:25:70050000/0012345678\r\n:28C:00003/001\r\n:60F:C260228EUR%s\r\n", mtAmount(opening))
	for _, tx := range txs {
		if !tx.card {
			continue
		}
		c := cents(tx.amount)
		mark := "D"
		if c > 0 {
			mark = "C"
		}
		date := strings.ReplaceAll(tx.date, "-", "")
		fmt.Fprintf(&b, ":61:%s%s%s%sNTRFNONREF\r\n", date[2:], date[4:], mark, mtAmount(abs(c)))
		details := "106?00SEPA-UEBERWEISUNG?109310"
		for i, part := range chunks(tx.remittance, 27) {
			details += fmt.Sprintf("?%d%s", 20+i, part)
		}
		if tx.counterpartyIBAN && tx.party.iban != "" {
			details += "?30BYLADEM1001?31" + tx.party.iban
		}
		for i, part := range chunks(tx.party.bankName, 27) {
			details += fmt.Sprintf("?%d%s", 32+i, part)
		}
		line := ":86:" + details
		for len(line) > 65 {
			b.WriteString(line[:65] + "\r\n")
			line = line[65:]
		}
		b.WriteString(line + "\r\n")
	}
	fmt.Fprintf(&b, ":62F:C260331EUR%s\r\n-\r\n", mtAmount(opening+sum))
	var out []byte
	for _, r := range b.String() {
		out = append(out, byte(r))
	}
	return out
}

func chunks(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out[:min(len(out), 10)]
}

func cents(s string) int64 {
	var whole, frac int64
	neg := strings.HasPrefix(s, "-")
	fmt.Sscanf(strings.TrimPrefix(s, "-"), "%d.%d", &whole, &frac)
	if neg {
		return -(whole*100 + frac)
	}
	return whole*100 + frac
}

func abs(c int64) int64 {
	if c < 0 {
		return -c
	}
	return c
}

func decimal(c int64) string  { return fmt.Sprintf("%d.%02d", c/100, c%100) }
func mtAmount(c int64) string { return fmt.Sprintf("%d,%02d", c/100, c%100) }

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// TestEvaluationMonth matches a client's month: a dozen suppliers'
// documents against a CAMT.053 and an MT940 statement written as banks
// write them and read with bankstatement. The truth is known by
// construction; run with -v for the table.
func TestEvaluationMonth(t *testing.T) {
	docs, cases := evaluationMonth(t)
	var parsed []bankstatement.Statement
	for _, data := range [][]byte{[]byte(camtStatement(cases)), mt940Statement(cases)} {
		sts, err := bankstatement.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, sts...)
	}
	// The statements list the cases in order: the main account's, then the
	// card account's.
	var ordered []evalTx
	for _, card := range []bool{false, true} {
		for _, c := range cases {
			if c.card == card {
				ordered = append(ordered, c)
			}
		}
	}
	var txs []Transaction
	for _, st := range parsed {
		for _, e := range st.Entries {
			txs = append(txs, Transaction{ID: fmt.Sprintf("t%02d", len(txs)+1), BookingDate: e.BookingDate, Amount: e.Amount,
				Currency: e.Currency, CounterpartyName: e.CounterpartyName, CounterpartyIBAN: e.CounterpartyIBAN, RemittanceInfo: e.RemittanceInfo,
				OwnAccount: e.CounterpartyIBAN == mainAccount || e.CounterpartyIBAN == cardAccount})
		}
	}
	if len(txs) != len(ordered) {
		t.Fatalf("the statements hold %d transactions, want %d", len(txs), len(ordered))
	}

	results := Decide(txs, docs)
	// figures counts, for each case: transactions, matched right, matched
	// wrong, and whether the right documents were among the candidates.
	type figures struct{ n, right, wrong, suggested int }
	byCase := map[string]*figures{}
	var order []string
	var matched, right, explained, explainedMatched, certain, certainMatched, trapsMatched int
	t.Logf("%-4s %-10s %10s  %-31s %-22s %-22s %s", "tx", "date", "amount", "case", "truth", "matched", "candidates")
	for i, r := range results {
		c := ordered[i]
		got := strings.Join(r.Matched, "+")
		var cands []string
		suggested := c.truth != ""
		for _, id := range strings.Split(c.truth, "+") {
			suggested = suggested && slices.ContainsFunc(r.Candidates, func(cand Candidate) bool { return cand.FileID == id })
		}
		for _, cand := range r.Candidates {
			cands = append(cands, fmt.Sprintf("%s %.2f %s", cand.FileID, cand.Score, strings.Join(cand.Reasons, "+")))
		}
		t.Logf("%-4s %-10s %10s  %-31s %-22s %-22s %s", r.TransactionID, txs[i].BookingDate.Format(time.DateOnly),
			txs[i].Amount.Format("EUR"), c.what, c.truth, got, strings.Join(cands, ", "))
		f := byCase[c.what]
		if f == nil {
			f = &figures{}
			byCase[c.what] = f
			order = append(order, c.what)
		}
		f.n++
		if suggested {
			f.suggested++
		}
		if got != "" {
			matched++
			if got == c.truth {
				right++
				f.right++
			} else {
				f.wrong++
				t.Errorf("%s (%s) matched %s, truth %q", r.TransactionID, c.what, got, c.truth)
			}
		}
		if c.truth != "" {
			explained++
			if got == c.truth {
				explainedMatched++
			}
		}
		if c.certain() {
			certain++
			if got == c.truth {
				certainMatched++
			}
		}
		if c.trap() && got != "" {
			trapsMatched++
			t.Errorf("%s (%s) is a trap and was matched to %s", r.TransactionID, c.what, got)
		}
		if c.what == caseNothing && !suggested {
			t.Errorf("%s (%s): the right document is not among the candidates", r.TransactionID, c.what)
		}
		if c.what == caseTwoOpen && len(r.Candidates) != 2 {
			t.Errorf("%s: got %d candidates, want both open invoices", r.TransactionID, len(r.Candidates))
		}
	}
	t.Logf("%-31s %5s %6s %6s %9s %10s %9s", "case", "txs", "right", "wrong", "precision", "automatic", "suggested")
	for _, what := range order {
		f := byCase[what]
		precision := "-"
		if f.right+f.wrong > 0 {
			precision = fmt.Sprintf("%.1f%%", 100*float64(f.right)/float64(f.right+f.wrong))
		}
		t.Logf("%-31s %5d %6d %6d %9s %9.1f%% %9d", what, f.n, f.right, f.wrong, precision, 100*float64(f.right)/float64(f.n), f.suggested)
	}
	precision := 1.0
	if matched > 0 {
		precision = float64(right) / float64(matched)
	}
	recall := float64(certainMatched) / float64(certain)
	t.Logf("transactions %d, documents %d", len(txs), len(docs))
	t.Logf("automatic matches %d, right %d: precision %.1f%%", matched, right, 100*precision)
	t.Logf("explained by a document %d, matched without a person %d (%.1f%%)", explained, explainedMatched, 100*float64(explainedMatched)/float64(explained))
	t.Logf("certain by the rules %d, matched %d: recall %.1f%%", certain, certainMatched, 100*recall)
	t.Logf("traps matched %d", trapsMatched)
	if precision < 0.995 {
		t.Errorf("precision %.3f, want at least 0.995", precision)
	}
	if recall < 0.95 {
		t.Errorf("recall over the certain transactions %.3f, want at least 0.95", recall)
	}
}
