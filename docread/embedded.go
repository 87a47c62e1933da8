package docread

import (
	"bytes"
	"compress/zlib"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The files a PDF embeds are found three ways: PDFium lists those of the
// document's EmbeddedFiles name tree, and those of its pages' FileAttachment
// annotations (readAttachments). A PDF/A-3 may also point to its invoice
// only from an associated-files array (/AF), which PDFium does not read, or
// from a file specification PDFium cannot follow. Every embedded file is a
// stream of /Type /EmbeddedFile, and a stream is never inside an object
// stream, so scanEmbedded finds them all in the file's bytes and names each
// by the file specification that points to it.

// maxScanBytes is the largest PDF whose bytes are searched for embedded
// files PDFium did not list; an e-invoice's PDF is far smaller.
const maxScanBytes = 32 << 20

// maxDictBytes bounds the dictionary read of one object: a file
// specification's or a stream's is a few hundred bytes.
const maxDictBytes = 16 << 10

var (
	embeddedMarker = []byte("/EmbeddedFile")
	reObjHeader    = regexp.MustCompile(`(?:^|[^\d])(\d+)\s+\d+\s+obj\b`)
	reEmbeddedType = regexp.MustCompile(`/Type\s*/EmbeddedFile\b`)
	reLength       = regexp.MustCompile(`/Length\s+(\d+)(\s+\d+\s+R)?`)
	reFilter       = regexp.MustCompile(`/Filter\s*(\[[^\]]*\]|/[^\s/<>\[\]()]+)`)
	reSubtype      = regexp.MustCompile(`/Subtype\s*/([^\s/<>\[\]()]+)`)
	reFileRef      = regexp.MustCompile(`/(?:UF|F|DOS|Mac|Unix)\s+(\d+)\s+\d+\s+R`)
	reSpecName     = regexp.MustCompile(`/(UF|F)\s*(\(|<[0-9A-Fa-f\s])`)
)

// hasEmbeddedFile says whether the bytes of src name an embedded file's
// type anywhere, read in pieces so that a PDF without one costs no memory.
func hasEmbeddedFile(src io.ReaderAt, size int64) bool {
	const piece = 64 << 10
	buf := make([]byte, piece+len(embeddedMarker))
	for off := int64(0); off < size; off += piece {
		n, err := src.ReadAt(buf, off)
		if bytes.Contains(buf[:n], embeddedMarker) {
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

// scanEmbedded is every embedded file of the PDF in src, in the file's
// order, keeping at most budget bytes of their contents. An encrypted PDF's
// files are left to PDFium.
func scanEmbedded(src io.ReaderAt, size, budget int64) []Attachment {
	if size > maxScanBytes || !hasEmbeddedFile(src, size) {
		return nil
	}
	data := make([]byte, size)
	if n, _ := src.ReadAt(data, 0); int64(n) != size {
		return nil
	}
	if bytes.Contains(data, []byte("/Encrypt")) {
		return nil
	}
	p := &pdfObjects{data: data, at: map[int]int{}, work: 4*len(data) + 1<<20}
	var nums []int
	for _, m := range reObjHeader.FindAllSubmatchIndex(data, -1) {
		n, err := strconv.Atoi(string(data[m[2]:m[3]]))
		if err != nil {
			continue
		}
		if _, seen := p.at[n]; !seen {
			nums = append(nums, n)
		}
		// An incremental update's object replaces the one before it.
		p.at[n] = m[1]
	}
	names := p.specNames(nums)
	var out []Attachment
	for _, n := range nums {
		dict, after := p.dict(n)
		if !reEmbeddedType.Match(dict) || len(out) == maxAttachments {
			continue
		}
		a := Attachment{Name: names[n]}
		if m := reSubtype.FindSubmatch(dict); m != nil {
			a.MIME = strings.ReplaceAll(string(m[1]), "#2F", "/")
		}
		a.Data = p.decode(dict, after, budget)
		a.Size = int64(len(a.Data))
		budget -= a.Size
		out = append(out, a)
	}
	return out
}

// pdfObjects are a PDF's bytes with where each object's body starts.
type pdfObjects struct {
	data []byte
	at   map[int]int
	// work is how many more bytes the dictionaries may take to read: a
	// few times the file, so that no file of many unclosed dictionaries
	// costs its size for each.
	work int
}

// dict is the dictionary that opens object n's body, or nil, and the
// offset in the file just after it.
func (p *pdfObjects) dict(n int) ([]byte, int) {
	start, ok := p.at[n]
	if !ok {
		return nil, 0
	}
	for start < len(p.data) && isPDFSpace(p.data[start]) {
		start++
	}
	body := p.data[start:min(len(p.data), start+maxDictBytes)]
	if !bytes.HasPrefix(body, []byte("<<")) || p.work <= 0 {
		return nil, 0
	}
	end := dictEnd(body)
	if end < 0 {
		p.work -= len(body)
		return nil, 0
	}
	p.work -= end
	return body[:end], start + end
}

// isPDFSpace says whether c is one of PDF's white-space characters.
func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == 0
}

// dictEnd is the length of the dictionary that b opens, strings skipped,
// or -1 when it does not close.
func dictEnd(b []byte) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '(':
			i = stringEnd(b, i)
			if i < 0 {
				return -1
			}
		case b[i] == '<' && i+1 < len(b) && b[i+1] == '<':
			depth++
			i++
		case b[i] == '>' && i+1 < len(b) && b[i+1] == '>':
			depth--
			i++
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// stringEnd is the index of the ')' that closes the literal string opening
// at b[i], or -1.
func stringEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// specNames maps each embedded file's object number to the name its file
// specification gives it (/UF before /F).
func (p *pdfObjects) specNames(nums []int) map[int]string {
	names := map[int]string{}
	for _, n := range nums {
		dict, _ := p.dict(n)
		ef := bytes.Index(dict, []byte("/EF"))
		if ef < 0 {
			continue
		}
		sub := dict[ef+3:]
		i := bytes.Index(sub, []byte("<<"))
		if i < 0 {
			continue
		}
		end := dictEnd(sub[i:])
		if end < 0 {
			continue
		}
		efDict := sub[i : i+end]
		name := specName(append(append([]byte{}, dict[:ef]...), sub[i+end:]...))
		for _, m := range reFileRef.FindAllSubmatch(efDict, -1) {
			if f, err := strconv.Atoi(string(m[1])); err == nil && names[f] == "" {
				names[f] = name
			}
		}
	}
	return names
}

// specName is the file name a file specification's dictionary (without
// its /EF) states: its /UF, else its /F.
func specName(dict []byte) string {
	var f string
	for _, m := range reSpecName.FindAllSubmatchIndex(dict, -1) {
		s, ok := pdfString(dict[m[4]:])
		if !ok {
			continue
		}
		if string(dict[m[2]:m[3]]) == "UF" {
			return s
		}
		if f == "" {
			f = s
		}
	}
	return f
}

// pdfString decodes the literal or hex string b opens: UTF-16 after its
// byte order mark, else PDFDocEncoding read as Latin-1.
func pdfString(b []byte) (string, bool) {
	var raw []byte
	switch b[0] {
	case '(':
		end := stringEnd(b, 0)
		if end < 0 {
			return "", false
		}
		raw = unescape(b[1:end])
	case '<':
		end := bytes.IndexByte(b, '>')
		if end < 0 {
			return "", false
		}
		hex := bytes.Join(bytes.Fields(b[1:end]), nil)
		if len(hex)%2 == 1 {
			hex = append(hex, '0')
		}
		for k := 0; k+1 < len(hex); k += 2 {
			v, err := strconv.ParseUint(string(hex[k:k+2]), 16, 8)
			if err != nil {
				return "", false
			}
			raw = append(raw, byte(v))
		}
	}
	if len(raw) >= 2 && raw[0] == 0xFE && raw[1] == 0xFF {
		u := make([]uint16, 0, len(raw)/2)
		for k := 2; k+1 < len(raw); k += 2 {
			u = append(u, uint16(raw[k])<<8|uint16(raw[k+1]))
		}
		return string(utf16.Decode(u)), true
	}
	r := make([]rune, len(raw))
	for k, c := range raw {
		r[k] = rune(c)
	}
	return string(r), true
}

// unescape reads a literal string's escapes: \n, \(, \\, octal codes.
func unescape(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		i++
		switch c := b[i]; {
		case c >= '0' && c <= '7':
			v, k := 0, 0
			for ; k < 3 && i+k < len(b) && b[i+k] >= '0' && b[i+k] <= '7'; k++ {
				v = v*8 + int(b[i+k]-'0')
			}
			out = append(out, byte(v))
			i += k - 1
		case c == 'n':
			out = append(out, '\n')
		case c == 'r':
			out = append(out, '\r')
		case c == 't':
			out = append(out, '\t')
		case c == '\r' || c == '\n':
			// A line continued.
		default:
			out = append(out, c)
		}
	}
	return out
}

// decode is the contents of the stream whose dictionary dict ends at
// offset after, inflated when Flate-compressed, or nil when it is
// compressed otherwise, broken, or over budget bytes.
func (p *pdfObjects) decode(dict []byte, after int, budget int64) []byte {
	raw := p.streamBytes(dict, after)
	if raw == nil {
		return nil
	}
	var r io.Reader = bytes.NewReader(raw)
	if m := reFilter.FindSubmatch(dict); m != nil {
		if strings.Trim(string(m[1]), "[] \r\n") != "/FlateDecode" || bytes.Contains(dict, []byte("/DecodeParms")) {
			return nil
		}
		z, err := zlib.NewReader(r)
		if err != nil {
			return nil
		}
		r = z
	}
	out, err := io.ReadAll(io.LimitReader(r, budget+1))
	if err != nil && len(out) == 0 || int64(len(out)) > budget {
		return nil
	}
	return out
}

// streamBytes is the bytes of the stream whose dictionary dict ends at
// offset after, as stored: its /Length of them, the length read from the
// object it names if indirect, else up to endstream.
func (p *pdfObjects) streamBytes(dict []byte, after int) []byte {
	rest := bytes.TrimLeftFunc(p.data[after:], func(r rune) bool { return r < 0x80 && isPDFSpace(byte(r)) })
	if !bytes.HasPrefix(rest, []byte("stream")) {
		return nil
	}
	rest = rest[len("stream"):]
	rest = bytes.TrimPrefix(bytes.TrimPrefix(rest, []byte("\r")), []byte("\n"))
	length := -1
	if m := reLength.FindSubmatch(dict); m != nil {
		v, _ := strconv.Atoi(string(m[1]))
		if len(m[2]) == 0 {
			length = v
		} else if ref, ok := p.at[v]; ok {
			if f := bytes.Fields(p.data[ref:min(len(p.data), ref+40)]); len(f) > 0 {
				if l, err := strconv.Atoi(string(f[0])); err == nil {
					length = l
				}
			}
		}
	}
	if length >= 0 && length <= len(rest) {
		return rest[:length]
	}
	end := bytes.Index(rest, []byte("endstream"))
	if end < 0 {
		return nil
	}
	return bytes.TrimSuffix(bytes.TrimSuffix(rest[:end], []byte("\n")), []byte("\r"))
}
