package datev

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"
)

// Archive writes the ZIP DATEV imports, in the order it streams: the
// Buchungsstapel's rows, then document.xml, then each document's file.
// Nothing is held but the entry being written.
type Archive struct {
	zw      *zip.Writer
	created time.Time
	csv     io.Writer
	buf     []byte
	rows    int
}

// NewArchive starts an archive on w, created at the given time (the
// entries' modification time and the header's creation time).
func NewArchive(w io.Writer, created time.Time) *Archive {
	return &Archive{zw: zip.NewWriter(w), created: created}
}

// CSVName is the name of the Buchungsstapel in the archive.
func CSVName(from, to time.Time) string {
	return fmt.Sprintf("EXTF_Buchungsstapel_%s_%s.csv", from.Format("20060102"), to.Format("20060102"))
}

// Begin writes the Buchungsstapel's header and headings; Book then adds
// its rows.
func (a *Archive) Begin(h Header) error {
	h.Created = a.created
	w, err := a.zw.CreateHeader(&zip.FileHeader{Name: CSVName(h.From, h.To), Method: zip.Deflate, Modified: a.created})
	if err != nil {
		return fmt.Errorf("datev: begin the batch: %w", err)
	}
	a.csv = w
	a.buf = line(line(a.buf[:0], h.fields()), Headings)
	_, err = w.Write(a.buf)
	return err
}

// ErrRow refuses a row that the format does not allow; the caller skips
// its document instead of writing it.
var ErrRow = errors.New("datev: the row does not fit the format")

// Book writes one row; a row with an amount not above 0, no account or no
// GUID is refused with ErrRow.
func (a *Archive) Book(r Row) error {
	if a.csv == nil {
		return errors.New("datev: Book before Begin")
	}
	if r.Amount <= 0 || r.Account == "" || r.ContraAccount == "" || r.GUID == "" || len(r.TaxKey) > 4 {
		return ErrRow
	}
	a.buf = line(a.buf[:0], r.fields())
	a.rows++
	_, err := a.csv.Write(a.buf)
	return err
}

// Rows says how many rows Book wrote.
func (a *Archive) Rows() int { return a.rows }

// Document is one file of the archive as document.xml names it.
type Document struct {
	GUID string
	// Name is the file's name in the archive.
	Name string
	// Issued says the firm's client issued the document (an outgoing
	// invoice); else it received it.
	Issued bool
}

// Namespace is document.xml's namespace, version 6.0.
const Namespace = "http://xml.datev.de/bedi/tps/document/v06.0"

// Documents writes document.xml naming each document's file; call it
// after the last Book and before the files. At most MaxDocuments.
func (a *Archive) Documents(docs []Document) error {
	if len(docs) > MaxDocuments {
		return fmt.Errorf("datev: %d documents, over the %d one document.xml may name", len(docs), MaxDocuments)
	}
	w, err := a.zw.CreateHeader(&zip.FileHeader{Name: "document.xml", Method: zip.Deflate, Modified: a.created})
	if err != nil {
		return fmt.Errorf("datev: document.xml: %w", err)
	}
	x := archiveXML{XMLNS: Namespace, XSI: xsi, Schema: Namespace + " Document_v060.xsd", Version: "6.0",
		System: "acctapi", Date: a.created.UTC().Format("2006-01-02T15:04:05")}
	for _, d := range docs {
		typ := 1
		if d.Issued {
			typ = 2
		}
		x.Documents = append(x.Documents, documentXML{GUID: d.GUID, ProcessID: 1, Type: typ,
			Extension: extensionXML{Type: "File", Name: d.Name}})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(x); err != nil {
		return fmt.Errorf("datev: document.xml: %w", err)
	}
	return enc.Close()
}

// File starts the named file's entry; write its bytes to the writer
// returned before the next call.
func (a *Archive) File(name string) (io.Writer, error) {
	return a.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: a.created})
}

// Close ends the ZIP; it does not close the underlying writer.
func (a *Archive) Close() error { return a.zw.Close() }

const xsi = "http://www.w3.org/2001/XMLSchema-instance"

type archiveXML struct {
	XMLName   xml.Name      `xml:"archive"`
	XMLNS     string        `xml:"xmlns,attr"`
	XSI       string        `xml:"xmlns:xsi,attr"`
	Schema    string        `xml:"xsi:schemaLocation,attr"`
	Version   string        `xml:"version,attr"`
	System    string        `xml:"generatingSystem,attr"`
	Date      string        `xml:"header>date"`
	Documents []documentXML `xml:"content>document"`
}

type documentXML struct {
	GUID      string       `xml:"guid,attr"`
	ProcessID int          `xml:"processID,attr"`
	Type      int          `xml:"type,attr"`
	Extension extensionXML `xml:"extension"`
}

type extensionXML struct {
	Type string `xml:"xsi:type,attr"`
	Name string `xml:"name,attr"`
}
