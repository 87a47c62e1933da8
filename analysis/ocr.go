package analysis

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"acctapi/db"
	"acctapi/docread"
	"acctapi/ocr"
)

// Limits of reading with OCR, beyond the engine's own per page.
const (
	// maxOCRPages is how many pages without text of one PDF are read with
	// OCR: at a few seconds a page, a longer scan would hold the worker
	// for minutes.
	maxOCRPages = 20
	// ocrDPI is the resolution pages without text are rendered at.
	ocrDPI = 200
	// maxOCRImage is the largest image file read with OCR.
	maxOCRImage = 64 << 20
	// DefaultOCRBudget bounds the OCR of one document, all its pages
	// together, unless Options.OCRBudget says otherwise.
	DefaultOCRBudget = 5 * time.Minute
)

// errOCRBudget ends an OCR that ran past the worker's budget.
var errOCRBudget = errors.New("the OCR budget of a document ran out")

// withBudget bounds ctx by the OCR budget of one document; overdue turns an
// error of a reading that ran out of it into the document's failure, with
// the reason, where it would otherwise be ctx's bare deadline.
func (w *Worker) withBudget(ctx context.Context) (bctx context.Context, overdue func(error) error, cancel func()) {
	bctx, cancel = context.WithTimeoutCause(ctx, w.ocrBudget, errOCRBudget)
	return bctx, func(err error) error {
		if err != nil && ctx.Err() == nil && context.Cause(bctx) == errOCRBudget {
			return &ocr.Error{Reason: fmt.Sprintf("reading with OCR took longer than the %s a document may take", inWords(w.ocrBudget)), Err: err}
		}
		return err
	}, cancel
}

// imageSignatures are the starts of the image files OCR reads.
var imageSignatures = [][]byte{
	[]byte("\xff\xd8\xff"), []byte("\x89PNG\r\n\x1a\n"), []byte("GIF8"), []byte("II*\x00"), []byte("MM\x00*"),
}

// isImage says whether head starts an image file that OCR reads.
func isImage(head []byte) bool {
	for _, sig := range imageSignatures {
		if bytes.HasPrefix(head, sig) {
			return true
		}
	}
	return len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP"
}

// ocrOff says why a document that needs OCR is skipped; "" when OCR runs.
func (w *Worker) ocrOff() string {
	if w.ocr.Available() {
		return ""
	}
	return cmp.Or(w.noOCR, "OCR is not configured")
}

// inWords writes d as a reason says it: "5 min", "90 s".
func inWords(d time.Duration) string {
	switch {
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.String()
}

// readImage reads an image file with OCR into a document of its pages.
func (w *Worker) readImage(ctx context.Context, src io.ReaderAt, size int64, mimeType string) (*docread.Document, error) {
	if size > maxOCRImage {
		return nil, &ocr.Error{Reason: fmt.Sprintf("the image is %d MiB; at most %d MiB are read with OCR", size>>20, maxOCRImage>>20)}
	}
	data := make([]byte, size)
	if _, err := src.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	ctx, overdue, cancel := w.withBudget(ctx)
	defer cancel()
	pages, err := w.ocr.RecognizeFile(ctx, data, mimeType)
	if err != nil {
		return nil, overdue(err)
	}
	doc := &docread.Document{Format: docread.FormatText, PageCount: len(pages)}
	for _, p := range pages {
		doc.Pages = append(doc.Pages, docread.Page{Text: p.Text, HasText: p.Text != ""})
	}
	return doc, nil
}

// readScannedPages reads the pages of a PDF that have no text with OCR,
// the first maxOCRPages of them, and says whether it read any.
func (w *Worker) readScannedPages(ctx context.Context, doc *docread.Document, src io.ReaderAt, size int64) (bool, error) {
	ctx, overdue, cancel := w.withBudget(ctx)
	defer cancel()
	read := 0
	for i := range doc.Pages {
		if doc.Pages[i].HasText || read == maxOCRPages {
			continue
		}
		img, err := w.reader.RenderPage(ctx, src, size, i, ocrDPI)
		if err != nil {
			return read > 0, overdue(err)
		}
		page, err := w.ocr.Recognize(ctx, img)
		if err != nil {
			return read > 0, overdue(err)
		}
		doc.Pages[i] = docread.Page{Text: page.Text, HasText: page.Text != ""}
		read++
	}
	return read > 0, nil
}

// ocrResult is the result of a document read with OCR.
func ocrResult(r db.AnalysisResult) db.AnalysisResult {
	if r.Text != nil {
		r.Text.Source = db.TextFromOCR
		r.Source = &r.Text.Source
	}
	return r
}
