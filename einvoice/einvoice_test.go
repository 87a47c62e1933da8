package einvoice

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"acctapi/document"
)

// fileTests state every field of each file in testdata, as read from the
// XML by hand and checked against a second, independent reader.
var fileTests = []struct {
	file string
	want Invoice
}{
	{"cii-direct-debit.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "123456",
			IssueDate:      "2025-04-26",
			DueDate:        "2025-04-26",
			Currency:       "EUR",
			NetAmount:      "119.00",
			TaxAmount:      "22.61",
			TotalAmount:    "141.61",
			IssuerName:     "---",
			IssuerVATID:    "DE111111111",
			IssuerIBAN:     "",
		},
		BuyerName: "a & b GmbH",
		BuyerIBAN: "DE22222222222222222222",
		Language:  "",
	}},
	{"cii-multiple-payment-means.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "RE-20201121/987",
			IssueDate:      "2020-11-21",
			DueDate:        "2020-12-12",
			Currency:       "EUR",
			NetAmount:      "160.00",
			TaxAmount:      "30.40",
			TotalAmount:    "190.40",
			IssuerName:     "Bei Spiel GmbH",
			IssuerVATID:    "DE136695976",
			IssuerIBAN:     "DE8576040061XXXXXXXXXX",
		},
		BuyerName: "Theodor Est",
		Language:  "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN DE8576040061XXXXXXXXXX fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"cii-two-tax-totals.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "Test_EeISI_100",
			IssueDate:      "2018-11-12",
			DueDate:        "2018-11-30",
			Currency:       "EUR",
			NetAmount:      "2000.00",
			TaxAmount:      "50.00",
			TotalAmount:    "2050.00",
			IssuerName:     "Seller name",
			IssuerVATID:    "DE12345677",
			IssuerIBAN:     "IT1212341234123412",
		},
		BuyerName:  "Buyer name",
		BuyerVATID: "IE394838894",
		BuyerIBAN:  "DEBITEDACCOUNTIDENTIFIER",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerVATID}, Message: "The seller's VAT id DE12345677 does not have the shape of a VAT id of its country."},
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN IT1212341234123412 fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"en16931-cii-389-gutschrift.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "389",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2018-03-05",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "473.00",
			TaxAmount:      "56.87",
			TotalAmount:    "529.87",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName:  "Kunden AG Mitte",
		BuyerVATID: "DE136695976",
		Language:   "",
	}},
	{"en16931-cii-example5.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "TOSL110",
			IssueDate:      "2013-04-10",
			DueDate:        "2013-05-10",
			Currency:       "DKK",
			NetAmount:      "4000",
			TaxAmount:      "675.00",
			TotalAmount:    "4675",
			IssuerName:     "SellerCompany",
			IssuerVATID:    "NL16356706",
			IssuerIBAN:     "DK1212341234123412",
		},
		BuyerName:  "Buyercompany ltd",
		BuyerVATID: "DK16356607",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerVATID}, Message: "The seller's VAT id NL16356706 does not have the shape of a VAT id of its country."},
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN DK1212341234123412 fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"en16931-cii-example8.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "1100512149",
			IssueDate:      "2014-11-10",
			DueDate:        "2014-11-24",
			Currency:       "EUR",
			NetAmount:      "908.91",
			TaxAmount:      "190.87",
			TotalAmount:    "1099.78",
			IssuerName:     "Enexis B.V.",
			IssuerVATID:    "NL809561074B01",
			IssuerIBAN:     "NL28RBOS0420242228",
		},
		BuyerName: "Klant",
		Language:  "",
	}},
	{"en16931-cii-huf.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "21/001003559/996",
			IssueDate:      "2021-10-05",
			DueDate:        "2021-11-01",
			Currency:       "HUF",
			NetAmount:      "69180.00",
			TaxAmount:      "18679.00",
			TotalAmount:    "87859.00",
			IssuerName:     "DKV Euro Service GmbH + Co. KG",
			IssuerVATID:    "HU30048650",
			IssuerIBAN:     "DE26330403100827038100",
		},
		BuyerName:  "HIL Heeresinstandsetzungslogistik GmbH",
		BuyerVATID: "DE242688168",
		Language:   "",
	}},
	{"en16931-ubl-creditnote.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "381",
		Kind:     "credit_note",
		Fields: document.Fields{
			DocumentNumber: "018304 / 28865",
			IssueDate:      "2019-09-23",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "100.11",
			TaxAmount:      "0.00",
			TotalAmount:    "100.11",
			IssuerName:     "My Supplier Company",
			IssuerVATID:    "BE0000000196",
			IssuerIBAN:     "BE91000000143476",
		},
		BuyerName:  "My Customer Company",
		BuyerVATID: "BE0000000295",
		Language:   "",
	}},
	{"en16931-ubl-example2.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "TOSL108",
			IssueDate:      "2013-06-30",
			DueDate:        "2013-07-20",
			Currency:       "NOK",
			NetAmount:      "1436.50",
			TaxAmount:      "365.28",
			TotalAmount:    "1801.78",
			IssuerName:     "Salescompany ltd.",
			IssuerVATID:    "NO123456789MVA",
			IssuerIBAN:     "NO9386011117947",
		},
		BuyerName:  "The Buyercompany",
		BuyerVATID: "NO987654321MVA",
		Language:   "",
	}},
	{"en16931-ubl-gutschrift.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0",
		TypeCode: "389",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2018-03-05",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "473",
			TaxAmount:      "56.87",
			TotalAmount:    "529.87",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName:  "Kunden AG Mitte",
		BuyerVATID: "DE136695976",
		Language:   "",
	}},
	{"facturx-basic.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2024-11-15",
			DueDate:        "2024-12-15",
			Currency:       "EUR",
			NetAmount:      "198.00",
			TaxAmount:      "37.62",
			TotalAmount:    "235.62",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName: "Kunden AG Mitte",
		Language:  "",
	}},
	{"facturx-extended-horstoeko.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "KR87654321012",
			IssueDate:      "2018-10-06",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "403.55",
			TaxAmount:      "76.67",
			TotalAmount:    "480.22",
			IssuerName:     "MUSTERLIEFERANT GMBH",
			IssuerVATID:    "",
			IssuerIBAN:     "DE5467894567876500",
		},
		BuyerName:       "MUSTER-KUNDE GMBH",
		DiscountPercent: "2.00",
		DiscountAmount:  "9.60",
		DiscountDueDate: "2018-10-16",
		Language:        "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN DE5467894567876500 fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"facturx-fr-avoir-380-minimum.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:factur-x.eu:1p0:minimum",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "AV-2017-0005",
			IssueDate:      "2017-11-16",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "-218.48",
			TaxAmount:      "-14.99",
			TotalAmount:    "-233.47",
			IssuerName:     "Au bon moulin",
			IssuerVATID:    "FR11999999998",
			IssuerIBAN:     "",
		},
		BuyerName:  "Ma jolie boutique",
		BuyerVATID: "FR19787878784",
		Language:   "",
	}},
	{"facturx-fr-en16931.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "FAC-20171118-506",
			IssueDate:      "2017-11-18",
			DueDate:        "2017-12-09",
			Currency:       "EUR",
			NetAmount:      "496.00",
			TaxAmount:      "75.04",
			TotalAmount:    "571.04",
			IssuerName:     "Atelier du Ballon SARL",
			IssuerVATID:    "FR44552081317",
			IssuerIBAN:     "FR7630006000011234567890189",
		},
		BuyerName:  "Maison de Evenements SAS",
		BuyerVATID: "FR19787878784",
		Language:   "",
	}},
	{"facturx-fr-minimum.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:factur-x.eu:1p0:minimum",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "FA-2017-0010",
			IssueDate:      "2017-11-13",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "624.90",
			TaxAmount:      "46.25",
			TotalAmount:    "671.15",
			IssuerName:     "Au bon moulin",
			IssuerVATID:    "FR11999999998",
			IssuerIBAN:     "",
		},
		BuyerName:  "Ma jolie boutique",
		BuyerVATID: "FR19787878784",
		Language:   "",
	}},
	{"peppol-ubl-creditnote-max.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0",
		TypeCode: "381",
		Kind:     "credit_note",
		Fields: document.Fields{
			DocumentNumber: "2018210",
			IssueDate:      "2018-02-08",
			DueDate:        "",
			Currency:       "SEK",
			NetAmount:      "10000",
			TaxAmount:      "2500",
			TotalAmount:    "12500",
			IssuerName:     "The Global Chain Sweden AB",
			IssuerVATID:    "SE123456789001",
			IssuerIBAN:     "SE1212341234123412341234",
		},
		BuyerName:  "Project services AB",
		BuyerVATID: "SE123451234501",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN SE1212341234123412341234 fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"peppol-ubl-negative.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "12345",
			IssueDate:      "2019-01-25",
			DueDate:        "2019-02-24",
			Currency:       "DKK",
			NetAmount:      "-625743.54",
			TaxAmount:      "-156435.89",
			TotalAmount:    "-782179.43",
			IssuerName:     "Company A",
			IssuerVATID:    "DK12345678",
			IssuerIBAN:     "1234567891234",
		},
		BuyerName:  "Company B",
		BuyerVATID: "DK87654321",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerIBAN}, Message: "The payment account 1234567891234 is not an IBAN."},
		},
	}},
	{"ubl-two-tax-totals.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "Test_EeISI_100",
			IssueDate:      "2018-11-12",
			DueDate:        "2018-11-30",
			Currency:       "EUR",
			NetAmount:      "2000.00",
			TaxAmount:      "50.00",
			TotalAmount:    "2050.00",
			IssuerName:     "Seller name",
			IssuerVATID:    "DE12345677",
			IssuerIBAN:     "IT1212341234123412",
		},
		BuyerName:  "Buyer name",
		BuyerVATID: "IE394838894",
		BuyerIBAN:  "DEBITEDACCOUNTIDENTIFIER",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerVATID}, Message: "The seller's VAT id DE12345677 does not have the shape of a VAT id of its country."},
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN IT1212341234123412 fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"xrechnung-cii-01.01a.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "123456XX",
			IssueDate:      "2016-04-04",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "314.86",
			TaxAmount:      "22.04",
			TotalAmount:    "336.9",
			IssuerName:     "[Seller name]",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE79000000001234567890",
		},
		BuyerName: "[Buyer name]",
		Language:  "",
	}},
	{"xrechnung-cii-384-corrected.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "384",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "PRG1502112",
			IssueDate:      "2015-04-24",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "8870",
			TaxAmount:      "1685.3",
			TotalAmount:    "10555.3",
			IssuerName:     "[Seller name]",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE79000000001234567890",
		},
		BuyerName: "[Buyer name]",
		Language:  "",
	}},
	{"xrechnung-cii-389-selfbilled.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "389",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "1234567890",
			IssueDate:      "2021-01-25",
			DueDate:        "2021-02-04",
			Currency:       "EUR",
			NetAmount:      "300.00",
			TaxAmount:      "57.00",
			TotalAmount:    "357.00",
			IssuerName:     "Betriebsstätte",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE79000000001234567890",
		},
		BuyerName:  "Kunde 1",
		BuyerVATID: "DE987654321",
		Language:   "",
	}},
	{"xrechnung-ubl-01.01a.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "123456XX",
			IssueDate:      "2016-04-04",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "314.86",
			TaxAmount:      "22.04",
			TotalAmount:    "336.9",
			IssuerName:     "[Seller name]",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE79000000001234567890",
		},
		BuyerName: "[Buyer name]",
		Language:  "",
	}},
	{"xrechnung-ubl-389-selfbilled-2.3.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xoev-de:kosit:standard:xrechnung_2.3",
		TypeCode: "389",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "1234567890",
			IssueDate:      "2021-01-25",
			DueDate:        "2021-02-04",
			Currency:       "EUR",
			NetAmount:      "300.00",
			TaxAmount:      "57.00",
			TotalAmount:    "357.00",
			IssuerName:     "Betriebsstätte",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "1234567890123456789022",
		},
		BuyerName:  "Kunde 1",
		BuyerVATID: "DE987654321",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerIBAN}, Message: "The payment account 1234567890123456789022 is not an IBAN."},
		},
	}},
	{"xrechnung-ubl-389-selfbilled.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "389",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "1234567890",
			IssueDate:      "2021-01-25",
			DueDate:        "2021-02-04",
			Currency:       "EUR",
			NetAmount:      "300.00",
			TaxAmount:      "57.00",
			TotalAmount:    "357.00",
			IssuerName:     "Betriebsstätte",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE79000000001234567890",
		},
		BuyerName:  "Kunde 1",
		BuyerVATID: "DE987654321",
		Language:   "",
	}},
	{"xrechnung-ubl-creditnote-326.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "326",
		Kind:     "credit_note",
		Fields: document.Fields{
			DocumentNumber: "1234567",
			IssueDate:      "2018-04-13",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "10781.25",
			TaxAmount:      "2048.44",
			TotalAmount:    "12829.69",
			IssuerName:     "[Seller trading name]",
			IssuerVATID:    "",
			IssuerIBAN:     "DE75512108001245126199",
		},
		BuyerName:  "[Buyer name]",
		BuyerVATID: "DE12345ABC",
		Language:   "",
	}},
	{"xrechnung-ubl-creditnote.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "381",
		Kind:     "credit_note",
		Fields: document.Fields{
			DocumentNumber: "1234567890",
			IssueDate:      "2018-10-15",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "7900.00",
			TaxAmount:      "510.00",
			TotalAmount:    "8410.00",
			IssuerName:     "EntServ Deutschland GmbH",
			IssuerVATID:    "ATU13585627",
			IssuerIBAN:     "DE84600400710561515801",
		},
		BuyerName:  "Deutsches Patent - und Markenamt",
		BuyerVATID: "ATU13585627",
		Language:   "",
	}},
	{"xrechnung-ubl-minimal.xml", Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "1234567",
			IssueDate:      "2018-04-13",
			DueDate:        "2018-04-13",
			Currency:       "EUR",
			NetAmount:      "4743.75",
			TaxAmount:      "0",
			TotalAmount:    "4743.75",
			IssuerName:     "[Seller name]",
			IssuerVATID:    "",
			IssuerIBAN:     "DE79000000001234567890",
		},
		BuyerName: "[Buyer name]",
		Language:  "",
	}},
	{"zugferd1-basic.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:ferd:CrossIndustryDocument:invoice:1p0:basic",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2013-03-05",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "198.00",
			TaxAmount:      "37.62",
			TotalAmount:    "235.62",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE08700901001234567890",
		},
		BuyerName: "Kunden AG Mitte",
		Language:  "",
	}},
	{"zugferd1-comfort.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:ferd:CrossIndustryDocument:invoice:1p0:comfort",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2013-03-05",
			DueDate:        "2013-04-04",
			Currency:       "EUR",
			NetAmount:      "473.00",
			TaxAmount:      "56.87",
			TotalAmount:    "529.87",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE08700901001234567890",
		},
		BuyerName: "Kunden AG Mitte",
		Language:  "",
	}},
	{"zugferd1-extended.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:ferd:CrossIndustryDocument:invoice:1p0:extended",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "R87654321012345",
			IssueDate:      "2013-08-06",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "448.99",
			TaxAmount:      "70.00",
			TotalAmount:    "518.99",
			IssuerName:     "MUSTERLIEFERANT GMBH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName:       "MUSTER-KUNDE GMBH",
		DiscountPercent: "2.00",
		DiscountDueDate: "2013-08-20",
		Language:        "",
	}},
	{"zugferd2-381-creditnote.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "381",
		Kind:     "credit_note",
		Fields: document.Fields{
			DocumentNumber: "123",
			IssueDate:      "2020-12-22",
			DueDate:        "2020-12-22",
			Currency:       "EUR",
			NetAmount:      "3.00",
			TaxAmount:      "0.57",
			TotalAmount:    "3.57",
			IssuerName:     "Test company",
			IssuerVATID:    "DE0815",
			IssuerIBAN:     "DE88200800000970375700",
		},
		BuyerName:  "Franz Müller",
		BuyerVATID: "DE0815",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerVATID}, Message: "The seller's VAT id DE0815 does not have the shape of a VAT id of its country."},
		},
	}},
	{"zugferd2-basic.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#compliant#urn:zugferd.de:2p0:basic",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2018-03-05",
			DueDate:        "2018-04-04",
			Currency:       "EUR",
			NetAmount:      "198.00",
			TaxAmount:      "37.62",
			TotalAmount:    "235.62",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName: "Kunden AG Mitte",
		Language:  "",
	}},
	{"zugferd2-default-namespace.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#conformant#urn:zugferd.de:2p0:extended",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "47110818",
			IssueDate:      "2018-10-31",
			DueDate:        "2018-11-30",
			Currency:       "EUR",
			NetAmount:      "2000.00",
			TaxAmount:      "0.00",
			TotalAmount:    "2000.00",
			IssuerName:     "Global Supplies Ltd.",
			IssuerVATID:    "GB999999999",
			IssuerIBAN:     "DE1212344321987600",
		},
		BuyerName:  "Metallbau Leipzig GmbH & Co. KG",
		BuyerVATID: "DE123456789",
		Language:   "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN DE1212344321987600 fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"zugferd2-en16931-sepa.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2018-03-05",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "473.00",
			TaxAmount:      "56.87",
			TotalAmount:    "529.87",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName: "Kunden AG Mitte",
		BuyerIBAN: "DE21860000000086001055",
		Language:  "",
	}},
	{"zugferd21-basicwl.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:factur-x.eu:1p0:basicwl",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2019-11-13",
			DueDate:        "2017-12-13",
			Currency:       "EUR",
			NetAmount:      "624.90",
			TaxAmount:      "46.25",
			TotalAmount:    "671.15",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "FR2012421242124212421242124",
		},
		BuyerName:  "Ma jolie boutique",
		BuyerVATID: "FR19787878784",
		Language:   "",
	}},
	{"zugferd21-extended.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "R87654321012345",
			IssueDate:      "2018-08-06",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "448.99",
			TaxAmount:      "70.00",
			TotalAmount:    "518.99",
			IssuerName:     "MUSTERLIEFERANT GMBH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName:       "MUSTER-KUNDE GMBH",
		DiscountPercent: "2.00",
		DiscountDueDate: "2018-08-20",
		Language:        "",
	}},
	{"zugferd21-minimum.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:factur-x.eu:1p0:minimum",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "471102",
			IssueDate:      "2020-03-05",
			DueDate:        "",
			Currency:       "EUR",
			NetAmount:      "198.00",
			TaxAmount:      "37.62",
			TotalAmount:    "235.62",
			IssuerName:     "Lieferant GmbH",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "",
		},
		BuyerName: "Kunden AG Frankreich",
		Language:  "",
	}},
	{"zugferd22-extended-foreign-currency.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended",
		TypeCode: "380",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "47110815",
			IssueDate:      "2018-10-31",
			DueDate:        "2018-11-20",
			Currency:       "GBP",
			NetAmount:      "858.75",
			TaxAmount:      "163.16",
			TotalAmount:    "1021.91",
			IssuerName:     "Rohstoff AG Salzgitter",
			IssuerVATID:    "DE123456789",
			IssuerIBAN:     "DE1212344321987600",
		},
		BuyerName: "Metallbau Leipzig GmbH & Co. KG",
		Language:  "",
		Warnings: []Warning{
			{Fields: []string{document.IssuerIBAN}, Message: "The IBAN DE1212344321987600 fails its check digits: a digit is wrong or missing."},
		},
	}},
	{"zugferd23-local-namespaces.xml", Invoice{
		Syntax:   "CII",
		Profile:  "urn:cen.eu:en16931:2017#conformant#urn:factur-x.eu:1p0:extended",
		TypeCode: "",
		Kind:     "invoice",
		Fields: document.Fields{
			DocumentNumber: "",
			IssueDate:      "",
			DueDate:        "",
			Currency:       "",
			NetAmount:      "",
			TaxAmount:      "",
			TotalAmount:    "",
			IssuerName:     "",
			IssuerVATID:    "",
			IssuerIBAN:     "",
		},
		Language: "",
	}},
}

func TestParseFiles(t *testing.T) {
	for _, tt := range fileTests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Parse(mustRead(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			checkInvoice(t, got, tt.want)
		})
	}
}

// TestFilesAllTested keeps the table and testdata together: a file added
// without its expected fields would go untested.
func TestFilesAllTested(t *testing.T) {
	files, err := filepath.Glob("testdata/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, tt := range fileTests {
		tested[tt.file] = true
	}
	for _, f := range files {
		if !tested[filepath.Base(f)] {
			t.Errorf("testdata/%s has no row in fileTests", filepath.Base(f))
		}
	}
}

func mustRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// checkInvoice names each field that differs.
// warned is the one warning message about fields.
func warned(message string, fields ...string) []Warning {
	return []Warning{{Fields: fields, Message: message}}
}

func checkInvoice(t *testing.T, got *Invoice, want Invoice) {
	t.Helper()
	g, w := reflect.ValueOf(*got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			t.Errorf("%s: got %q, want %q", g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
}

// ciiDoc is a small CII invoice; each test changes the part it is about.
const ciiDoc = `<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
 xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
 xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
 <rsm:ExchangedDocumentContext>
  <ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:cen.eu:en16931:2017</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>
 </rsm:ExchangedDocumentContext>
 <rsm:ExchangedDocument>
  <ram:ID>RE-2026-0042</ram:ID>
  <ram:TypeCode>380</ram:TypeCode>
  <ram:IssueDateTime><udt:DateTimeString format="102">20260131</udt:DateTimeString></ram:IssueDateTime>
  <ram:LanguageID>de-DE</ram:LanguageID>
 </rsm:ExchangedDocument>
 <rsm:SupplyChainTradeTransaction>
  <ram:ApplicableHeaderTradeAgreement>
   <ram:SellerTradeParty>
    <ram:Name>Müller
      GmbH</ram:Name>
    <ram:SpecifiedTaxRegistration><ram:ID schemeID="FC">201/113/40209</ram:ID></ram:SpecifiedTaxRegistration>
    <ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">de 123 456 789</ram:ID></ram:SpecifiedTaxRegistration>
   </ram:SellerTradeParty>
  </ram:ApplicableHeaderTradeAgreement>
  <ram:ApplicableHeaderTradeSettlement>
   <ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
   <ram:SpecifiedTradeSettlementPaymentMeans>
    <ram:TypeCode>58</ram:TypeCode>
    <ram:PayeePartyCreditorFinancialAccount><ram:IBANID>de89 3704 0044 0532 0130 00</ram:IBANID></ram:PayeePartyCreditorFinancialAccount>
   </ram:SpecifiedTradeSettlementPaymentMeans>
   <ram:SpecifiedTradePaymentTerms>
    <ram:DueDateDateTime><udt:DateTimeString format="102">20260228</udt:DateTimeString></ram:DueDateDateTime>
   </ram:SpecifiedTradePaymentTerms>
   <ram:SpecifiedTradeSettlementHeaderMonetarySummation>
    <ram:TaxBasisTotalAmount> +1234.50 </ram:TaxBasisTotalAmount>
    <ram:TaxTotalAmount currencyID="EUR">234.56</ram:TaxTotalAmount>
    <ram:GrandTotalAmount>1469.06</ram:GrandTotalAmount>
   </ram:SpecifiedTradeSettlementHeaderMonetarySummation>
  </ram:ApplicableHeaderTradeSettlement>
 </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>
`

var ciiWant = Invoice{
	Syntax:   "CII",
	Profile:  "urn:cen.eu:en16931:2017",
	TypeCode: "380",
	Kind:     "invoice",
	Fields: document.Fields{
		DocumentNumber: "RE-2026-0042",
		IssueDate:      "2026-01-31",
		DueDate:        "2026-02-28",
		Currency:       "EUR",
		NetAmount:      "1234.50",
		TaxAmount:      "234.56",
		TotalAmount:    "1469.06",
		IssuerName:     "Müller GmbH",
		IssuerVATID:    "DE123456789",
		IssuerIBAN:     "DE89370400440532013000",
	},
	Language: "de",
}

// edit returns ciiDoc with old replaced by new, and fails when old is not there.
func edit(tb testing.TB, old, new string) string {
	tb.Helper()
	if !strings.Contains(ciiDoc, old) {
		tb.Fatalf("%q is not in the test invoice", old)
	}
	return strings.Replace(ciiDoc, old, new, 1)
}

func TestParseCII(t *testing.T) {
	got, err := Parse([]byte(ciiDoc))
	if err != nil {
		t.Fatal(err)
	}
	checkInvoice(t, got, ciiWant)
}

// TestParseValues: each wrong value is dropped alone, the others kept.
func TestParseValues(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		change   func(*Invoice)
	}{
		{"no such day", "20260131", "20260231", func(w *Invoice) {
			w.IssueDate, w.Warnings = "", warned(`The issue date "20260231" is not a day.`, document.IssueDate)
		}},
		{"month format", `format="102">20260131`, `format="610">202601`, func(w *Invoice) {
			w.IssueDate, w.Warnings = "", warned(`The issue date "202601" is not a day.`, document.IssueDate)
		}},
		{"week format", `format="102">20260131`, `format="616">202605`, func(w *Invoice) {
			w.IssueDate, w.Warnings = "", warned(`The issue date "202605" is not a day.`, document.IssueDate)
		}},
		{"ISO date in format 102", "20260131", "2026-01-31", func(w *Invoice) {
			w.IssueDate, w.Warnings = "", warned(`The issue date "2026-01-31" is not a day.`, document.IssueDate)
		}},
		{"date without format", `<udt:DateTimeString format="102">20260131`, `<udt:DateTimeString>20260131`, func(*Invoice) {}},
		{"amount with comma", "1469.06", "1469,06", func(w *Invoice) {
			w.TotalAmount, w.Warnings = "", warned(`The total "1469,06" is not a decimal number.`, document.TotalAmount)
		}},
		{"amount with thousands", "1469.06", "1,469.06", func(w *Invoice) {
			w.TotalAmount, w.Warnings = "", warned(`The total "1,469.06" is not a decimal number.`, document.TotalAmount)
		}},
		{"amount with a space inside", "1469.06", "1 469.06", func(w *Invoice) {
			w.TotalAmount, w.Warnings = "", warned(`The total "1 469.06" is not a decimal number.`, document.TotalAmount)
		}},
		{"amount with a currency", "1469.06", "1469.06 EUR", func(w *Invoice) {
			w.TotalAmount, w.Warnings = "", warned(`The total "1469.06 EUR" is not a decimal number.`, document.TotalAmount)
		}},
		{"amount empty", "1469.06", " ", func(w *Invoice) { w.TotalAmount = "" }},
		{"amount negative", "1469.06", "-1469.06", func(w *Invoice) {
			w.TotalAmount, w.Warnings = "-1469.06", warned("The net amount 1234.50 and the tax 234.56 do not add up to the total -1469.06.",
				document.NetAmount, document.TaxAmount, document.TotalAmount)
		}},
		{"amount no decimals", "1469.06", "1469", func(w *Invoice) {
			w.TotalAmount, w.Warnings = "1469", warned("The net amount 1234.50 and the tax 234.56 do not add up to the total 1469.",
				document.NetAmount, document.TaxAmount, document.TotalAmount)
		}},
		{"amounts that add up in other decimals", "1469.06", "1469.060", func(w *Invoice) { w.TotalAmount = "1469.060" }},
		{"amount in another currency", `currencyID="EUR">234.56`, `currencyID="USD">234.56`, func(w *Invoice) { w.TaxAmount = "" }},
		{"amount without currency", `currencyID="EUR">234.56`, `>234.56`, func(*Invoice) {}},
		{"two tax totals, the invoice currency second", `<ram:TaxTotalAmount currencyID="EUR">234.56</ram:TaxTotalAmount>`,
			`<ram:TaxTotalAmount currencyID="USD">250.00</ram:TaxTotalAmount><ram:TaxTotalAmount currencyID="EUR">234.56</ram:TaxTotalAmount>`, func(*Invoice) {}},
		{"currency lower-case", "<ram:InvoiceCurrencyCode>EUR", "<ram:InvoiceCurrencyCode>eur", func(*Invoice) {}},
		{"currency not a code", "<ram:InvoiceCurrencyCode>EUR", "<ram:InvoiceCurrencyCode>€", func(w *Invoice) {
			w.Currency, w.Warnings = "", warned(`The currency "€" is not an ISO 4217 code.`, document.Currency)
		}},
		{"IBAN with a wrong check", "de89 3704", "de88 3704", func(w *Invoice) {
			w.IssuerIBAN = "DE88370400440532013000"
			w.Warnings = warned("The IBAN DE88370400440532013000 fails its check digits: a digit is wrong or missing.", document.IssuerIBAN)
		}},
		{"VAT id only as a tax number", `schemeID="VA">de 123 456 789`, `schemeID="XX">de 123 456 789`, func(w *Invoice) { w.IssuerVATID = "" }},
		{"VAT id not an id", "de 123 456 789", "201/113/40209", func(w *Invoice) {
			w.IssuerVATID = "201/113/40209"
			w.Warnings = warned("The seller's VAT id 201/113/40209 does not have the shape of a VAT id of its country.", document.IssuerVATID)
		}},
		{"VAT id of the wrong shape", "de 123 456 789", "DE 0815", func(w *Invoice) {
			w.IssuerVATID = "DE0815"
			w.Warnings = warned("The seller's VAT id DE0815 does not have the shape of a VAT id of its country.", document.IssuerVATID)
		}},
		{"type code credit note", "<ram:TypeCode>380", "<ram:TypeCode>381", func(w *Invoice) { w.TypeCode, w.Kind = "381", "credit_note" }},
		{"type code self-billed", "<ram:TypeCode>380", "<ram:TypeCode>389", func(w *Invoice) { w.TypeCode = "389" }},
		{"type code corrected", "<ram:TypeCode>380", "<ram:TypeCode>384", func(w *Invoice) { w.TypeCode = "384" }},
		{"type code not a code", "<ram:TypeCode>380", "<ram:TypeCode>Rechnung", func(w *Invoice) { w.TypeCode = "" }},
		{"language not a code", "de-DE", "Deutsch", func(w *Invoice) { w.Language = "" }},
		{"number with spaces", "<ram:ID>RE-2026-0042", "<ram:ID>  RE-2026-0042\n", func(*Invoice) {}},
		{"text in CDATA and entities", "<ram:ID>RE-2026-0042", "<ram:ID><![CDATA[RE-2026]]>&#45;0042", func(*Invoice) {}},
		{"element of another vocabulary", "<ram:ID>RE-2026-0042</ram:ID>",
			`<x:ID xmlns:x="urn:example">X-1</x:ID><ram:ID>RE-2026-0042</ram:ID>`, func(*Invoice) {}},
		{"term inside an element of another vocabulary", "<rsm:ExchangedDocument>",
			`<x:Wrap xmlns:x="urn:example"><ram:ID>X-1</ram:ID></x:Wrap><rsm:ExchangedDocument>`, func(*Invoice) {}},
		{"element without namespace", "<ram:ID>RE-2026-0042</ram:ID>", "<ID>X-1</ID>", func(w *Invoice) { w.DocumentNumber = "" }},
		{"text too long", "<ram:ID>RE-2026-0042", "<ram:ID>" + strings.Repeat("9", maxText+1), func(w *Invoice) { w.DocumentNumber = "" }},
		{"first value wins", "<ram:ID>RE-2026-0042</ram:ID>", "<ram:ID>RE-2026-0042</ram:ID><ram:ID>RE-2026-0043</ram:ID>", func(*Invoice) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(edit(t, tt.old, tt.new)))
			if err != nil {
				t.Fatal(err)
			}
			want := ciiWant
			tt.change(&want)
			checkInvoice(t, got, want)
		})
	}
}

func TestParseEncodings(t *testing.T) {
	t.Run("byte order mark", func(t *testing.T) {
		got, err := Parse(append([]byte{0xEF, 0xBB, 0xBF}, ciiDoc...))
		if err != nil {
			t.Fatal(err)
		}
		checkInvoice(t, got, ciiWant)
	})
	t.Run("ISO-8859-1", func(t *testing.T) {
		doc := strings.Replace(edit(t, "UTF-8", "ISO-8859-1"), "Müller", "M\xfcller", 1)
		got, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		checkInvoice(t, got, ciiWant)
	})
	t.Run("other encodings are refused", func(t *testing.T) {
		_, err := Parse([]byte(edit(t, "UTF-8", "Shift_JIS")))
		checkRefused(t, err, "Shift_JIS")
	})
	t.Run("UTF-16 is refused", func(t *testing.T) {
		_, err := Parse([]byte{0xFF, 0xFE, '<', 0})
		checkRefused(t, err, "UTF-16")
	})
}

// TestParseRefuses: what is not an e-invoice, or is hostile, gives an
// *Error and no fields.
func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, doc, reason string
	}{
		{"empty", "", "no XML element"},
		{"not XML", "%PDF-1.7\n", "no XML element"},
		{"text", "Rechnung Nr. 42", "no XML element"},
		{"JSON", `{"invoice": 1}`, "no XML element"},
		{"broken tag", "<rsm:CrossIndustryInvoice", "ends before its root"},
		{"unclosed comment", "<!-- x", "ends before its root"},
		{"bad tag", "<1abc/>", "not well-formed"},
		{"other XML", `<?xml version="1.0"?><html><body>Invoice</body></html>`, "<html> is not an e-invoice"},
		{"Invoice without namespace", `<Invoice><ID>1</ID></Invoice>`, "<Invoice> is not an e-invoice"},
		{"Invoice in another namespace", `<Invoice xmlns="urn:example:invoice"><ID>1</ID></Invoice>`, `"urn:example:invoice"`},
		{"CII root in the UBL namespace", `<CrossIndustryInvoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`, "not an e-invoice"},
		{"UBL CreditNote in the Invoice namespace", `<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`, "not an e-invoice"},
		{"DOCTYPE", `<!DOCTYPE rsm:CrossIndustryInvoice>` + ciiDoc[strings.Index(ciiDoc, "<rsm:"):], "DOCTYPE"},
		{"billion laughs", `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&lol9;</ID></Invoice>`, "DOCTYPE"},
		{"external entity", `<?xml version="1.0"?>
<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&xxe;</ID></Invoice>`, "DOCTYPE"},
		{"external DTD", `<?xml version="1.0"?>
<!DOCTYPE Invoice SYSTEM "http://127.0.0.1:1/invoice.dtd">
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</ID></Invoice>`, "DOCTYPE"},
		{"DOCTYPE inside the root", `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><!DOCTYPE x><ID>1</ID></Invoice>`, "DOCTYPE"},
		{"too deep", `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">` +
			strings.Repeat("<a>", MaxDepth) + strings.Repeat("</a>", MaxDepth) + `</Invoice>`, "deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.doc))
			if got != nil {
				t.Errorf("got %+v, want no invoice", got)
			}
			checkRefused(t, err, tt.reason)
		})
	}
}

func TestParseRefusesHuge(t *testing.T) {
	doc := make([]byte, MaxSize+1)
	copy(doc, ciiDoc)
	_, err := Parse(doc)
	checkRefused(t, err, "over the")
}

// TestParseRefusesManyTokens: a document under MaxSize can still hold more
// tokens than an invoice; it is refused rather than read on.
func TestParseRefusesManyTokens(t *testing.T) {
	doc := `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">` +
		strings.Repeat("<a/>", 100) + `</Invoice>`
	if _, err := parse([]byte(doc), 300); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
	_, err := parse([]byte(doc), 200)
	checkRefused(t, err, "more than 200 tokens")
}

func checkRefused(t *testing.T, err error, reason string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v, want an *Error", err)
	}
	if !strings.Contains(e.Reason, reason) {
		t.Errorf("got reason %q, want it to say %q", e.Reason, reason)
	}
}

// TestParsePartial: XML that breaks after the root was recognised gives
// what it held before the break.
func TestParsePartial(t *testing.T) {
	cut := strings.Index(ciiDoc, "<ram:SpecifiedTradeSettlementHeaderMonetarySummation>")
	headerOnly := ciiWant
	headerOnly.NetAmount, headerOnly.TaxAmount, headerOnly.TotalAmount = "", "", ""
	tests := []struct {
		name   string
		doc    string
		want   Invoice
		reason string
	}{
		{"truncated", ciiDoc[:cut], headerOnly, "ends before"},
		{"truncated inside a value", ciiDoc[:strings.Index(ciiDoc, "1469.06")+3], func() Invoice {
			w := ciiWant
			w.TotalAmount = ""
			return w
		}(), "ends before"},
		{"broken after the header", ciiDoc[:cut] + "<ram:Oops></ram:Wrong>" + ciiDoc[cut:], headerOnly, "not well-formed"},
		{"unknown entity", ciiDoc[:cut] + "&nbsp;" + ciiDoc[cut:], headerOnly, "not well-formed"},
		{"root only", `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2">`,
			Invoice{Syntax: "UBL", Kind: "invoice"}, "ends before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Partial || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("got Partial %v, Reason %q, want Partial and a reason saying %q", got.Partial, got.Reason, tt.reason)
			}
			got.Partial, got.Reason = false, ""
			checkInvoice(t, got, tt.want)
		})
	}
}

// TestParseMissingTotals: a valid document without some terms gives the
// others.
func TestParseMissingTotals(t *testing.T) {
	start := strings.Index(ciiDoc, "<ram:SpecifiedTradeSettlementHeaderMonetarySummation>")
	end := strings.Index(ciiDoc, "</ram:SpecifiedTradeSettlementHeaderMonetarySummation>") + len("</ram:SpecifiedTradeSettlementHeaderMonetarySummation>")
	got, err := Parse([]byte(ciiDoc[:start] + ciiDoc[end:]))
	if err != nil {
		t.Fatal(err)
	}
	want := ciiWant
	want.NetAmount, want.TaxAmount, want.TotalAmount = "", "", ""
	checkInvoice(t, got, want)
}

const ublDoc = `<?xml version="1.0" encoding="UTF-8"?>
<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
 xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2">
 <ext:UBLExtensions><ext:UBLExtension><ext:ExtensionContent><cbc:ID>EXT-1</cbc:ID></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>
 <cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>
 <cbc:ID>GS-7</cbc:ID>
 <cbc:IssueDate>2026-03-01+01:00</cbc:IssueDate>
 <cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>
 <cbc:DocumentCurrencyCode>CHF</cbc:DocumentCurrencyCode>
 <cac:AccountingSupplierParty><cac:Party>
  <cac:PartyName><cbc:Name>Laden</cbc:Name></cac:PartyName>
  <cac:PartyTaxScheme><cbc:CompanyID>CHE-123.456.789</cbc:CompanyID><cac:TaxScheme><cbc:ID>FC</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
  <cac:PartyTaxScheme><cbc:CompanyID>ATU12345678</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
 </cac:Party></cac:AccountingSupplierParty>
 <cac:AccountingCustomerParty><cac:Party>
  <cac:PartyLegalEntity><cbc:RegistrationName>Buyer AG</cbc:RegistrationName></cac:PartyLegalEntity>
  <cac:PartyTaxScheme><cbc:CompanyID>DE999999999</cbc:CompanyID><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:PartyTaxScheme>
 </cac:Party></cac:AccountingCustomerParty>
 <cac:PaymentMeans>
  <cbc:PaymentMeansCode>30</cbc:PaymentMeansCode>
  <cbc:PaymentDueDate>2026-03-31</cbc:PaymentDueDate>
  <cac:PayeeFinancialAccount><cbc:ID>12345678</cbc:ID></cac:PayeeFinancialAccount>
 </cac:PaymentMeans>
 <cac:PaymentMeans>
  <cbc:PaymentMeansCode>58</cbc:PaymentMeansCode>
  <cac:PayeeFinancialAccount><cbc:ID>CH93 0076 2011 6238 5295 7</cbc:ID></cac:PayeeFinancialAccount>
 </cac:PaymentMeans>
 <cac:TaxTotal><cbc:TaxAmount currencyID="EUR">8.10</cbc:TaxAmount></cac:TaxTotal>
 <cac:TaxTotal><cbc:TaxAmount currencyID="CHF">7.70</cbc:TaxAmount><cac:TaxSubtotal><cbc:TaxAmount currencyID="CHF">1.00</cbc:TaxAmount></cac:TaxSubtotal></cac:TaxTotal>
 <cac:LegalMonetaryTotal>
  <cbc:TaxExclusiveAmount currencyID="CHF">.5</cbc:TaxExclusiveAmount>
  <cbc:TaxInclusiveAmount currencyID="CHF">0100.</cbc:TaxInclusiveAmount>
 </cac:LegalMonetaryTotal>
</CreditNote>
`

// TestParseUBL: the fallbacks (PartyName, PaymentDueDate), the VAT scheme
// beside its id, the tax total in the document currency, the first valid
// IBAN, amounts that do not add up.
func TestParseUBL(t *testing.T) {
	got, err := Parse([]byte(ublDoc))
	if err != nil {
		t.Fatal(err)
	}
	checkInvoice(t, got, Invoice{
		Syntax:   "UBL",
		Profile:  "urn:cen.eu:en16931:2017",
		TypeCode: "381",
		Kind:     "credit_note",
		Fields: document.Fields{
			DocumentNumber: "GS-7",
			IssueDate:      "2026-03-01",
			DueDate:        "2026-03-31",
			Currency:       "CHF",
			NetAmount:      "0.5",
			TaxAmount:      "7.70",
			TotalAmount:    "100",
			IssuerName:     "Laden",
			IssuerVATID:    "ATU12345678",
			IssuerIBAN:     "CH9300762011623852957",
		},
		BuyerName:  "Buyer AG",
		BuyerVATID: "DE999999999",
		Warnings: warned("The net amount 0.5 and the tax 7.70 do not add up to the total 100.",
			document.NetAmount, document.TaxAmount, document.TotalAmount),
	})
}

// TestParsePayeeAccount: BT-84 is reported as written in each syntax, the
// spaces removed and upper-cased, and flagged when it cannot be an IBAN.
func TestParsePayeeAccount(t *testing.T) {
	zugferd1 := func(account string) string {
		return `<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"
 xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12">
 <rsm:SpecifiedSupplyChainTradeTransaction><ram:ApplicableSupplyChainTradeSettlement>
  <ram:SpecifiedTradeSettlementPaymentMeans><ram:PayeePartyCreditorFinancialAccount><ram:IBANID>` + account +
			`</ram:IBANID></ram:PayeePartyCreditorFinancialAccount></ram:SpecifiedTradeSettlementPaymentMeans>
 </ram:ApplicableSupplyChainTradeSettlement></rsm:SpecifiedSupplyChainTradeTransaction>
</rsm:CrossIndustryDocument>`
	}
	ubl := func(account string) string {
		return `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
 <cac:PaymentMeans><cac:PayeeFinancialAccount><cbc:ID>` + account + `</cbc:ID></cac:PayeeFinancialAccount></cac:PaymentMeans>
</Invoice>`
	}
	tests := []struct {
		name, doc, iban, warning string
	}{
		{"ZUGFeRD 1, valid", zugferd1("de89 3704 0044 0532 0130 00"), "DE89370400440532013000", ""},
		{"ZUGFeRD 1, a digit wrong", zugferd1("DE89 3704 0044 0532 0130 01"), "DE89370400440532013001",
			"The IBAN DE89370400440532013001 fails its check digits: a digit is wrong or missing."},
		{"UBL, valid", ubl("GB82 WEST 1234 5698 7654 32"), "GB82WEST12345698765432", ""},
		{"UBL, a digit missing", ubl("GB82 WEST 1234 5698 7654 3"), "GB82WEST1234569876543",
			"The IBAN GB82WEST1234569876543 fails its check digits: a digit is wrong or missing."},
		{"UBL, a domestic account", ubl("1234 5678"), "12345678", "The payment account 12345678 is not an IBAN."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			var want []Warning
			if tt.warning != "" {
				want = warned(tt.warning, document.IssuerIBAN)
			}
			if got.IssuerIBAN != tt.iban || !reflect.DeepEqual(got.Warnings, want) {
				t.Errorf("got %q %v, want %q %v", got.IssuerIBAN, got.Warnings, tt.iban, want)
			}
		})
	}
}

func TestParseZUGFeRD1Language(t *testing.T) {
	doc := `<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"
 xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12">
 <rsm:HeaderExchangedDocument><ram:ID>1</ram:ID><ram:LanguageID>EN</ram:LanguageID></rsm:HeaderExchangedDocument>
</rsm:CrossIndustryDocument>`
	got, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	checkInvoice(t, got, Invoice{Syntax: "CII", Kind: "invoice", Fields: document.Fields{DocumentNumber: "1"}, Language: "en"})
}

func TestDecimal(t *testing.T) {
	tests := map[string]string{
		"1234.50": "1234.50", " 1234.50\n": "1234.50", "+1234.50": "1234.50", "-0.00": "0.00",
		"-12": "-12", "007.10": "7.10", ".5": "0.5", "5.": "5", "0": "0",
		"": "", ".": "", "+": "", "-": "", "1.2.3": "", "1e3": "", "1,5": "", "++1": "", "+-1": "", "١٢": "",
	}
	for in, want := range tests {
		if got := decimal(in); got != want {
			t.Errorf("decimal(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestDates(t *testing.T) {
	ciiDates := map[[2]string]string{
		{"20240229", "102"}: "2024-02-29", {"20230229", "102"}: "", {"20241301", "102"}: "",
		{"20240101", ""}: "2024-01-01", {"18991231", "102"}: "", {"2024011", "102"}: "", {"2024-01-01", "102"}: "",
		{"202401", "610"}: "", {"202401", "616"}: "", {"20240101", "203"}: "",
	}
	for in, want := range ciiDates {
		if got := ciiDate(in[0], in[1]); got != want {
			t.Errorf("ciiDate(%q, %q): got %q, want %q", in[0], in[1], got, want)
		}
	}
	iso := map[string]string{
		"2024-02-29": "2024-02-29", "2024-02-29Z": "2024-02-29", "2024-02-29+02:00": "2024-02-29", " 2024-02-29 ": "2024-02-29",
		"2024-02-30": "", "2024-02-29T10:00:00": "", "29.02.2024": "", "20240229": "", "": "",
	}
	for in, want := range iso {
		if got := isoDate(in); got != want {
			t.Errorf("isoDate(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestIBANAndVATID(t *testing.T) {
	// in: written, shaped, its check digits hold
	ibans := map[string]struct {
		written       string
		shaped, check bool
	}{
		"DE89 3704 0044 0532 0130 00": {"DE89370400440532013000", true, true},
		"de89370400440532013000":      {"DE89370400440532013000", true, true},
		"DE88370400440532013000":      {"DE88370400440532013000", true, false},
		"DE8576040061XXXXXXXXXX":      {"DE8576040061XXXXXXXXXX", true, false},
		"DE8937040044053201300-":      {"DE8937040044053201300-", false, false},
		"1234567890":                  {"1234567890", false, false},
		"A":                           {"A", false, false},
	}
	for in, want := range ibans {
		got := written(in)
		shaped := ibanShaped(got)
		if got != want.written || shaped != want.shaped || shaped && ibanChecks(got) != want.check {
			t.Errorf("IBAN %q: got %q shaped %v, want %+v", in, got, shaped, want)
		}
	}
	vats := map[string]bool{
		"DE123456789": true, "EL123456789": true, "ATU12345678": true, "FR40303265045": true, "NL123456789B01": true,
		"GB123456789": true, "CHE123456789MWST": true, "XX1234": true,
		"DE0815": false, "DE1234567890": false, "ATU1234567": false, "NL123456789": false, "DE": false, "123456789": false,
		"DE-123": false, "201/113/40209": false,
	}
	for in, want := range vats {
		if got := vatIDShaped(written(in)); got != want {
			t.Errorf("vatIDShaped(%q): got %v, want %v", in, got, want)
		}
	}
}

func TestIsEInvoiceAttachment(t *testing.T) {
	tests := map[string]bool{
		"factur-x.xml": true, "FACTUR-X.XML": true, "zugferd-invoice.xml": true, "ZUGFeRD-invoice.xml": true,
		"xrechnung.xml": true, "attachments/factur-x.xml": true, `C:\x\xrechnung.xml`: true,
		"invoice.xml": false, "factur-x.pdf": false, "my-factur-x.xml": false, "": false,
		" ZUGFeRD-invoice.xml ": true, "XRechnung.XML": true,
	}
	for name, want := range tests {
		if got := IsEInvoiceAttachment(name); got != want {
			t.Errorf("IsEInvoiceAttachment(%q): got %v, want %v", name, got, want)
		}
	}
}

func TestIsXMLAttachment(t *testing.T) {
	for _, c := range []struct {
		name, mime, data string
		want             bool
	}{
		{"Rechnung 17.XML", "", "", true},
		{"invoice", "text/xml", "", true},
		{"invoice", "application/xml", "", true},
		{"invoice.bin", "application/vnd.oasis.ubl+xml", "", true},
		{"invoice", "application/octet-stream", "\xEF\xBB\xBF \n<?xml version=\"1.0\"?><a/>", true},
		{"logo.png", "image/png", "\x89PNG", false},
		{"notes.txt", "text/plain", "plain <b>text</b>", false},
	} {
		if got := IsXMLAttachment(c.name, c.mime, []byte(c.data)); got != c.want {
			t.Errorf("IsXMLAttachment(%q, %q, %.20q): got %v, want %v", c.name, c.mime, c.data, got, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.xml")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(ciiDoc))
	f.Add([]byte(ublDoc))
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := Parse(data)
		if (inv == nil) == (err == nil) {
			t.Fatalf("got invoice %v and error %v, want exactly one", inv, err)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" {
				t.Fatalf("got error %v, want an *Error with a reason", err)
			}
			return
		}
		if inv.Syntax != SyntaxCII && inv.Syntax != SyntaxUBL || inv.Kind != document.Invoice && inv.Kind != document.CreditNote {
			t.Fatalf("got syntax %q, kind %q", inv.Syntax, inv.Kind)
		}
		for _, v := range []string{inv.NetAmount, inv.TaxAmount, inv.TotalAmount} {
			if v != "" && decimal(v) != v {
				t.Fatalf("amount %q is not normalised", v)
			}
		}
		for _, v := range []string{inv.IssueDate, inv.DueDate} {
			if v != "" && isoDate(v) != v {
				t.Fatalf("date %q is not a day", v)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"xrechnung-cii-01.01a.xml", "xrechnung-ubl-01.01a.xml", "zugferd21-extended.xml"} {
		data := mustRead(b, name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestParsePaymentTerms: the buyer and the discount for early payment, in
// CII's discount terms, in XRechnung's #SKONTO# line, and in UBL's payment
// terms.
func TestParsePaymentTerms(t *testing.T) {
	cii := func(terms string) string {
		return `<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
 xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
 xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">
 <rsm:ExchangedDocument><ram:ID>AR-12</ram:ID><ram:IssueDateTime><udt:DateTimeString format="102">20260301</udt:DateTimeString></ram:IssueDateTime></rsm:ExchangedDocument>
 <rsm:SupplyChainTradeTransaction>
  <ram:ApplicableHeaderTradeAgreement>
   <ram:BuyerTradeParty><ram:Name>Hotel Adler GmbH</ram:Name><ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE 811 223 344</ram:ID></ram:SpecifiedTaxRegistration></ram:BuyerTradeParty>
  </ram:ApplicableHeaderTradeAgreement>
  <ram:ApplicableHeaderTradeSettlement>
   <ram:SpecifiedTradeSettlementPaymentMeans><ram:PayerPartyDebtorFinancialAccount><ram:IBANID>DE02 1001 0010 0000 1112 22</ram:IBANID></ram:PayerPartyDebtorFinancialAccount></ram:SpecifiedTradeSettlementPaymentMeans>
   <ram:SpecifiedTradePaymentTerms>` + terms + `</ram:SpecifiedTradePaymentTerms>
  </ram:ApplicableHeaderTradeSettlement>
 </rsm:SupplyChainTradeTransaction>
</rsm:CrossIndustryInvoice>`
	}
	ubl := `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
 <cbc:ID>AR-13</cbc:ID><cbc:IssueDate>2026-03-01</cbc:IssueDate>
 <cac:PaymentTerms><cbc:SettlementDiscountPercent>3</cbc:SettlementDiscountPercent><cac:SettlementPeriod><cbc:EndDate>2026-03-08</cbc:EndDate></cac:SettlementPeriod></cac:PaymentTerms>
</Invoice>`
	for _, tc := range []struct {
		name, xml                                string
		percent, amount, until, buyer, vat, iban string
	}{
		{"CII discount terms in days", cii(`<ram:ApplicableTradePaymentDiscountTerms><ram:BasisPeriodMeasure unitCode="DAY">14</ram:BasisPeriodMeasure><ram:CalculationPercent>2.00</ram:CalculationPercent></ram:ApplicableTradePaymentDiscountTerms>`),
			"2.00", "", "2026-03-15", "Hotel Adler GmbH", "DE811223344", "DE02100100100000111222"},
		{"CII discount amount by a date", cii(`<ram:ApplicableTradePaymentDiscountTerms><ram:BasisDateTime><udt:DateTimeString format="102">20260310</udt:DateTimeString></ram:BasisDateTime><ram:ActualDiscountAmount>12.85</ram:ActualDiscountAmount></ram:ApplicableTradePaymentDiscountTerms>`),
			"", "12.85", "2026-03-10", "Hotel Adler GmbH", "DE811223344", "DE02100100100000111222"},
		{"XRechnung's Skonto line", cii(`<ram:Description>#SKONTO#TAGE=7#PROZENT=3.00#
</ram:Description>`), "3.00", "", "2026-03-08", "Hotel Adler GmbH", "DE811223344", "DE02100100100000111222"},
		{"no discount", cii(`<ram:Description>Zahlbar innerhalb 30 Tagen</ram:Description>`), "", "", "", "Hotel Adler GmbH", "DE811223344", "DE02100100100000111222"},
		{"UBL payment terms", ubl, "3", "", "2026-03-08", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.xml))
			if err != nil {
				t.Fatal(err)
			}
			if got.DiscountPercent != tc.percent || got.DiscountAmount != tc.amount || got.DiscountDueDate != tc.until {
				t.Errorf("discount: got %q %q by %q, want %q %q by %q", got.DiscountPercent, got.DiscountAmount, got.DiscountDueDate, tc.percent, tc.amount, tc.until)
			}
			if got.BuyerName != tc.buyer || got.BuyerVATID != tc.vat || got.BuyerIBAN != tc.iban {
				t.Errorf("buyer: got %q %q %q, want %q %q %q", got.BuyerName, got.BuyerVATID, got.BuyerIBAN, tc.buyer, tc.vat, tc.iban)
			}
		})
	}
}
