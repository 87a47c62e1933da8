// Package pdftest writes small PDFs by hand for tests: text documents laid
// out line by line, and any objects a test needs to build a broken or
// hostile file.
package pdftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/encoding/charmap"
)

// Builder collects a PDF's objects and writes the file, with a correct
// cross-reference table.
type Builder struct {
	objects []string // object n+1's body
}

// Add adds an object and returns its number.
func (b *Builder) Add(body string) int {
	b.objects = append(b.objects, body)
	return len(b.objects)
}

// Set replaces object n's body, for objects that point to later ones.
func (b *Builder) Set(n int, body string) { b.objects[n-1] = body }

// Stream is a stream object's body with the dictionary entries dict.
func Stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// Bytes writes the file; root is the catalog's object number.
func (b *Builder) Bytes(root int) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(b.objects))
	for i, body := range b.objects {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, body)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(b.objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(b.objects)+1, root, xref)
	return out.Bytes()
}

// Document is an A4 PDF with a text layer: each page's lines in Courier
// (9 pt, WinAnsi, so umlauts and € are kept), one under the other, so that
// columns made of spaces stay columns.
func Document(pages ...[]string) []byte {
	var b Builder
	catalog := b.Add("")
	tree := b.addTextPages(pages)
	b.Set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	return b.Bytes(catalog)
}

// addTextPages adds the page tree of Document's pages and returns its
// number.
func (b *Builder) addTextPages(pages [][]string) int {
	tree := b.Add("")
	font := b.addFont()
	var kids []string
	for _, lines := range pages {
		kids = append(kids, b.addTextPage(tree, font, lines))
	}
	b.setKids(tree, kids)
	return tree
}

// addFont adds the text pages' font and returns its number.
func (b *Builder) addFont() int {
	return b.Add("<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>")
}

// addTextPage adds a page of lines under tree and returns its reference.
func (b *Builder) addTextPage(tree, font int, lines []string) string {
	var content bytes.Buffer
	content.WriteString("BT /F1 9 Tf 10 TL 36 806 Td\n")
	for _, line := range lines {
		content.WriteString("(")
		content.Write(escape(line))
		content.WriteString(") Tj T*\n")
	}
	content.WriteString("ET")
	body := b.Add(Stream("", content.Bytes()))
	return fmt.Sprintf("%d 0 R", b.Add(fmt.Sprintf(
		"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
		tree, font, body)))
}

// setKids fills in the page tree with its pages.
func (b *Builder) setKids(tree int, kids []string) {
	b.Set(tree, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
}

// Carrier is a way a PDF carries an embedded file.
type Carrier int

// The carriers of an embedded file.
const (
	// NameTree lists the file in the catalog's EmbeddedFiles name tree.
	NameTree Carrier = iota
	// NameTreeKids lists it in a leaf under the name tree's /Kids.
	NameTreeKids
	// Annotation gives it to a FileAttachment annotation of the first page.
	Annotation
	// AssociatedFiles names it only in the catalog's /AF array (PDF/A-3's
	// associated files), as no other carrier does.
	AssociatedFiles
	// PageAssociatedFiles names it only in the first page's /AF array.
	PageAssociatedFiles
)

// WithFile is Document's PDF of one page of lines that embeds data,
// compressed, as the file name, carried by c. The file specification
// names it by /F and /UF, and its stream's length is an indirect object.
func WithFile(lines []string, name string, data []byte, c Carrier) []byte {
	var b Builder
	catalog := b.Add("")
	tree := b.addTextPages([][]string{lines})
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	w.Close()
	file := b.Add("")
	length := b.Add(fmt.Sprint(z.Len()))
	b.Set(file, fmt.Sprintf("<< /Type /EmbeddedFile /Subtype /text#2Fxml /Filter /FlateDecode /Params << /Size %d >> /Length %d 0 R >>\nstream\n%s\nendstream", len(data), length, z.Bytes()))
	spec := b.Add(fmt.Sprintf("<< /Type /Filespec /F (%s) /UF <%s> /AFRelationship /Alternative /EF << /F %d 0 R /UF %d 0 R >> >>", escape(name), utf16Hex(name), file, file))
	cat := fmt.Sprintf("/Type /Catalog /Pages %d 0 R", tree)
	switch c {
	case NameTree:
		cat += fmt.Sprintf(" /Names << /EmbeddedFiles << /Names [(%s) %d 0 R] >> >> /AF [%d 0 R]", escape(name), spec, spec)
	case NameTreeKids:
		leaf := b.Add(fmt.Sprintf("<< /Limits [(%s) (%s)] /Names [(%s) %d 0 R] >>", escape(name), escape(name), escape(name), spec))
		cat += fmt.Sprintf(" /Names << /EmbeddedFiles << /Kids [%d 0 R] >> >>", leaf)
	case Annotation:
		annot := b.Add(fmt.Sprintf("<< /Type /Annot /Subtype /FileAttachment /Rect [36 36 56 56] /Name /Paperclip /FS %d 0 R >>", spec))
		b.setFirstPage(tree, fmt.Sprintf("/Annots [%d 0 R]", annot))
	case AssociatedFiles:
		cat += fmt.Sprintf(" /AF [%d 0 R]", spec)
	case PageAssociatedFiles:
		b.setFirstPage(tree, fmt.Sprintf("/AF [%d 0 R]", spec))
	}
	b.Set(catalog, "<< "+cat+" >>")
	return b.Bytes(catalog)
}

// setFirstPage adds entry to the dictionary of the first page of tree.
func (b *Builder) setFirstPage(tree int, entry string) {
	var first int
	fmt.Sscanf(b.objects[tree-1], "<< /Type /Pages /Kids [%d", &first)
	page := b.objects[first-1]
	b.Set(first, strings.TrimSuffix(page, ">>")+entry+" >>")
}

// utf16Hex is s in UTF-16BE with its byte order mark, as a hex string's
// digits.
func utf16Hex(s string) string {
	out := "FEFF"
	for _, u := range utf16.Encode([]rune(s)) {
		out += fmt.Sprintf("%04X", u)
	}
	return out
}

// Scan is an A4 PDF whose pages are imgs and nothing else: no text
// layer, as a scanner makes.
func Scan(imgs ...*image.Gray) []byte {
	var b Builder
	catalog := b.Add("")
	tree := b.Add("")
	var kids []string
	for _, img := range imgs {
		kids = append(kids, b.addScanPage(tree, img))
	}
	b.Set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	b.setKids(tree, kids)
	return b.Bytes(catalog)
}

// TextAndScan is an A4 PDF whose first page is lines in a text layer and
// whose second is img alone: a letter with a scanned enclosure, whose
// second page only OCR reads.
func TextAndScan(lines []string, img *image.Gray) []byte {
	var b Builder
	catalog := b.Add("")
	tree := b.Add("")
	kids := []string{b.addTextPage(tree, b.addFont(), lines), b.addScanPage(tree, img)}
	b.Set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", tree))
	b.setKids(tree, kids)
	return b.Bytes(catalog)
}

// addScanPage adds a page that is img alone under tree and returns its
// reference.
func (b *Builder) addScanPage(tree int, img *image.Gray) string {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	for y := range img.Rect.Dy() {
		w.Write(img.Pix[y*img.Stride : y*img.Stride+img.Rect.Dx()])
	}
	w.Close()
	picture := b.Add(Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode",
		img.Rect.Dx(), img.Rect.Dy()), z.Bytes()))
	content := b.Add(Stream("", []byte("q 595 0 0 842 0 0 cm /Im1 Do Q")))
	return fmt.Sprintf("%d 0 R", b.Add(fmt.Sprintf(
		"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im1 %d 0 R >> >> /Contents %d 0 R >>",
		tree, picture, content)))
}

// escape is s in WinAnsi as a PDF string's content; characters WinAnsi
// lacks become '?'.
func escape(s string) []byte {
	var out []byte
	for _, r := range s {
		c, ok := charmap.Windows1252.EncodeRune(r)
		if !ok {
			c = '?'
		}
		if c == '(' || c == ')' || c == '\\' {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	return out
}

// Paginate splits text into pages of at most perPage lines; form feeds
// start a new page too.
func Paginate(text string, perPage int) [][]string {
	var pages [][]string
	for _, page := range strings.Split(text, "\f") {
		lines := strings.Split(strings.TrimRight(page, "\n"), "\n")
		for len(lines) > perPage {
			pages = append(pages, lines[:perPage])
			lines = lines[perPage:]
		}
		pages = append(pages, lines)
	}
	return pages
}
