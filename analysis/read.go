package analysis

import (
	"context"
	"io"

	"acctapi/db"
	"acctapi/docread"
)

// resultOf turns what the reader read into what the store records.
func resultOf(_ context.Context, doc *docread.Document, _ io.ReaderAt, _ int64) db.AnalysisResult {
	if doc.Format == docread.FormatPDF && !hasText(doc) {
		return skipped("the PDF has no text layer (a scan); its pages need OCR, which this server does not run")
	}
	text := &db.FileText{Text: doc.Text(), Pages: max(doc.PageCount, len(doc.Pages)), Source: db.TextFromPDF}
	return db.AnalysisResult{Status: db.AnalysisDone, Source: &text.Source, Text: text}
}

// hasText says whether any page of doc has a letter or digit.
func hasText(doc *docread.Document) bool {
	for _, p := range doc.Pages {
		if p.HasText {
			return true
		}
	}
	return false
}
