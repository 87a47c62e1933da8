package ocr

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/image/tiff"
)

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// deflateZeros is a zlib stream of n zero bytes: some 600 KB for 480 MB.
func deflateZeros(tb testing.TB, n int64) []byte {
	tb.Helper()
	var b bytes.Buffer
	z, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	if _, err := io.CopyN(z, zeros{}, n); err != nil {
		tb.Fatal(err)
	}
	if err := z.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func pngChunk(out []byte, typ string, body []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	c := append([]byte(typ), body...)
	out = append(out, c...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(c))
}

// hostilePNG is a whole, valid PNG of side × side black pixels, three
// 16-bit samples each, in some 600 KB.
func hostilePNG(tb testing.TB, side int) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(side))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(side))
	ihdr = append(ihdr, 16, 2, 0, 0, 0)
	out := pngChunk([]byte("\x89PNG\r\n\x1a\n"), "IHDR", ihdr)
	out = pngChunk(out, "IDAT", deflateZeros(tb, int64(side)*int64(1+6*side)))
	return pngChunk(out, "IEND", nil)
}

// hostileTIFF is a whole, valid little-endian TIFF of pages pages, each
// side × side black pixels of three 16-bit samples in one Deflate strip;
// the pages share the strip, so that 20 pages take no more bytes than one.
func hostileTIFF(tb testing.TB, side, pages int) []byte {
	strip := deflateZeros(tb, int64(side)*int64(side)*6)
	out := []byte{'I', 'I', 42, 0, 8, 0, 0, 0}
	const entries = 10
	ifdSize := 2 + 12*entries + 4
	bitsAt := 8 + pages*ifdSize
	stripAt := bitsAt + 6
	for p := range pages {
		next := uint32(8 + (p+1)*ifdSize)
		if p == pages-1 {
			next = 0
		}
		out = binary.LittleEndian.AppendUint16(out, entries)
		for _, e := range [][3]uint32{ // tag, type, value (or its offset)
			{tagWidth, 4, uint32(side)}, {tagHeight, 4, uint32(side)}, {tagBits, 3, uint32(bitsAt)},
			{tagCompression, 3, 8}, {tagPhotometric, 3, 2}, {273, 4, uint32(stripAt)}, {tagSamples, 3, 3},
			{tagRowsPerStrip, 4, uint32(side)}, {279, 4, uint32(len(strip))}, {284, 3, 1},
		} {
			count := uint32(1)
			if e[0] == tagBits {
				count = 3
			}
			out = binary.LittleEndian.AppendUint16(out, uint16(e[0]))
			out = binary.LittleEndian.AppendUint16(out, uint16(e[1]))
			out = binary.LittleEndian.AppendUint32(out, count)
			if e[1] == 3 && count == 1 {
				out = binary.LittleEndian.AppendUint16(out, uint16(e[2]))
				out = append(out, 0, 0)
			} else {
				out = binary.LittleEndian.AppendUint32(out, e[2])
			}
		}
		out = binary.LittleEndian.AppendUint32(out, next)
	}
	for range 3 {
		out = binary.LittleEndian.AppendUint16(out, 16)
	}
	return append(out, strip...)
}

// phonePhoto is a w × h JPEG at 4:2:0, as phones write them, of a
// pattern of dark strokes on light paper.
func phonePhoto(tb testing.TB, w, h int) []byte {
	tb.Helper()
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			v := uint8(220)
			if (x/9+y/23)%7 == 0 && y%40 < 24 {
				v = 40
			}
			img.Y[y*img.YStride+x] = v
		}
	}
	for i := range img.Cb {
		img.Cb[i], img.Cr[i] = 128, 128
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// sizedJPEG is a small JPEG of the given sampling whose frame header then
// claims w × h pixels: its footprint is read from the header alone.
func sizedJPEG(tb testing.TB, gray bool, w, h uint16) []byte {
	tb.Helper()
	var img image.Image = image.NewRGBA(image.Rect(0, 0, 16, 16))
	if gray {
		img = image.NewGray(image.Rect(0, 0, 16, 16))
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		tb.Fatal(err)
	}
	data := b.Bytes()
	i := bytes.Index(data, []byte{0xFF, 0xC0})
	binary.BigEndian.PutUint16(data[i+5:], h)
	binary.BigEndian.PutUint16(data[i+7:], w)
	return data
}

func TestFootprint(t *testing.T) {
	var small bytes.Buffer
	gray16 := image.NewGray16(image.Rect(0, 0, 300, 200))
	gray16.Set(1, 1, color.Gray16{Y: 7})
	if err := tiff.Encode(&small, gray16, &tiff.Options{Compression: tiff.Deflate}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		f         format
		data      []byte
		ifd       uint32
		wantBytes int64
	}{
		// Go decodes a 16-bit RGB PNG to RGBA64: 8 bytes a pixel.
		{"16-bit RGB PNG", formatPNG, hostilePNG(t, 64), 0, 64 * 64 * 8},
		{"8-bit gray PNG header", formatPNG, hugePNG(1000, 2000), 0, 1000 * 2000},
		// A phone's 50-megapixel photo, 4:2:0: 1.5 bytes a pixel.
		{"8160 x 6120 JPEG, 4:2:0", formatJPEG, sizedJPEG(t, false, 8160, 6120), 0, 8160*6120 + 2*4080*3060},
		{"gray JPEG", formatJPEG, sizedJPEG(t, true, 4000, 3000), 0, 4000 * 3000},
		// Gray16 and the strip Deflate decodes into, twice over.
		{"16-bit gray TIFF", formatTIFF, small.Bytes(), binary.LittleEndian.Uint32(small.Bytes()[4:]), 300*200*2 + 2*300*2*200},
		{"16-bit RGB TIFF", formatTIFF, hostileTIFF(t, 64, 1), 8, 64*64*8 + 2*64*64*6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, ok := imageFootprint(tt.f, tt.data, tt.ifd)
			if !ok || fp.bytes != tt.wantBytes {
				t.Errorf("got %+v, %v; want %d bytes", fp, ok, tt.wantBytes)
			}
		})
	}
	// The phone's photo is within the budget.
	e := &Engine{opts: Options{}.withDefaults()}
	data := sizedJPEG(t, false, 8160, 6120)
	if _, err := e.check(formatJPEG, func() io.Reader { return bytes.NewReader(data) }, data, 0); err != nil {
		t.Errorf("a 50-megapixel photo: %v", err)
	}
}

// TestHostileImages reads each hostile image in a child process and
// measures its peak resident memory (VmHWM): each is refused from its
// header, at once, with the reason, and the process stays small. A phone's
// photo, decoded and prepared, is measured the same way.
func TestHostileImages(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1.4 GB of zeros through Deflate")
	}
	dir := t.TempDir()
	const side = 8944
	for _, tt := range []struct {
		name, want string
		data       []byte
	}{
		{"png16", "the image is 8944 × 8944 pixels, 3 samples of 16 bits: 611 MiB once decoded, over the 128 MiB a page may take", hostilePNG(t, side)},
		{"tiff16", "the image is 8944 × 8944 pixels, 3 samples of 16 bits: 1526 MiB once decoded, over the 128 MiB a page may take", hostileTIFF(t, side, 1)},
		{"tiff16x20", "page 1: the image is 8944 × 8944 pixels", hostileTIFF(t, side, 20)},
		// A phone's 50-megapixel photo is decoded and prepared; the child
		// has no tesseract to give it to.
		{"photo50", "tesseract failed on the image", phonePhoto(t, 8160, 6120)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileImageChild$", "-test.v")
			cmd.Env = append(os.Environ(), "ACCTAPI_OCR_HOSTILE="+path)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var reason string
			var hwm, ms int64
			for _, line := range strings.Split(string(out), "\n") {
				if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
					switch k {
					case "reason":
						reason = v
					case "vmhwm_kib":
						hwm, _ = strconv.ParseInt(v, 10, 64)
					case "ms":
						ms, _ = strconv.ParseInt(v, 10, 64)
					}
				}
			}
			t.Logf("%d KB file: peak RSS %d MiB, %d ms: %s", len(tt.data)/1000, hwm>>10, ms, reason)
			if !strings.Contains(reason, tt.want) {
				t.Errorf("reason %q, want %q", reason, tt.want)
			}
			// The photo is decoded, and the race detector's shadow memory
			// grows with what is decoded (555 MiB under -race against 167
			// without); the hostile images are refused before any decode.
			limit := int64(512 << 10)
			if raceEnabled && tt.name == "photo50" {
				limit = 1 << 20
			}
			if hwm == 0 || hwm > limit {
				t.Errorf("peak RSS %d KiB, want at most %d MiB", hwm, limit>>10)
			}
			if ms > 10_000 && tt.name != "photo50" {
				t.Errorf("took %d ms, want under 10 s", ms)
			}
		})
	}
}

// TestHostileImageChild is TestHostileImages's child: it reads the file it
// is given as the worker would and prints the reason and its peak RSS.
func TestHostileImageChild(t *testing.T) {
	path := os.Getenv("ACCTAPI_OCR_HOSTILE")
	if path == "" {
		t.Skip("run by TestHostileImages")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{opts: Options{}.withDefaults()}
	start := time.Now()
	_, err = e.RecognizeFile(context.Background(), data, "")
	var oe *Error
	if !errors.As(err, &oe) {
		t.Fatalf("got %v, want an *Error", err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("vmhwm_kib=%s\n", strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	fmt.Printf("ms=%d\nreason=%s\n", time.Since(start).Milliseconds(), oe.Reason)
}
