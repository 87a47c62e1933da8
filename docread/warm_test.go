package docread_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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

// A first start compiles PDFium for seconds. A read waiting for it gives way
// to its context, and Close returns without waiting for it: a server asked
// to stop in its first seconds stops at once. Each check is an order, not a
// time: the compile is still running when the stop has returned.
func TestStopDoesNotWaitForCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles PDFium without a cache (seconds of processor time)")
	}
	r := docread.OpenReader(context.Background(), docread.Options{CacheDir: t.TempDir()})
	doc := pdftest.Document([]string{"Rechnung"})
	read := func(ctx context.Context) error {
		_, err := r.Read(ctx, bytes.NewReader(doc), int64(len(doc)), "r.pdf", "application/pdf")
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read during the compile: got %v, want its context's deadline", err)
	}
	if !r.Starting() {
		t.Fatal("the compile ended within the read's 50 ms: the test proves nothing on this machine")
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !r.Starting() {
		t.Error("Close waited for the compile to end")
	}
	if err := read(context.Background()); err == nil {
		t.Error("Read after Close: got no error")
	}
	// The engine the compile makes after Close is closed, not kept.
	for r.Starting() {
		time.Sleep(50 * time.Millisecond)
	}
	if r.Loaded() {
		t.Error("the engine started after Close is loaded")
	}
}
