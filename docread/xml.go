package docread

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding/htmlindex"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// maxXMLDepth bounds the nesting of elements; e-invoices nest a dozen deep.
const maxXMLDepth = 256

// binaryElements hold base64 files inside e-invoices, which are not text.
var binaryElements = map[string]bool{
	"AttachmentBinaryObject":       true,
	"EmbeddedDocumentBinaryObject": true,
}

// readXML keeps the text of the elements of an XML file, one line per run of
// text. Any DOCTYPE (or other declaration) is refused, as einvoice refuses
// it: encoding/xml never reads a DTD nor fetches anything, but a file that
// names one (an internal subset of entities, an external DTD by SYSTEM or
// PUBLIC) expects it read, and the text without it would not be the file's.
func readXML(ctx context.Context, src io.Reader, maxText int) (*Document, error) {
	limit := int64(maxText) * inputFactor
	lr := &io.LimitedReader{R: src, N: limit + 1}
	// A UTF-16 file with a byte order mark becomes UTF-8 here; its
	// declaration's encoding is then ignored by charsetReader.
	d := xml.NewDecoder(transform.NewReader(lr, xunicode.BOMOverride(transform.Nop)))
	d.Strict = true
	d.CharsetReader = charsetReader
	var (
		b         strings.Builder
		depth     int
		skip      int
		truncated bool
	)
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		tok, err := d.Token()
		if err == io.EOF {
			if lr.N == 0 {
				truncated = true
			}
			break
		}
		if err != nil {
			if lr.N == 0 {
				truncated = true
				break
			}
			var syn *xml.SyntaxError
			if errors.As(err, &syn) {
				return nil, &Error{Reason: fmt.Sprintf("the XML is not well-formed (line %d)", syn.Line), Err: err}
			}
			return nil, &Error{Reason: "the XML could not be read", Err: err}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxXMLDepth {
				return nil, &Error{Reason: fmt.Sprintf("the XML nests elements deeper than %d", maxXMLDepth)}
			}
			if skip > 0 || binaryElements[t.Name.Local] {
				skip++
			}
		case xml.EndElement:
			depth--
			if skip > 0 {
				skip--
			}
		case xml.Directive:
			return nil, &Error{Reason: "the XML has a DOCTYPE or other declaration, which is not read (no DTD and no entity is)"}
		case xml.CharData:
			if skip > 0 {
				continue
			}
			if s := strings.TrimSpace(string(t)); s != "" {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(s)
			}
		}
		if b.Len() > maxText {
			truncated = true
			break
		}
	}
	text, _ := cutText(b.String(), maxText)
	return &Document{
		Format:    FormatXML,
		Pages:     []Page{{Text: text, HasText: hasText(text)}},
		PageCount: 1,
		Truncated: truncated,
	}, nil
}

// charsetReader decodes the encodings an XML declaration may name.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	if strings.HasPrefix(strings.ToLower(label), "utf-16") {
		return input, nil
	}
	enc, err := htmlindex.Get(label)
	if err != nil {
		return nil, fmt.Errorf("unknown XML encoding %q", label)
	}
	return enc.NewDecoder().Reader(input), nil
}
