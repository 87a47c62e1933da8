package docread_test

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"strings"
)

// pdfBuilder writes small PDFs by hand, with a correct cross-reference
// table unless told otherwise.
type pdfBuilder struct {
	objects []string // object n+1's body
}

func (b *pdfBuilder) add(body string) int {
	b.objects = append(b.objects, body)
	return len(b.objects)
}

// set replaces object n's body, for objects that point to later ones.
func (b *pdfBuilder) set(n int, body string) { b.objects[n-1] = body }

func stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

func deflate(data []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// zeros is n zero bytes (a multiple of 1 MiB) in a zlib stream, made by
// repeating one flushed block: compressing a GiB takes long under the race
// detector.
func zeros(n int) []byte {
	var block bytes.Buffer
	w, _ := flate.NewWriter(&block, flate.BestSpeed)
	w.Write(make([]byte, 1<<20))
	w.Flush()
	out := append([]byte{0x78, 0x01}, bytes.Repeat(block.Bytes(), n>>20)...)
	// An empty final block, then the Adler-32 of n zeros.
	out = append(out, 0x03, 0x00)
	return binary.BigEndian.AppendUint32(out, uint32(n%65521)<<16|1)
}

// bytes writes the file; root is the catalog's object number.
func (b *pdfBuilder) bytes(root int) []byte {
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

// textPDF has one page per text, each drawn in Helvetica.
func textPDF(texts ...string) []byte {
	var b pdfBuilder
	catalog := b.add("")
	pages := b.add("")
	font := b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	var kids []string
	for _, t := range texts {
		content := b.add(stream("", []byte("BT /F1 12 Tf 72 720 Td ("+t+") Tj ET")))
		kids = append(kids, fmt.Sprintf("%d 0 R", b.add(fmt.Sprintf(
			"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			pages, font, content))))
	}
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	return b.bytes(catalog)
}

// pagesPDF has n pages that share one content stream.
func pagesPDF(n int) []byte {
	var b pdfBuilder
	catalog := b.add("")
	pages := b.add("")
	font := b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	content := b.add(stream("", []byte("BT /F1 12 Tf 72 720 Td (Page) Tj ET")))
	kids := make([]string, n)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", b.add(fmt.Sprintf(
			"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			pages, font, content)))
	}
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	return b.bytes(catalog)
}

// contentPDF has one page whose content stream is given, compressed.
func contentPDF(content []byte) []byte {
	return deflatedContentPDF(deflate(content))
}

// deflatedContentPDF has one page whose content stream is given deflated.
func deflatedContentPDF(content []byte) []byte {
	var b pdfBuilder
	catalog := b.add("")
	pages := b.add("")
	font := b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	c := b.add(stream("/Filter /FlateDecode", content))
	page := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pages, font, c))
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	return b.bytes(catalog)
}

// attachmentPDF has one page and one embedded file, its stream compressed.
func attachmentPDF(name string, data []byte) []byte {
	return deflatedAttachmentPDF(name, deflate(data))
}

// deflatedAttachmentPDF has one page and one embedded file given deflated.
func deflatedAttachmentPDF(name string, data []byte) []byte {
	var b pdfBuilder
	catalog := b.add("")
	pages := b.add("")
	font := b.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	c := b.add(stream("", []byte("BT /F1 12 Tf 72 720 Td (Invoice) Tj ET")))
	page := b.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pages, font, c))
	file := b.add(stream("/Type /EmbeddedFile /Subtype /text#2Fxml /Filter /FlateDecode", data))
	spec := b.add(fmt.Sprintf("<< /Type /Filespec /F (%s) /UF (%s) /EF << /F %d 0 R /UF %d 0 R >> >>", name, name, file, file))
	b.set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R /Names << /EmbeddedFiles << /Names [(%s) %d 0 R] >> >> >>", pages, name, spec))
	b.set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	return b.bytes(catalog)
}

// loopPDF has a page tree whose Kids point back to itself.
func loopPDF() []byte {
	var b pdfBuilder
	catalog := b.add("<< /Type /Catalog /Pages 2 0 R >>")
	b.add("<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1000000 >>")
	b.add("<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 1000000 >>")
	return b.bytes(catalog)
}
