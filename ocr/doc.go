// Package ocr reads text from images with Tesseract, run as a child process
// per page. It owns everything between an image's bytes and its text:
// decoding, turning upright, levelling, normalising, running tesseract with
// limits, and reading its output. It imports nothing of ours.
//
// New finds tesseract (Options.Path, else "tesseract" on PATH), runs it
// once for its version and languages, and ends in an *Error when it is
// missing or lacks a language of Options.Languages ("deu+eng" by default),
// so that the files it would read can be marked skipped with that reason.
// A nil *Engine is OCR turned off.
//
// Limits, each crossed with an *Error whose Reason says which, in words:
//
//   - Timeout (default 60s) bounds one page, every tesseract run for it
//     included; the child is killed with its process group.
//   - MaxMemory (default 1 GiB) is each child's address-space limit, set by
//     /bin/sh's ulimit -v before it becomes tesseract, so that the limit
//     holds from tesseract's first instruction. An A4 page at 200 dpi
//     peaks at some 70 MiB resident.
//   - MaxPixels (default 40 megapixels): a larger image is scaled down to
//     it. An image whose header claims more than twice that is refused
//     before a pixel is decoded.
//   - MaxPages (default 20): a TIFF with more pages is not read.
//   - Threads (default 1) is each child's OMP_THREAD_LIMIT.
//
// Every child runs in its own process group, is killed whole when its
// context ends and dies with this process (on Linux); the image goes to its
// standard input as PNG and the text comes from its standard output, so no
// file is ever written.
//
// Before reading, a page is made to look like a scan. It is converted to
// gray; noisy images (the median difference between neighbouring pixels
// above a few levels) are smoothed; the 1st and 99th brightness
// percentiles are stretched to black and white, which gives a dim photo
// its contrast; and an image under 1500 pixels on its long side is doubled
// so that text reaches some 300 dpi.
//
// Orientation: a JPEG's EXIF orientation is applied first. Then Tesseract's
// orientation detection (--psm 0, the "osd" data of Debian's
// tesseract-ocr-osd, a dependency of tesseract-ocr) names the quarter turn
// that makes the page upright. When it is unsure, or the data is missing,
// the page is read at that turn (or upright) and, unless the words come
// back with a mean confidence of 70 or more, at the other quarter turns
// too; the reading with the most confidently read letters and digits
// wins. That costs up to four readings instead of one.
//
// Deskew: the upright page is binarised (Otsu) at about a megapixel, and
// its dark pixels are projected onto the vertical at every angle from -10
// to 10 degrees, in half degrees and then tenths around the best. Text
// lines make the sharpest profile, the largest sum of squares, at their
// own angle; the page is turned back by it.
package ocr
