package exports_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"acctapi/datev/datevtest"
	"acctapi/db"
	"acctapi/document"
)

// TestExportScale exports a client's year of 5,000 documents (8 KiB files
// each) and measures the time the export takes and the process's peak
// resident memory. It runs with ACCTAPI_EXPORT_SCALE=1:
//
//	ACCTAPI_EXPORT_SCALE=1 go test -run TestExportScale -v ./exports
func TestExportScale(t *testing.T) {
	if os.Getenv("ACCTAPI_EXPORT_SCALE") == "" {
		t.Skip("set ACCTAPI_EXPORT_SCALE=1 to export 5,000 documents")
	}
	const n = 5000
	f := newFixture(t)
	f.settings(db.ChartSKR04)
	ctx := context.Background()
	content := make([]byte, 8<<10)
	for i := range content {
		content[i] = byte(rand.IntN(256))
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- f.scaleDocument(ctx, i, content)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("stored %d documents in %s", n, time.Since(start).Round(time.Millisecond))
	runtime.GC()

	start = time.Now()
	e, data := f.yearExport()
	took := time.Since(start)
	var usage syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	peak := usage.Maxrss << 10 // Linux gives kilobytes
	t.Logf("exported %d documents (%d rows, %d skipped) into a %.1f MiB ZIP in %s; peak RSS of the process %.1f MiB",
		e.DocumentCount, e.RowCount, len(e.Skipped), float64(len(data))/(1<<20), took.Round(time.Millisecond), float64(peak)/(1<<20))
	if e.DocumentCount != n {
		t.Errorf("documents: %d, want %d", e.DocumentCount, n)
	}
	if took > time.Minute || peak > 256<<20 {
		t.Errorf("took %s with a peak RSS of %d MiB, want under a minute and 256 MiB", took, peak>>20)
	}
	if _, err := datevtest.Validate(data); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// scaleDocument stores the i-th document of the year: an invoice of one of
// forty suppliers, 19 %, 7 % or both.
func (f *fixture) scaleDocument(ctx context.Context, i int, content []byte) error {
	p, err := f.files.Write(bytes.NewReader(content), 1<<20)
	if err != nil {
		return err
	}
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365)
	sum := sha256.Sum256(content)
	in := db.FileCreate{ID: db.NewID(), WorkspaceID: f.ws, Name: fmt.Sprintf("beleg-%04d.pdf", i), MimeType: "application/pdf",
		Size: int64(len(content)), SHA256: sum[:], DocumentDate: &date}
	if err := f.files.Keep(p, in.ID, func() error { _, err := f.store.CreateFile(ctx, f.clientID, in); return err }); err != nil {
		return err
	}
	net := []string{"100.00", "15.00", "150.00"}[i%3]
	tax := []string{"19.00", "1.05", "22.50"}[i%3]
	total := []string{"119.00", "16.05", "172.50"}[i%3]
	kind := document.Invoice
	values := map[string]*string{document.DocumentNumber: ptr(fmt.Sprintf("RE-%d/%04d", i%40, i)),
		document.IssuerName: ptr(fmt.Sprintf("Lieferant Nr. %d GmbH", i%40)), document.NetAmount: &net,
		document.TaxAmount: &tax, document.TotalAmount: &total}
	_, err = f.store.UpdateFile(ctx, f.clientID, in.ID, db.FileUpdate{Kind: db.Update[string]{Set: true, Value: &kind}, Fields: values})
	return err
}

// yearExport exports the fiscal year 2026.
func (f *fixture) yearExport() (*db.Export, []byte) {
	f.t.Helper()
	return f.exportPeriod(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC))
}
