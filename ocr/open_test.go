package ocr_test

import (
	"path/filepath"
	"testing"

	"acctapi/ocr"
)

func TestOpen(t *testing.T) {
	if engine, why, err := ocr.Open("off", "deu+eng"); engine != nil || why == "" || err != nil {
		t.Errorf(`Open("off"): got %v, %q, %v, want no engine and why`, engine, why, err)
	}
	missing := filepath.Join(t.TempDir(), "tesseract")
	if engine, _, err := ocr.Open(missing, "deu+eng"); engine != nil || err == nil {
		t.Errorf("Open(a path that is no program): got %v, %v, want an error", engine, err)
	}
	t.Setenv("PATH", t.TempDir())
	if engine, why, err := ocr.Open("auto", "deu+eng"); engine != nil || why != "tesseract is not installed" || err != nil {
		t.Errorf(`Open("auto") without tesseract on PATH: got %v, %q, %v, want no engine and why`, engine, why, err)
	}
}
