package ocr

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/tiff"

	"acctapi/testprog"
)

const install = "install tesseract: apt-get install tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng"

// mustEngine returns an engine on the installed tesseract. Without one the
// test is skipped; under CI=true, where it must be installed, it fails.
func mustEngine(tb testing.TB, opts Options) *Engine {
	tb.Helper()
	e, err := New(opts)
	if err != nil {
		var oe *Error
		if errors.As(err, &oe) && (strings.Contains(oe.Reason, "not installed") || strings.Contains(oe.Reason, "not found")) {
			if os.Getenv("CI") == "true" {
				tb.Fatalf("%v; %s", err, install)
			}
			tb.Skipf("%v; %s", err, install)
		}
		tb.Fatal(err)
	}
	return e
}

// mustFace returns Go Regular at size pixels; at 44 its capitals are some
// 32 pixels high.
func mustFace(tb testing.TB, size float64) font.Face {
	tb.Helper()
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		tb.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		tb.Fatal(err)
	}
	return face
}

var invoiceLines = []string{
	"Muster Elektro GmbH",
	"Rechnung Nr. RE-2026-0042",
	"Rechnungsdatum 05.03.2026",
	"Nettobetrag 50,34 EUR",
	"Umsatzsteuer 19% 9,56 EUR",
	"Gesamtbetrag 59,90 EUR",
}

// renderPage draws lines of black text, capitals some 32 pixels high, on
// a white page w pixels wide.
func renderPage(tb testing.TB, w int, lines []string) *image.Gray {
	tb.Helper()
	return renderPageSized(tb, w, 0, 44, lines)
}

// renderPageSized draws lines at size pixels on a w x h page; h 0 fits the
// lines.
func renderPageSized(tb testing.TB, w, h int, size float64, lines []string) *image.Gray {
	tb.Helper()
	f := mustFace(tb, size)
	lineHeight := int(size * 1.45)
	if h == 0 {
		h = 120 + lineHeight*len(lines) + 80
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := &font.Drawer{Dst: img, Src: image.Black, Face: f}
	for i, line := range lines {
		d.Dot = fixed.P(90, 120+lineHeight*i)
		d.DrawString(line)
	}
	return img
}

// dim maps black to lo and white to hi.
func dim(g *image.Gray, lo, hi uint8) *image.Gray {
	out := image.NewGray(g.Rect)
	for i, v := range g.Pix {
		out.Pix[i] = lo + uint8(int(v)*int(hi-lo)/255)
	}
	return out
}

// addNoise adds Gaussian noise of standard deviation sigma.
func addNoise(g *image.Gray, sigma float64) *image.Gray {
	r := rand.New(rand.NewPCG(1, 2))
	out := image.NewGray(g.Rect)
	for i, v := range g.Pix {
		n := float64(v) + r.NormFloat64()*sigma
		out.Pix[i] = uint8(math.Max(0, math.Min(255, n)))
	}
	return out
}

func encodeJPEG(tb testing.TB, img image.Image, quality int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func encodePNGBytes(tb testing.TB, img image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// wantTokens are the tokens every variant must give back. Go Regular draws
// a slashed zero, which Tesseract's models, trained on invoices' plain
// zeros, read as 8 at the end of "59,90" now and then; and the worst
// variant's dash comes back as "~": both are the font and the noise, not
// the engine.
var wantTokens = []string{"2026-0042", "05.03.2026", "59,9"}

func checkTokens(t *testing.T, p Page) {
	t.Helper()
	for _, tok := range wantTokens {
		if !strings.Contains(p.Text, tok) {
			t.Errorf("text lacks %q (rotated %d, skew %.1f, confidence %.0f):\n%s", tok, p.Rotated, p.Skew, p.Confidence, p.Text)
		}
	}
}

func TestRecognizeVariants(t *testing.T) {
	e := mustEngine(t, Options{})
	page := renderPage(t, 1100, invoiceLines)
	// Under -short the first and the last, which has every fault of the
	// others at once, are read.
	tests := []struct {
		name  string
		img   image.Image
		short bool
	}{
		{"upright", page, true},
		{"turned 90", rotate90(page, 90), false},
		{"turned 180", rotate90(page, 180), false},
		{"turned 270", rotate90(page, 270), false},
		{"skewed 4 degrees", rotateSmall(page, -4), false},
		{"skewed -3 degrees", rotateSmall(page, 3), false},
		{"dim", dim(page, 90, 150), false},
		{"noisy", addNoise(page, 40), false},
		{"dim, noisy, skewed and turned", rotate90(addNoise(dim(rotateSmall(page, -4), 70, 170), 20), 90), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.short {
				testprog.SkipShort(t, "one more page read with Tesseract")
			}
			start := time.Now()
			p, err := e.Recognize(context.Background(), tt.img)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v, rotated %d, skew %.1f, confidence %.0f, peak RSS %d MiB", time.Since(start).Round(time.Millisecond), p.Rotated, p.Skew, p.Confidence, p.peakRSS>>20)
			checkTokens(t, p)
		})
	}
}

// withEXIF puts an EXIF block with orientation o after a JPEG's SOI marker.
func withEXIF(jpg []byte, o uint16) []byte {
	tiff := []byte{'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, byte(o >> 8), byte(o), 0, 0, 0, 0, 0, 0}
	seg := append([]byte("Exif\x00\x00"), tiff...)
	app1 := append([]byte{0xFF, 0xE1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}, seg...)
	return append(append(append([]byte{}, jpg[:2]...), app1...), jpg[2:]...)
}

func TestRecognizeFile(t *testing.T) {
	e := mustEngine(t, Options{})
	page := renderPage(t, 1100, invoiceLines)
	var tiffBuf bytes.Buffer
	if err := tiff.Encode(&tiffBuf, page, &tiff.Options{Compression: tiff.Deflate}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		data        []byte
		mime        string
		wantRotated int
	}{
		{"JPEG at quality 40", encodeJPEG(t, page, 40), "image/jpeg", 0},
		// Stored turned a quarter left, shown upright by its EXIF
		// orientation 6: no turn is left for OCR to find.
		{"JPEG with EXIF orientation", withEXIF(encodeJPEG(t, rotate90(page, 270), 75), 6), "image/jpeg", 0},
		{"PNG", encodePNGBytes(t, page), "", 0},
		{"TIFF", tiffBuf.Bytes(), "image/tiff", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pages, err := e.RecognizeFile(context.Background(), tt.data, tt.mime)
			if err != nil {
				t.Fatal(err)
			}
			if len(pages) != 1 {
				t.Fatalf("got %d pages, want 1", len(pages))
			}
			if pages[0].Rotated != tt.wantRotated {
				t.Errorf("got rotated %d, want %d", pages[0].Rotated, tt.wantRotated)
			}
			checkTokens(t, pages[0])
		})
	}
}

// hugePNG returns a PNG whose header claims w x h pixels, with no data.
func hugePNG(w, h uint32) []byte {
	ihdr := make([]byte, 4+13)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 0 // 8-bit gray
	out := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0d")
	out = append(out, ihdr...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(ihdr))
}

// tiffChain returns a TIFF header and n empty directories, the last
// pointing back at the first when loop is set.
func tiffChain(n int, loop bool) []byte {
	data := []byte{'I', 'I', 42, 0, 8, 0, 0, 0}
	for i := range n {
		next := uint32(8 + 6*(i+1))
		if i == n-1 {
			next = 0
			if loop {
				next = 8
			}
		}
		data = append(data, 0, 0)
		data = binary.LittleEndian.AppendUint32(data, next)
	}
	return data
}

func TestRecognizeFileErrors(t *testing.T) {
	e := mustEngine(t, Options{})
	random := make([]byte, 4096)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	tests := []struct {
		name, mime string
		data       []byte
		want       string
	}{
		{"random bytes", "", random, "not an image OCR reads"},
		{"random bytes called a PNG", "image/png", random, "the image could not be decoded"},
		{"a PNG header of 30000 x 30000", "image/png", hugePNG(30000, 30000), "the image is 30000 × 30000 pixels at 8 bits a pixel: 859 MiB once decoded, over the 128 MiB a page may take"},
		{"a PNG header of 9000 x 9000", "image/png", hugePNG(9000, 9000), "the image is 9000 x 9000 pixels; at most 80 megapixels are read"},
		{"a truncated JPEG", "image/jpeg", encodeJPEG(t, renderPage(t, 600, invoiceLines[:2]), 80)[:900], "the image could not be decoded"},
		{"a TIFF of 25 pages", "image/tiff", tiffChain(25, false), "the TIFF has 25 pages; at most 20 are read"},
		{"a TIFF whose pages loop", "image/tiff", tiffChain(3, true), "the image could not be decoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := e.RecognizeFile(context.Background(), tt.data, tt.mime)
			var oe *Error
			if !errors.As(err, &oe) {
				t.Fatalf("got error %v, want an *Error", err)
			}
			if !strings.Contains(oe.Reason, tt.want) {
				t.Errorf("got reason %q, want %q", oe.Reason, tt.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v, want an answer at once", d)
			}
		})
	}
}

// children returns the processes whose parent is this test process,
// zombies included.
func children(t *testing.T) []string {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, string(b[:i+1])+" "+f[0])
		}
	}
	return out
}

func TestCancel(t *testing.T) {
	e := mustEngine(t, Options{})
	// What one small reading costs on this machine now, under whatever else
	// runs: a child started, fed and waited for. Stopping a reading costs
	// less than that; a loaded machine makes both slower alike.
	start := time.Now()
	if _, err := e.Recognize(context.Background(), renderPage(t, 400, invoiceLines[:1])); err != nil {
		t.Fatal(err)
	}
	baseline := time.Since(start)
	// Noise everywhere keeps tesseract busy for many seconds.
	img := addNoise(renderPageSized(t, 1600, 2200, 20, invoiceLines), 90)
	ctx, cancel := context.WithCancel(context.Background())
	var canceled atomic.Int64
	time.AfterFunc(1500*time.Millisecond, func() {
		canceled.Store(time.Now().UnixNano())
		cancel()
	})
	_, err := e.Recognize(ctx, img)
	returned := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got error %v, want context.Canceled", err)
	}
	lag := returned.Sub(time.Unix(0, canceled.Load()))
	t.Logf("a small reading took %v; the reading returned %v after the cancel", baseline, lag)
	if limit := time.Second + baseline; lag > limit {
		t.Errorf("returned %v after the cancel, want within %v (1 s and the %v of a small reading now)", lag, limit, baseline)
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("children left: %v", c)
	}
}

func TestTimeout(t *testing.T) {
	e := mustEngine(t, Options{Timeout: 300 * time.Millisecond})
	_, err := e.Recognize(context.Background(), renderPage(t, 1100, invoiceLines))
	var oe *Error
	if !errors.As(err, &oe) || oe.Reason != "OCR took longer than 300ms" {
		t.Fatalf("got error %v, want the reason %q", err, "OCR took longer than 300ms")
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("children left: %v", c)
	}
}

func TestMemoryLimit(t *testing.T) {
	e := mustEngine(t, Options{MaxMemory: 48 << 20})
	_, err := e.Recognize(context.Background(), renderPage(t, 1100, invoiceLines))
	var oe *Error
	if !errors.As(err, &oe) || oe.Reason != "OCR needed more than 48 MiB of memory" {
		t.Fatalf("got error %v, want the reason %q", err, "OCR needed more than 48 MiB of memory")
	}
}

func TestNew(t *testing.T) {
	mustEngine(t, Options{})
	_, err := New(Options{Languages: "deu+xyz"})
	var oe *Error
	if !errors.As(err, &oe) || !strings.Contains(oe.Reason, `"xyz" is not installed`) {
		t.Errorf("got %v, want a missing language", err)
	}
	_, err = New(Options{Path: "/nonexistent/tesseract"})
	if !errors.As(err, &oe) || !strings.Contains(oe.Reason, "was not found") {
		t.Errorf("got %v, want a missing program", err)
	}
	var off *Engine
	if off.Available() {
		t.Error("a nil engine is available")
	}
	if _, err := off.Recognize(context.Background(), image.NewGray(image.Rect(0, 0, 1, 1))); err == nil {
		t.Error("a nil engine read an image")
	}
}

// BenchmarkRecognize reads an A4 page at 200 dpi with 30 lines of 10-point
// text, and reports the seconds per page and tesseract's peak memory.
func BenchmarkRecognize(b *testing.B) {
	e := mustEngine(b, Options{})
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("%02d  Pos. %d Montage Netzteil Typ NX-%04d  %d,%02d EUR", i+1, i+1, 40*i+7, 10+i*3, (i*17)%100))
	}
	page := renderPageSized(b, 1654, 2339, 28, lines)
	var peak uint64
	b.ResetTimer()
	for b.Loop() {
		p, err := e.Recognize(context.Background(), page)
		if err != nil {
			b.Fatal(err)
		}
		if !strings.Contains(p.Text, "NX-0007") {
			b.Fatalf("text lacks NX-0007:\n%s", p.Text)
		}
		peak = max(peak, p.peakRSS)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/page")
	b.ReportMetric(float64(peak>>20), "MiB-peak-RSS")
}
