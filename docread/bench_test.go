package docread_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/docread"
)

// BenchmarkReadTextPDF reads a two-page Factur-X invoice (text and its
// embedded XML) with one and two instances reading at once.
func BenchmarkReadTextPDF(b *testing.B) {
	data := mustFile(b, "factur-x-en16931.pdf")
	for _, instances := range []int{1, 2} {
		b.Run("instances="+strconv.Itoa(instances), func(b *testing.B) {
			r := mustNewReader(b, docread.Options{Instances: instances})
			mustRead(b, r, data, "i.pdf", "")
			b.SetParallelism(instances)
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mustRead(b, r, data, "i.pdf", "")
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "docs/s")
		})
	}
}

// BenchmarkNewReader measures start-up: compiling PDFium without and with
// a compilation cache, and the first read, which starts an instance.
func BenchmarkNewReader(b *testing.B) {
	data := textPDF("Hello")
	for _, cached := range []bool{false, true} {
		b.Run("cache="+strconv.FormatBool(cached), func(b *testing.B) {
			dir := b.TempDir()
			if cached {
				mustClose(b, dir)
			}
			var first time.Duration
			for b.Loop() {
				opts := docread.Options{}
				if cached {
					opts.CacheDir = dir
				}
				r, err := docread.NewReader(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				start := time.Now()
				mustRead(b, r, data, "h.pdf", "")
				first += time.Since(start)
				r.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-read-ms")
		})
	}
}

// mustClose fills a compilation cache in dir.
func mustClose(tb testing.TB, dir string) {
	tb.Helper()
	r, err := docread.NewReader(context.Background(), docread.Options{CacheDir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	r.Close()
}

// BenchmarkBatchRSS reads 100 invoices with two instances and reports the
// process's peak resident memory. Run it alone for a meaningful peak:
//
//	go test -run '^$' -bench BatchRSS -benchtime 1x ./docread/
func BenchmarkBatchRSS(b *testing.B) {
	files := [][]byte{
		mustFile(b, "factur-x-en16931.pdf"),
		mustFile(b, "zugferd1-invoice.pdf"),
		mustFile(b, "zugferd2-invoice.pdf"),
		mustFile(b, "xrechnung.pdf"),
	}
	r := mustNewReader(b, docread.Options{Instances: 2})
	for b.Loop() {
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Go(func() {
				for i := w; i < 100; i += 2 {
					mustRead(b, r, files[i%len(files)], "i.pdf", "")
				}
			})
		}
		wg.Wait()
	}
	kb, _ := strconv.Atoi(strings.TrimSuffix(peakRSS(b), " kB"))
	b.ReportMetric(float64(kb)/1024, "peak-RSS-MiB")
}

func FuzzRead(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".pdf") {
			f.Add(mustFile(f, e.Name()))
		}
	}
	f.Add(textPDF("Hello", "World"))
	f.Add(loopPDF())
	f.Add(attachmentPDF("factur-x.xml", []byte("<?xml version=\"1.0\"?><a>1</a>")))
	r := mustNewReader(f, docread.Options{Limits: docread.Limits{Timeout: 10 * time.Second, MaxPages: 50}})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"f.pdf", "f.xml", "f.txt"} {
			doc, err := r.Read(context.Background(), bytes.NewReader(data), int64(len(data)), name, "")
			if err != nil {
				wantError(t, err, "")
				continue
			}
			if doc.PageCount < len(doc.Pages) {
				t.Fatalf("got %d pages of %d", len(doc.Pages), doc.PageCount)
			}
		}
	})
}
