package docread

import (
	"bytes"
	"testing"
	"time"

	"acctapi/docread/pdftest"
)

// FuzzScanEmbedded feeds the scan of embedded files broken and hostile
// bytes: it must neither panic nor keep more than its budget.
func FuzzScanEmbedded(f *testing.F) {
	for c := pdftest.NameTree; c <= pdftest.PageAssociatedFiles; c++ {
		f.Add(pdftest.WithFile([]string{"x"}, "factur-x.xml", []byte("<?xml version=\"1.0\"?><a/>"), c))
	}
	f.Add([]byte("1 0 obj << /Type /EmbeddedFile /Length 9 0 R >> stream\nabc"))
	f.Add([]byte("1 0 obj << /EF << /F 1 0 R >> /UF <FEFF00> /F (a\\\\(b) >> endobj 1 0 obj << /Type /EmbeddedFile >>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const budget = 100
		for _, a := range scanEmbedded(bytes.NewReader(data), int64(len(data)), budget) {
			if len(a.Data) > budget {
				t.Fatalf("kept %d bytes, over the budget of %d", len(a.Data), budget)
			}
		}
	})
}

// A file of many objects whose dictionaries never close is scanned in
// time bounded by its size, not its size for each object (the race
// detector's tenfold slowing is not timed).
func TestScanEmbeddedHostile(t *testing.T) {
	data := append([]byte("/EmbeddedFile\n"), bytes.Repeat([]byte("1 0 obj<<"), 3<<20/9)...)
	start := time.Now()
	if got := scanEmbedded(bytes.NewReader(data), int64(len(data)), 100); len(got) != 0 {
		t.Errorf("got %d files from no file", len(got))
	}
	if d := time.Since(start); d > 10*time.Second && !raceEnabled {
		t.Errorf("scanning %d bytes took %s", len(data), d)
	}
}
