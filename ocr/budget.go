package ocr

import (
	"encoding/binary"
	"fmt"
)

// footprint is what decoding one image costs, read from its header before
// anything is decoded: a 600 KB PNG of zeros may claim 8944 × 8944 pixels
// of three 16-bit samples, which Go's decoder would hold as 610 MiB.
type footprint struct {
	width, height int
	samples, bits int // a pixel's samples, and the bits of each
	// bytes is what the decoder allocates: the decoded image in the type
	// it decodes to (an RGB PNG becomes 4 or 8 bytes a pixel), and its
	// working buffers (a progressive JPEG's coefficients, a TIFF's strip
	// or tile).
	bytes int64
}

// describe says what the image is in words, for a reason.
func (fp footprint) describe() string {
	s := fmt.Sprintf("the image is %d × %d pixels", fp.width, fp.height)
	if fp.samples > 1 {
		return s + fmt.Sprintf(", %d samples of %d bits", fp.samples, fp.bits)
	}
	return s + fmt.Sprintf(" at %d bits a pixel", fp.bits)
}

func mib(n int64) int64 { return (n + 1<<20 - 1) >> 20 }

// imageFootprint reads the footprint of the image of format f in data;
// for a TIFF, of the page whose directory is at ifd.
func imageFootprint(f format, data []byte, ifd uint32) (footprint, bool) {
	switch f.name {
	case "PNG":
		return pngFootprint(data)
	case "JPEG":
		return jpegFootprint(data)
	case "TIFF":
		return tiffFootprint(data, ifd)
	case "WebP":
		return webpFootprint(data)
	case "GIF":
		return gifFootprint(data)
	}
	return footprint{}, false
}

// pngFootprint reads the IHDR chunk. Go decodes gray to 1 or 2 bytes a
// pixel, a palette to 1, and colour or any alpha to RGBA or NRGBA of 4
// bytes (8 at 16 bits); an interlaced image is decoded pass by pass into
// images as large again.
func pngFootprint(data []byte) (footprint, bool) {
	if len(data) < 29 || string(data[12:16]) != "IHDR" {
		return footprint{}, false
	}
	w, h := binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:])
	depth, colour, interlace := int(data[24]), data[25], data[28]
	wide := depth == 16
	var samples, per int
	switch colour {
	case 0:
		samples, per = 1, 1
		if wide {
			per = 2
		}
	case 3:
		samples, per = 1, 1
	case 2, 4, 6:
		samples, per = map[byte]int{2: 3, 4: 2, 6: 4}[colour], 4
		if wide {
			per = 8
		}
	default:
		return footprint{}, false
	}
	px := int64(w) * int64(h)
	n := px * int64(per)
	if interlace == 1 {
		n *= 2
	}
	return footprint{int(w), int(h), samples, depth, n}, true
}

// jpegFootprint reads the frame header (SOF). Go decodes gray to 1 byte a
// pixel and colour to YCbCr planes at their sampling; four components
// (CMYK) it keeps twice, at 8 bytes a pixel; a progressive JPEG also holds
// every block's coefficients, 4 bytes a sample.
func jpegFootprint(data []byte) (footprint, bool) {
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return footprint{}, false
		}
		marker := data[i+1]
		if marker == 0xFF { // a fill byte
			i++
			continue
		}
		if marker == 0x01 || marker >= 0xD0 && marker <= 0xD7 { // no length
			i += 2
			continue
		}
		size := int(binary.BigEndian.Uint16(data[i+2:]))
		if marker == 0xDA || size < 2 || i+2+size > len(data) {
			return footprint{}, false
		}
		seg := data[i+4 : i+2+size]
		if marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
			if len(seg) < 6 || len(seg) < 6+3*int(seg[5]) || seg[5] == 0 {
				return footprint{}, false
			}
			bits, h, w, nf := int(seg[0]), int64(binary.BigEndian.Uint16(seg[1:])), int64(binary.BigEndian.Uint16(seg[3:])), int(seg[5])
			hmax, vmax := int64(1), int64(1)
			for c := range nf {
				hv := seg[6+3*c+1]
				hmax, vmax = max(hmax, int64(hv>>4)), max(vmax, int64(hv&15))
			}
			// The samples of each component at its sampling.
			var samples int64
			for c := range nf {
				hv := seg[6+3*c+1]
				samples += ceilDiv(w*max(int64(hv>>4), 1), hmax) * ceilDiv(h*max(int64(hv&15), 1), vmax)
			}
			n := samples
			if nf == 4 {
				n = w*h*4 + samples
			}
			if marker&3 == 2 { // SOF2, 6, 10, 14: progressive
				n += 4 * samples
			}
			return footprint{int(w), int(h), nf, bits, n}, true
		}
		i += 2 + size
	}
	return footprint{}, false
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// TIFF tags that size a page.
const (
	tagWidth        = 256
	tagHeight       = 257
	tagBits         = 258
	tagCompression  = 259
	tagPhotometric  = 262
	tagSamples      = 277
	tagRowsPerStrip = 278
	tagTileWidth    = 322
	tagTileLength   = 323
)

// tiffFootprint reads the directory at ifd. Go decodes gray to 1 or 2
// bytes a pixel (gray with alpha to 4 or 8), a palette to 1, RGB to 4 or 8;
// it reads each strip or tile whole into a buffer, which a compressed one
// may take twice over while it grows.
func tiffFootprint(data []byte, ifd uint32) (footprint, bool) {
	if len(data) < 8 || uint64(ifd)+2 > uint64(len(data)) {
		return footprint{}, false
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if data[0] == 'M' {
		bo = binary.BigEndian
	}
	tags := map[uint16]int64{tagBits: 1, tagCompression: 1, tagSamples: 1}
	n := int(bo.Uint16(data[ifd:]))
	for k := range n {
		e := uint64(ifd) + 2 + 12*uint64(k)
		if e+12 > uint64(len(data)) {
			return footprint{}, false
		}
		tag, typ, count := bo.Uint16(data[e:]), bo.Uint16(data[e+2:]), bo.Uint32(data[e+4:])
		if _, wanted := map[uint16]bool{tagWidth: true, tagHeight: true, tagBits: true, tagCompression: true,
			tagPhotometric: true, tagSamples: true, tagRowsPerStrip: true, tagTileWidth: true, tagTileLength: true}[tag]; !wanted || count == 0 {
			continue
		}
		// The first value: inline when the values fit in 4 bytes (a
		// sample's bits are given once per sample, all alike in what Go
		// reads).
		at := e + 8
		size := map[uint16]uint64{3: 2, 4: 4}[typ]
		if size == 0 {
			return footprint{}, false
		}
		if size*uint64(count) > 4 {
			at = uint64(bo.Uint32(data[e+8:]))
			if at+size > uint64(len(data)) {
				return footprint{}, false
			}
		}
		if size == 2 {
			tags[tag] = int64(bo.Uint16(data[at:]))
		} else {
			tags[tag] = int64(bo.Uint32(data[at:]))
		}
	}
	w, h, bits, samples := tags[tagWidth], tags[tagHeight], tags[tagBits], tags[tagSamples]
	if w <= 0 || h <= 0 || bits <= 0 || samples <= 0 {
		return footprint{}, false
	}
	var per int64
	switch photometric := tags[tagPhotometric]; {
	case (photometric == 0 || photometric == 1) && samples >= 2:
		per = 4
		if bits == 16 {
			per = 8
		}
	case photometric == 0 || photometric == 1:
		per = 1
		if bits == 16 {
			per = 2
		}
	case photometric == 3:
		per = 1
	case photometric == 2:
		per = 4
		if bits == 16 {
			per = 8
		}
	default:
		per = samples * ceilDiv(bits, 8)
	}
	bw, bh := w, min(h, max(tags[tagRowsPerStrip], 1))
	if _, ok := tags[tagRowsPerStrip]; !ok {
		bh = h
	}
	if tw, th := tags[tagTileWidth], tags[tagTileLength]; tw > 0 && th > 0 {
		bw, bh = tw, th
	}
	block := ceilDiv(bw*samples*bits, 8) * bh
	if tags[tagCompression] != 1 {
		block *= 2
	}
	return footprint{int(w), int(h), int(samples), int(bits), w*h*per + block}, true
}

// webpFootprint: a lossy WebP decodes to YCbCr 4:2:0, 1.5 bytes a pixel; a
// lossless or extended one (alpha) to NRGBA, which the lossless decoder
// builds from a copy of the same size: 8 bytes a pixel.
func webpFootprint(data []byte) (footprint, bool) {
	if len(data) < 30 {
		return footprint{}, false
	}
	var w, h int64
	switch string(data[12:16]) {
	case "VP8 ":
		w, h = int64(binary.LittleEndian.Uint16(data[26:])&0x3FFF), int64(binary.LittleEndian.Uint16(data[28:])&0x3FFF)
		return footprint{int(w), int(h), 3, 8, w*h + 2*ceilDiv(w, 2)*ceilDiv(h, 2)}, true
	case "VP8L":
		b := binary.LittleEndian.Uint32(data[21:])
		w, h = int64(b&0x3FFF)+1, int64(b>>14&0x3FFF)+1
	case "VP8X":
		w = int64(uint32(data[24])|uint32(data[25])<<8|uint32(data[26])<<16) + 1
		h = int64(uint32(data[27])|uint32(data[28])<<8|uint32(data[29])<<16) + 1
	default:
		return footprint{}, false
	}
	return footprint{int(w), int(h), 4, 8, 8 * w * h}, true
}

// gifFootprint: the first frame, at most the logical screen, decodes to a
// palette's 1 byte a pixel.
func gifFootprint(data []byte) (footprint, bool) {
	if len(data) < 10 {
		return footprint{}, false
	}
	w, h := int64(binary.LittleEndian.Uint16(data[6:])), int64(binary.LittleEndian.Uint16(data[8:]))
	return footprint{int(w), int(h), 1, 8, w * h}, true
}
