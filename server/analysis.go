package server

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	"acctapi/analysis"
	"acctapi/docread"
	"acctapi/ocr"
)

// openOCR starts the OCR engine --ocr names and says in the log whether
// images are read.
func openOCR(cfg *Config, s *Server) (*ocr.Engine, string, error) {
	engine, noOCR, err := ocr.Open(cfg.OCR, cfg.OCRLanguages)
	switch {
	case err != nil:
		return nil, "", err
	case engine == nil && cfg.OCR != "off":
		s.log.Warn("images and scanned pages are not read: "+noOCR,
			"install", "apt-get install tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng")
	case engine != nil:
		s.log.Info("images and scanned pages are read with OCR", "tesseract", engine.Version(), "languages", cfg.OCRLanguages)
	}
	return engine, noOCR, nil
}

// fastWorkers reads the fast lane: its reads take milliseconds, and one
// keeps up with uploads while the cores go to OCR.
const fastWorkers = 1

// openAnalysis opens the document reader, whose engine Run compiles in the
// background after the server listens, and returns the worker that reads
// the stored files with it.
func openAnalysis(ctx context.Context, cfg *Config, s *Server) (*analysis.Worker, error) {
	workers := cmp.Or(cfg.AnalysisWorkers, runtime.NumCPU())
	if workers < 1 || workers > 64 {
		return nil, fmt.Errorf("--analysis-workers must be between 1 and 64, not %d", workers)
	}
	engine, noOCR, err := openOCR(cfg, s)
	if err != nil {
		return nil, err
	}
	// Each lane's workers may read a PDF at once: the OCR lane draws the
	// pages of scans.
	opts := docread.Options{Instances: workers + fastWorkers, CacheDir: filepath.Join(cfg.CachePath(), "pdfium")}
	if len(cfg.CompilePDFReaderArgs) > 0 {
		compile := compileInChild(cfg.CompilePDFReaderArgs)
		opts.Compile = func(ctx context.Context, dir string) error {
			err := compile(ctx, dir)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("the PDF reader is compiled in the server's process: compiling it in another failed", "error", err)
			}
			return err
		}
	}
	s.reader = docread.OpenReader(ctx, opts)
	worker := analysis.New(analysis.Options{Store: s.store, Files: s.files, Reader: s.reader,
		Workers: workers, FastWorkers: fastWorkers,
		OCR: engine, NoOCR: noOCR,
		TempDir: filepath.Join(cfg.FilesPath(), "tmp"),
		Now:     cfg.Now, // the store's clock, as the worker requires
		Logger:  s.log})
	return worker, nil
}
