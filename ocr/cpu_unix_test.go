//go:build unix

package ocr

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOCRCPU reads the images ACCTAPI_OCR_PAGES names (a glob: photos of
// real pages, kept outside the repository) and reports the processor time
// each page took, tesseract's and this process's: on average at most 4 s a
// page, as documented.
func TestOCRCPU(t *testing.T) {
	glob := os.Getenv("ACCTAPI_OCR_PAGES")
	if glob == "" {
		t.Skip("set ACCTAPI_OCR_PAGES to a glob of page images, e.g. '/data/sroie/img/0[0-1]?.jpg'")
	}
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no image matches %q: %v", glob, err)
	}
	e := mustEngine(t, Options{})
	cpu := func() float64 {
		var self, children syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		return float64(self.Utime.Nano()+self.Stime.Nano()+children.Utime.Nano()+children.Stime.Nano()) / 1e9
	}
	var total float64
	pages := 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		start := cpu()
		read, err := e.RecognizeFile(context.Background(), data, "")
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		took := cpu() - start
		total += took
		pages += len(read)
		t.Logf("%s: %.2f s of processor time, turned %d°, confidence %.0f", filepath.Base(path), took, read[0].Rotated, read[0].Confidence)
	}
	mean := total / float64(pages)
	t.Logf("%d pages, %.2f s of processor time a page", pages, mean)
	if mean > 4 {
		t.Errorf("%.2f s of processor time a page, over 4 s", mean)
	}
}
