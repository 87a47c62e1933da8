package docread_test

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"strings"

	"acctapi/docread/pdftest"
)

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

// textPDF has one page per text, each drawn in Helvetica.
func textPDF(texts ...string) []byte {
	var b pdftest.Builder
	catalog := b.Add("")
	pages := b.Add("")
	font := b.Add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	var kids []string
	for _, t := range texts {
		content := b.Add(pdftest.Stream("", []byte("BT /F1 12 Tf 72 720 Td ("+t+") Tj ET")))
		kids = append(kids, fmt.Sprintf("%d 0 R", b.Add(fmt.Sprintf(
			"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			pages, font, content))))
	}
	b.Set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	b.Set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids)))
	return b.Bytes(catalog)
}

// pagesPDF has n pages that share one content stream.
func pagesPDF(n int) []byte {
	var b pdftest.Builder
	catalog := b.Add("")
	pages := b.Add("")
	font := b.Add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	content := b.Add(pdftest.Stream("", []byte("BT /F1 12 Tf 72 720 Td (Page) Tj ET")))
	kids := make([]string, n)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", b.Add(fmt.Sprintf(
			"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			pages, font, content)))
	}
	b.Set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	b.Set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	return b.Bytes(catalog)
}

// contentPDF has one page whose content stream is given, compressed.
func contentPDF(content []byte) []byte {
	return deflatedContentPDF(deflate(content))
}

// deflatedContentPDF has one page whose content stream is given deflated.
func deflatedContentPDF(content []byte) []byte {
	var b pdftest.Builder
	catalog := b.Add("")
	pages := b.Add("")
	font := b.Add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	c := b.Add(pdftest.Stream("/Filter /FlateDecode", content))
	page := b.Add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pages, font, c))
	b.Set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pages))
	b.Set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	return b.Bytes(catalog)
}

// attachmentPDF has one page and one embedded file, its stream compressed.
func attachmentPDF(name string, data []byte) []byte {
	return deflatedAttachmentPDF(name, deflate(data))
}

// deflatedAttachmentPDF has one page and one embedded file given deflated.
func deflatedAttachmentPDF(name string, data []byte) []byte {
	var b pdftest.Builder
	catalog := b.Add("")
	pages := b.Add("")
	font := b.Add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	c := b.Add(pdftest.Stream("", []byte("BT /F1 12 Tf 72 720 Td (Invoice) Tj ET")))
	page := b.Add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pages, font, c))
	file := b.Add(pdftest.Stream("/Type /EmbeddedFile /Subtype /text#2Fxml /Filter /FlateDecode", data))
	spec := b.Add(fmt.Sprintf("<< /Type /Filespec /F (%s) /UF (%s) /EF << /F %d 0 R /UF %d 0 R >> >>", name, name, file, file))
	b.Set(catalog, fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R /Names << /EmbeddedFiles << /Names [(%s) %d 0 R] >> >> >>", pages, name, spec))
	b.Set(pages, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", page))
	return b.Bytes(catalog)
}

// loopPDF has a page tree whose Kids point back to itself.
func loopPDF() []byte {
	var b pdftest.Builder
	catalog := b.Add("<< /Type /Catalog /Pages 2 0 R >>")
	b.Add("<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 1000000 >>")
	b.Add("<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 1000000 >>")
	return b.Bytes(catalog)
}
