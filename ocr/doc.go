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
//   - MaxPageBytes (default 128 MiB): what decoding a page takes, read from
//     its header before a pixel is decoded (width × height × what the
//     decoder keeps a pixel in, by samples and bits a sample, and its
//     buffers: a TIFF's strip or tile, a progressive JPEG's coefficients).
//     A phone's 50-megapixel JPEG takes 75 MiB; a 16-bit RGB PNG of
//     8944 × 8944 pixels 611 MiB, and is refused. MaxFileBytes (default
//     1 GiB) bounds the sum over a TIFF's pages, every page checked before
//     the first is decoded.
//   - MaxPages (default 20): a TIFF with more pages is not read.
//   - Threads (default 1) is each child's OMP_THREAD_LIMIT.
//
// Every child runs in its own process group, is killed whole when its
// context ends and dies with this process (on Linux); the image goes to its
// standard input as PNG and the text comes from its standard output, so no
// file is ever written.
//
// Before reading, a page is made to look like a scan. It is converted to
// gray and cut to its paper: a photo's dark surround (the table a receipt
// lies on, the hand holding it), columns and rows at the edges mostly darker
// than Otsu's split of the page, is cut away with a margin, where that split
// has dark surround below it and paper well above; Tesseract reads a
// surround as lines of specks. Noisy images (the median difference between
// neighbouring pixels above a few levels) are smoothed; the lighting is
// evened (each pixel divided by the paper's brightness around it, so that a
// shadow across a photo leaves white paper) and the contrast stretched from
// the ink's level to the paper's, both measured on the page's own paper and
// ink: stretching between percentiles of the whole page fails on a sparse
// page, whose ink is under one pixel in a hundred. Then the page is scaled
// so that its letters are some 28 pixels high (the median size of its dark
// shapes, which lies between x-height and capitals; Tesseract reads best at
// some 20-30 pixels of x-height), up to three times, down to what the pixel
// budget allows: 10-point type in a 150-dpi photo, at 11 pixels of x-height,
// is read nearly as well as 12-point.
//
// Orientation: a JPEG's EXIF orientation is applied first. The page is
// read as it then is: most pages come upright, and a reading with a mean
// word confidence of 70 or more, its words lying on their lines, is kept
// (orientation detection costs about as much as a reading). Otherwise
// Tesseract's orientation detection (--psm 0, the "osd" data of Debian's
// tesseract-ocr-osd, a dependency of tesseract-ocr) names the quarter turn
// that makes the page upright. When it is sure the page is upright, a
// reading of 55 or more is kept (upside down, pages read at 35-50); else
// the page is read at the turn it names and turned over from it (OSD takes
// a page for its upside-down self now and then), and when OSD is unsure,
// or the data is missing, at the other quarter turns as well, until a
// reading is confident. The reading with the most confidently read letters
// and digits, in words lying on their lines, wins (a page turned a quarter
// is read as vertical text, whose words stand on end). That costs one
// reading for most pages, up to four and OSD for a turned one.
//
// Deskew: the upright page is binarised (Otsu) at about a megapixel, and
// its dark pixels are projected onto the vertical at every angle from -10
// to 10 degrees, in half degrees and then tenths around the best. Text
// lines make the sharpest profile, the largest sum of squares, at their
// own angle; the page is turned back by it.
//
// Layout: the text is laid out from the words' boxes as a PDF's text
// layer is. Lines that Tesseract found in different blocks at the same
// height (a label and its value, the cells of a table's row) become one
// line, each word at the column of its left edge in widths of the page's
// median letter, a gap wider than some two spaces kept as a column gap of
// two spaces at least, and rows further apart than a line's height
// separated by an empty line. The readers of the text find a value's
// label beside it and a column's header above it, as on a text layer.
package ocr
