package docread_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/docread"
	"acctapi/docread/pdftest"
	"acctapi/testprog"
)

var (
	sharedOnce   sync.Once
	sharedReader *docread.Reader
	sharedErr    error
)

// cacheDir keeps the compiled module between test runs: compiling PDFium
// takes seconds, more under the race detector.
func cacheDir() string { return filepath.Join(os.TempDir(), "acctapi-docread-test-cache") }

// mustReader returns the reader the tests share, with two instances.
func mustReader(tb testing.TB) *docread.Reader {
	tb.Helper()
	sharedOnce.Do(func() {
		sharedReader, sharedErr = docread.NewReader(context.Background(), docread.Options{Instances: 2, CacheDir: cacheDir()})
	})
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return sharedReader
}

// mustNewReader makes a reader of its own, closed at the end of the test.
func mustNewReader(tb testing.TB, opts docread.Options) *docread.Reader {
	tb.Helper()
	opts.CacheDir = cacheDir()
	r, err := docread.NewReader(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

func read(tb testing.TB, r *docread.Reader, data []byte, name, mimeType string) (*docread.Document, error) {
	tb.Helper()
	return r.Read(context.Background(), bytes.NewReader(data), int64(len(data)), name, mimeType)
}

func mustRead(tb testing.TB, r *docread.Reader, data []byte, name, mimeType string) *docread.Document {
	tb.Helper()
	doc, err := read(tb, r, data, name, mimeType)
	if err != nil {
		tb.Fatalf("read %s: %v", name, err)
	}
	return doc
}

func mustFile(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// wantError checks that err is an *Error whose reason holds want.
func wantError(tb testing.TB, err error, want string) {
	tb.Helper()
	var e *docread.Error
	if !errors.As(err, &e) {
		tb.Fatalf("got error %v (%T), want a *docread.Error with %q", err, err, want)
	}
	if !strings.Contains(e.Reason, want) {
		tb.Fatalf("got reason %q, want %q", e.Reason, want)
	}
}

// peakRSS is the process's peak resident memory, from /proc.
func peakRSS(tb testing.TB) string {
	tb.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func TestReadTextPDF(t *testing.T) {
	r := mustReader(t)
	doc := mustRead(t, r, textPDF("Hello", "World"), "hello.pdf", "application/pdf")
	if doc.Format != docread.FormatPDF || doc.PageCount != 2 || len(doc.Pages) != 2 {
		t.Fatalf("got format %q, %d pages (%d read), want pdf, 2", doc.Format, doc.PageCount, len(doc.Pages))
	}
	for i, want := range []string{"Hello", "World"} {
		if got := doc.Pages[i]; got.Text != want || !got.HasText {
			t.Errorf("page %d: got %+v, want %q with text", i, got, want)
		}
	}
	if got := doc.Text(); got != "Hello\fWorld" {
		t.Errorf("got text %q, want %q", got, "Hello\fWorld")
	}
}

func TestReadEInvoices(t *testing.T) {
	r := mustReader(t)
	for _, tc := range []struct {
		file, attachment, text string
		pages                  int
	}{
		{"factur-x-en16931.pdf", "factur-x.xml", "Rechnung", 2},
		{"zugferd1-invoice.pdf", "ZUGFeRD-invoice.xml", "Rechnung", 1},
		{"zugferd2-invoice.pdf", "zugferd-invoice.xml", "Alphabet Fuhrparkmanagement", 1},
		{"xrechnung.pdf", "xrechnung.xml", "Rechnung", 3},
	} {
		t.Run(tc.file, func(t *testing.T) {
			doc := mustRead(t, r, mustFile(t, tc.file), tc.file, "application/pdf")
			if doc.PageCount != tc.pages {
				t.Errorf("got %d pages, want %d", doc.PageCount, tc.pages)
			}
			if !strings.Contains(doc.Text(), tc.text) || !doc.Pages[0].HasText {
				t.Errorf("got text %.200q, want it to hold %q", doc.Text(), tc.text)
			}
			if len(doc.Attachments) != 1 {
				t.Fatalf("got %d attachments, want 1", len(doc.Attachments))
			}
			a := doc.Attachments[0]
			if a.Name != tc.attachment || a.Size != int64(len(a.Data)) || !bytes.Contains(a.Data, []byte("<?xml")) {
				t.Errorf("got attachment %q of %d bytes (%d read) starting %.40q, want %q with XML", a.Name, a.Size, len(a.Data), a.Data, tc.attachment)
			}
			if a.MIME != "text/xml" {
				t.Errorf("got MIME %q, want text/xml", a.MIME)
			}
		})
	}
}

func TestReadPDFAttachmentLimit(t *testing.T) {
	r := mustNewReader(t, docread.Options{Limits: docread.Limits{MaxAttachmentBytes: 1000}})
	doc := mustRead(t, r, attachmentPDF("factur-x.xml", bytes.Repeat([]byte("x"), 2000)), "a.pdf", "")
	if len(doc.Attachments) != 1 || doc.Attachments[0].Size != 2000 || doc.Attachments[0].Data != nil {
		t.Fatalf("got %+v, want one attachment of 2000 bytes without data", doc.Attachments)
	}
}

func TestReadDamagedPDFs(t *testing.T) {
	r := mustReader(t)
	t.Run("broken xref", func(t *testing.T) {
		data := textPDF("Repaired")
		i := bytes.Index(data, []byte("xref\n"))
		broken := append(bytes.Clone(data[:i]), bytes.ReplaceAll(data[i:], []byte(" 00000 n"), []byte("7 00000 n"))...)
		doc := mustRead(t, r, broken, "broken.pdf", "application/pdf")
		if got := doc.Text(); got != "Repaired" {
			t.Errorf("got %q, want %q", got, "Repaired")
		}
	})
	t.Run("bad startxref", func(t *testing.T) {
		data := textPDF("Repaired")
		i := bytes.LastIndex(data, []byte("startxref\n"))
		broken := append(bytes.Clone(data[:i]), "startxref\n99999\n%%EOF\n"...)
		doc := mustRead(t, r, broken, "badstart.pdf", "")
		if got := doc.Text(); got != "Repaired" {
			t.Errorf("got %q, want %q", got, "Repaired")
		}
	})
	t.Run("truncated", func(t *testing.T) {
		data := mustFile(t, "factur-x-en16931.pdf")
		_, err := read(t, r, data[:len(data)/3], "cut.pdf", "application/pdf")
		wantError(t, err, "truncated or damaged")
	})
	t.Run("header only", func(t *testing.T) {
		_, err := read(t, r, []byte("%PDF-1.7\n"), "empty.pdf", "")
		wantError(t, err, "truncated or damaged")
	})
	t.Run("random bytes named pdf", func(t *testing.T) {
		_, err := read(t, r, bytes.Repeat([]byte{0x13, 0x37, 0xfe}, 1000), "invoice.pdf", "")
		wantError(t, err, "not a PDF it claims to be")
	})
	t.Run("page tree loop", func(t *testing.T) {
		doc, err := read(t, r, loopPDF(), "loop.pdf", "")
		if err != nil {
			wantError(t, err, "")
			return
		}
		if doc.PageCount > 0 && doc.Pages[0].HasText {
			t.Errorf("got %d pages with text, want none", doc.PageCount)
		}
	})
}

func TestReadEncryptedPDFs(t *testing.T) {
	r := mustReader(t)
	doc := mustRead(t, r, mustFile(t, "encrypted-empty-password.pdf"), "enc.pdf", "")
	if got := doc.Text(); got != "Hello encrypted" {
		t.Errorf("got %q, want %q", got, "Hello encrypted")
	}
	_, err := read(t, r, mustFile(t, "encrypted-password.pdf"), "enc.pdf", "")
	wantError(t, err, "encrypted with a password")
}

func TestReadPageLimit(t *testing.T) {
	r := mustReader(t)
	_, err := read(t, r, pagesPDF(600), "long.pdf", "")
	wantError(t, err, "the document has 600 pages; at most 500 are read")
	doc := mustRead(t, r, pagesPDF(500), "long.pdf", "")
	if len(doc.Pages) != 500 || doc.Pages[499].Text != "Page" {
		t.Fatalf("got %d pages, want 500 with text", len(doc.Pages))
	}
}

func TestReadTextLimit(t *testing.T) {
	r := mustNewReader(t, docread.Options{Limits: docread.Limits{MaxText: 1000}})
	doc := mustRead(t, r, textPDF(strings.Repeat("a", 600), strings.Repeat("b", 600), "c"), "t.pdf", "")
	if !doc.Truncated || len(doc.Pages) != 2 || len(doc.Text()) != 1001 {
		t.Fatalf("got truncated %v, %d pages, %d bytes, want truncated, 2 pages, 1000 bytes and a form feed", doc.Truncated, len(doc.Pages), len(doc.Text()))
	}
}

// TestReadHostilePDFs reads files made to exhaust the reader; each must end
// within the limits, and the reader must read the next file.
func TestReadHostilePDFs(t *testing.T) {
	testprog.SkipShort(t, "reads the hostile PDFs to their limits")
	r := mustNewReader(t, docread.Options{Limits: docread.Limits{Timeout: 20 * time.Second}})
	t.Run("huge content stream", func(t *testing.T) {
		// 8 million show-text operators, 64 MiB once inflated.
		content := append([]byte("BT /F1 1 Tf "), bytes.Repeat([]byte("(ab) Tj "), 8<<20)...)
		doc, err := read(t, r, contentPDF(append(content, "ET"...)), "big.pdf", "")
		if err != nil {
			wantError(t, err, "")
			t.Logf("ended with %v", err)
			return
		}
		t.Logf("read %d bytes of text, truncated %v", len(doc.Text()), doc.Truncated)
	})
	t.Run("zip bomb attachment", func(t *testing.T) {
		// 1 GiB of zeros in about 1 MB.
		_, err := read(t, r, deflatedAttachmentPDF("factur-x.xml", zeros(1<<30)), "bomb.pdf", "")
		wantError(t, err, "needs more than 256 MiB")
		t.Logf("ended with %v", err)
	})
	t.Run("zip bomb content", func(t *testing.T) {
		doc, err := read(t, r, deflatedContentPDF(zeros(1<<30)), "bomb.pdf", "")
		if err != nil {
			wantError(t, err, "")
			t.Logf("ended with %v", err)
			return
		}
		if doc.Pages[0].HasText {
			t.Errorf("got text %q, want none", doc.Pages[0].Text)
		}
	})
	doc := mustRead(t, r, textPDF("Still here"), "ok.pdf", "")
	if got := doc.Text(); got != "Still here" {
		t.Errorf("got %q, want %q", got, "Still here")
	}
	t.Logf("peak RSS %s", peakRSS(t))
}

func TestReadTimeout(t *testing.T) {
	r := mustNewReader(t, docread.Options{Limits: docread.Limits{Timeout: time.Second}})
	content := append([]byte("BT /F1 1 Tf "), bytes.Repeat([]byte("(ab) Tj "), 8<<20)...)
	_, err := read(t, r, contentPDF(append(content, "ET"...)), "slow.pdf", "")
	wantError(t, err, "reading took longer than 1s")

	// The killed instance was replaced.
	mustRead(t, r, textPDF("after"), "ok.pdf", "")
}

func TestReadCancel(t *testing.T) {
	r := mustReader(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := textPDF("x")
	_, err := r.Read(ctx, bytes.NewReader(data), int64(len(data)), "x.pdf", "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	mustRead(t, r, data, "x.pdf", "")
}

func TestRenderPage(t *testing.T) {
	r := mustReader(t)
	data := textPDF("Hello")
	img, err := r.RenderPage(context.Background(), bytes.NewReader(data), int64(len(data)), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	// 595×842 points at 100 dpi, rounded up.
	if b := img.Bounds(); b.Dx() != 827 || b.Dy() != 1170 {
		t.Errorf("got %v, want 827×1170", b)
	}
	img, err = r.RenderPage(context.Background(), bytes.NewReader(data), int64(len(data)), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx()*b.Dy() > docread.MaxRenderPixels {
		t.Errorf("got %v, want at most %d pixels", b, docread.MaxRenderPixels)
	}
	_, err = r.RenderPage(context.Background(), bytes.NewReader(data), int64(len(data)), 1, 100)
	wantError(t, err, "no page 2")
}

func TestReadText(t *testing.T) {
	r := mustReader(t)
	utf16 := []byte{0xff, 0xfe}
	for _, c := range "Grüße\r\n" {
		utf16 = append(utf16, byte(c), byte(c>>8))
	}
	for _, tc := range []struct {
		name, mimeType string
		data           []byte
		want           string
	}{
		{"a.txt", "", []byte("Grüße"), "Grüße"},
		{"a.txt", "", []byte("\xef\xbb\xbfGrüße"), "Grüße"},
		{"a.csv", "", []byte("Gr\xfc\xdfe;\x80"), "Grüße;€"},
		{"a", "text/plain; charset=utf-16", utf16, "Grüße\n"},
		{"a", "text/csv", []byte("a;b\r\n1;2"), "a;b\n1;2"},
	} {
		doc := mustRead(t, r, tc.data, tc.name, tc.mimeType)
		if doc.Format != docread.FormatText || doc.Text() != tc.want {
			t.Errorf("%s %q: got %s %q, want text %q", tc.name, tc.data, doc.Format, doc.Text(), tc.want)
		}
	}
	lr := mustNewReader(t, docread.Options{Limits: docread.Limits{MaxText: 10}})
	doc := mustRead(t, lr, []byte(strings.Repeat("ü", 10)), "a.txt", "")
	if !doc.Truncated || doc.Text() != strings.Repeat("ü", 5) {
		t.Errorf("got %q (truncated %v), want five ü, truncated", doc.Text(), doc.Truncated)
	}
}

func TestReadXML(t *testing.T) {
	r := mustReader(t)
	cii := `<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100" xmlns:ram="urn:ram">
  <rsm:ExchangedDocument><ram:ID>RE-2026-0042</ram:ID></rsm:ExchangedDocument>
  <ram:AttachmentBinaryObject mimeCode="application/pdf">JVBERi0xLjQK</ram:AttachmentBinaryObject>
  <ram:Name>Müller &amp; Söhne</ram:Name>
</rsm:CrossIndustryInvoice>`
	doc := mustRead(t, r, []byte(cii), "x", "application/xml")
	if want := "RE-2026-0042\nMüller & Söhne"; doc.Format != docread.FormatXML || doc.Text() != want {
		t.Errorf("got %s %q, want xml %q", doc.Format, doc.Text(), want)
	}
	latin1 := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>M\xfcller</a>"
	if doc := mustRead(t, r, []byte(latin1), "a.xml", ""); doc.Text() != "Müller" {
		t.Errorf("got %q, want Müller", doc.Text())
	}

	laughs := `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<lolz>&lol9;</lolz>`
	_, err := read(t, r, []byte(laughs), "bomb.xml", "")
	wantError(t, err, "DOCTYPE")

	// An external DTD without an entity in the text is refused the same.
	for _, doc := range []string{
		`<?xml version="1.0"?><!DOCTYPE a SYSTEM "http://127.0.0.1:1/x.dtd"><a>text</a>`,
		`<?xml version="1.0"?><!DOCTYPE a PUBLIC "-//X//DTD X//EN" "x.dtd"><a>text</a>`,
		`<?xml version="1.0"?><!DOCTYPE a><a>text</a>`,
	} {
		_, err = read(t, r, []byte(doc), "ext.xml", "")
		wantError(t, err, "DOCTYPE")
	}

	_, err = read(t, r, []byte(strings.Repeat("<a>", 1000)), "deep.xml", "")
	wantError(t, err, "deeper than")

	_, err = read(t, r, []byte("<a><b></a>"), "bad.xml", "")
	wantError(t, err, "not well-formed")
}

func TestReadUnsupported(t *testing.T) {
	r := mustReader(t)
	for _, tc := range []struct {
		name, mimeType string
		data           []byte
	}{
		{"scan.jpg", "image/jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF")},
		{"scan.png", "", []byte("\x89PNG\r\n\x1a\n\x00\x00")},
		{"scan", "image/heic", []byte("\x00\x00\x00\x18ftypheic")},
		{"a.docx", "", []byte("PK\x03\x04\x14\x00")},
		{"a.bin", "application/octet-stream", []byte{1, 2, 3}},
	} {
		_, err := read(t, r, tc.data, tc.name, tc.mimeType)
		if !errors.Is(err, docread.ErrUnsupported) {
			t.Errorf("%s: got %v, want ErrUnsupported", tc.name, err)
		}
		wantError(t, err, "which is not read as text")
	}
}

// The PDF engine is unloaded when nothing was read for IdleClose, and loaded
// again for the next PDF. IdleClose is long enough that a busy machine,
// under the race detector, still finds the engine loaded right after a read.
func TestReaderUnloadsWhenIdle(t *testing.T) {
	r := mustNewReader(t, docread.Options{IdleClose: time.Second})
	pdf := mustFile(t, "factur-x-en16931.pdf")
	for range 2 {
		mustRead(t, r, pdf, "invoice.pdf", "application/pdf")
		if !r.Loaded() {
			t.Fatal("the engine is not loaded right after a read")
		}
		deadline := time.Now().Add(10 * time.Second)
		for r.Loaded() {
			if time.Now().After(deadline) {
				t.Fatal("the engine is still loaded 10 s after the last read")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A rendered page is the page: rows of any width (PDFium pads them) keep
// their pixels in place, so a vertical bar stays vertical.
func TestRenderPageRows(t *testing.T) {
	r := mustReader(t)
	src := image.NewGray(image.Rect(0, 0, 1001, 1415))
	for i := range src.Pix {
		src.Pix[i] = 255
	}
	for y := range 1415 {
		for x := 480; x < 520; x++ {
			src.Pix[y*src.Stride+x] = 0
		}
	}
	pdf := pdftest.Scan(src)
	img, err := r.RenderPage(context.Background(), bytes.NewReader(pdf), int64(len(pdf)), 0, 97)
	if err != nil {
		t.Fatal(err)
	}
	g := img.(*image.Gray)
	darkest := func(y int) int {
		best := 0
		for x := range g.Rect.Dx() {
			if g.Pix[y*g.Stride+x] < g.Pix[y*g.Stride+best] {
				best = x
			}
		}
		return best
	}
	top, bottom := darkest(10), darkest(g.Rect.Dy()-10)
	if d := top - bottom; d < -3 || d > 3 {
		t.Errorf("the bar is at x %d at the top and %d at the bottom of a %d-pixel-wide rendering", top, bottom, g.Rect.Dx())
	}
}
