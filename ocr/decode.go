package ocr

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"

	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"
)

// format is an image format RecognizeFile reads.
type format struct {
	name   string
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

var (
	formatJPEG = format{"JPEG", jpeg.DecodeConfig, jpeg.Decode}
	formatPNG  = format{"PNG", png.DecodeConfig, png.Decode}
	formatGIF  = format{"GIF", gif.DecodeConfig, gif.Decode}
	formatTIFF = format{"TIFF", tiff.DecodeConfig, tiff.Decode}
	formatWebP = format{"WebP", webp.DecodeConfig, webp.Decode}
)

// sniff tells the format by the file's first bytes, then by its MIME type.
func sniff(data []byte, mimeType string) (format, bool) {
	switch {
	case bytes.HasPrefix(data, []byte("\xFF\xD8\xFF")):
		return formatJPEG, true
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return formatPNG, true
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return formatGIF, true
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return formatTIFF, true
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return formatWebP, true
	}
	mt, _, _ := strings.Cut(strings.ToLower(mimeType), ";")
	switch strings.TrimSpace(mt) {
	case "image/jpeg", "image/jpg", "image/pjpeg":
		return formatJPEG, true
	case "image/png":
		return formatPNG, true
	case "image/gif":
		return formatGIF, true
	case "image/tiff", "image/tif":
		return formatTIFF, true
	case "image/webp":
		return formatWebP, true
	}
	return format{}, false
}

// RecognizeFile reads an image file: JPEG (turned by its EXIF
// orientation), PNG, GIF (its first frame), WebP, or TIFF (every page, at
// most Options.MaxPages). mimeType is used only when the bytes do not tell
// the format. Each page is read as Recognize reads it.
func (e *Engine) RecognizeFile(ctx context.Context, data []byte, mimeType string) ([]Page, error) {
	if e == nil {
		return nil, &Error{Reason: "OCR is turned off"}
	}
	f, ok := sniff(data, mimeType)
	if !ok {
		return nil, &Error{Reason: "the file is not an image OCR reads (JPEG, PNG, TIFF, WebP or GIF)"}
	}
	// Every page's cost is read from its header before any is decoded: a
	// file over a budget is refused at once, not after pages of work.
	type page struct {
		open func() io.Reader
		ifd  uint32 // a TIFF page's directory
	}
	var pages []page
	if f.name == "TIFF" {
		offs, err := tiffPages(data, e.opts.MaxPages)
		if err != nil {
			return nil, err
		}
		for _, off := range offs {
			pages = append(pages, page{open: func() io.Reader { return newTIFFPage(data, off) }, ifd: off})
		}
	} else {
		pages = append(pages, page{open: func() io.Reader { return bytes.NewReader(data) }})
	}
	var total int64
	for i, pg := range pages {
		fp, err := e.check(f, pg.open, data, pg.ifd)
		if err != nil {
			if len(pages) > 1 {
				err.Reason = fmt.Sprintf("page %d: %s", i+1, err.Reason)
			}
			return nil, err
		}
		total += fp.bytes
	}
	if total > e.opts.MaxFileBytes {
		return nil, &Error{Reason: fmt.Sprintf("the TIFF's %d pages take %d MiB once decoded, over the %d MiB a file may take",
			len(pages), mib(total), mib(e.opts.MaxFileBytes))}
	}
	out := make([]Page, 0, len(pages))
	for i, pg := range pages {
		g, err := e.decode(f, pg.open)
		if err != nil {
			if len(pages) > 1 {
				err.Reason = fmt.Sprintf("page %d: %s", i+1, err.Reason)
			}
			return nil, err
		}
		if f.name == "JPEG" {
			g = orientEXIF(g, exifOrientation(data))
		}
		p, err2 := e.recognize(ctx, g)
		if err2 != nil {
			if oe, ok := err2.(*Error); ok && len(pages) > 1 {
				oe.Reason = fmt.Sprintf("page %d: %s", i+1, oe.Reason)
			}
			return nil, err2
		}
		out = append(out, p)
	}
	return out, nil
}

// check reads an image's header: its dimensions, as the decoder sees them,
// and what decoding it would take in bytes, which must be within
// MaxPageBytes; and its pixels, within 2 x MaxPixels. A header claiming a
// huge image costs nothing.
func (e *Engine) check(f format, r func() io.Reader, data []byte, ifd uint32) (footprint, *Error) {
	cfg, err := f.config(r())
	if err != nil {
		return footprint{}, &Error{Reason: fmt.Sprintf("the image could not be decoded: it is not a valid %s", f.name), Err: err}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return footprint{}, &Error{Reason: fmt.Sprintf("the image could not be decoded: it claims %d x %d pixels", cfg.Width, cfg.Height)}
	}
	fp, ok := imageFootprint(f, data, ifd)
	if !ok {
		return footprint{}, &Error{Reason: fmt.Sprintf("the image could not be decoded: its %s header is damaged", f.name)}
	}
	// The decoder's own dimensions rule where a header disagrees (a GIF's
	// frame and its screen).
	if px := int64(cfg.Width) * int64(cfg.Height); px > int64(fp.width)*int64(fp.height) {
		fp.bytes = fp.bytes / max(int64(fp.width)*int64(fp.height), 1) * px
		fp.width, fp.height = cfg.Width, cfg.Height
	}
	if fp.bytes > e.opts.MaxPageBytes {
		return footprint{}, &Error{Reason: fmt.Sprintf("%s: %d MiB once decoded, over the %d MiB a page may take",
			fp.describe(), mib(fp.bytes), mib(e.opts.MaxPageBytes))}
	}
	limit := 2 * e.opts.MaxPixels
	if cfg.Width > limit/cfg.Height {
		return footprint{}, &Error{Reason: fmt.Sprintf("the image is %d x %d pixels; at most %d megapixels are read",
			cfg.Width, cfg.Height, limit/1_000_000)}
	}
	return fp, nil
}

// decode decodes a checked image to gray.
func (e *Engine) decode(f format, r func() io.Reader) (*image.Gray, *Error) {
	img, err := f.decode(r())
	if err != nil {
		return nil, &Error{Reason: fmt.Sprintf("the image could not be decoded: the %s is damaged or truncated", f.name), Err: err}
	}
	return toGray(img), nil
}

// tiffPages returns the offsets of a TIFF's image directories, one per
// page, following the chain with a bound and no loops.
func tiffPages(data []byte, maxPages int) ([]uint32, *Error) {
	bad := &Error{Reason: "the image could not be decoded: it is not a valid TIFF"}
	if len(data) < 8 {
		return nil, bad
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if data[0] == 'M' {
		bo = binary.BigEndian
	}
	var offs []uint32
	seen := map[uint32]bool{}
	for off := bo.Uint32(data[4:]); off != 0; {
		if seen[off] || uint64(off)+2 > uint64(len(data)) {
			if len(offs) > 0 {
				break // a broken chain after the first page: read what it names
			}
			return nil, bad
		}
		seen[off] = true
		offs = append(offs, off)
		if len(offs) > maxPages {
			n := len(offs)
			for c := 0; c < 10_000; c++ { // count the rest for the reason, boundedly
				next, ok := nextIFD(data, bo, off)
				if !ok || next == 0 || seen[next] {
					break
				}
				seen[next], off = true, next
				n++
			}
			return nil, &Error{Reason: fmt.Sprintf("the TIFF has %d pages; at most %d are read", n, maxPages)}
		}
		next, ok := nextIFD(data, bo, off)
		if !ok {
			break
		}
		off = next
	}
	return offs, nil
}

func nextIFD(data []byte, bo binary.ByteOrder, off uint32) (uint32, bool) {
	if uint64(off)+2 > uint64(len(data)) {
		return 0, false
	}
	end := uint64(off) + 2 + 12*uint64(bo.Uint16(data[off:]))
	if end+4 > uint64(len(data)) {
		return 0, false
	}
	return bo.Uint32(data[end:]), true
}

// tiffPage is a TIFF whose header names another page's directory first:
// the TIFF decoder reads only the first page, so each page is shown to it
// as a first page, without copying the file.
type tiffPage struct {
	*bytes.Reader
	first [4]byte
}

func newTIFFPage(data []byte, off uint32) *tiffPage {
	p := &tiffPage{Reader: bytes.NewReader(data)}
	if data[0] == 'M' {
		binary.BigEndian.PutUint32(p.first[:], off)
	} else {
		binary.LittleEndian.PutUint32(p.first[:], off)
	}
	return p
}

func (p *tiffPage) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.Reader.ReadAt(b, off)
	for at := max(off, 4); at < 8 && at < off+int64(n); at++ {
		b[at-off] = p.first[at-4]
	}
	return n, err
}
