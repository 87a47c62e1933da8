package docread_test

import (
	"context"
	"strings"
	"testing"

	"acctapi/docread"
	"acctapi/docread/pdftest"
)

// OpenReader compiles nothing: a PDF read before Warm starts the engine
// itself and waits for it, and Warm then finds it started.
func TestOpenReaderStartsOnDemand(t *testing.T) {
	r := docread.OpenReader(context.Background(), docread.Options{CacheDir: cacheDir()})
	t.Cleanup(func() { r.Close() })
	select {
	case <-r.Warmed():
		t.Fatal("Warmed is closed before Warm was called")
	default:
	}
	doc := mustRead(t, r, pdftest.Document([]string{"Rechnung RE-7"}), "r.pdf", "application/pdf")
	if !strings.Contains(doc.Text(), "RE-7") {
		t.Errorf("text %q, want it to have RE-7", doc.Text())
	}
	if err := r.Warm(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Warmed():
	default:
		t.Error("Warmed is open after Warm returned")
	}
}
