package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docread"
	"acctapi/ocr"
)

// addAnalysisFlags adds the flags of the background reading of files.
func addAnalysisFlags(cmd *cobra.Command, cfg *Config) {
	flags := cmd.Flags()
	flags.IntVar(&cfg.AnalysisWorkers, "analysis-workers", int(envInt("ACCTAPI_ANALYSIS_WORKERS", int64(runtime.NumCPU()))),
		"how many images and scanned PDFs are read with OCR at once in the background (default: the number of cores); "+
			"e-invoices, text files and PDFs with a text layer have a worker of their own and never wait for OCR (env ACCTAPI_ANALYSIS_WORKERS)")
	flags.StringVar(&cfg.CacheDir, "cache-dir", envOr("ACCTAPI_CACHE_DIR", ""),
		"where the compiled PDF reader is kept between starts (about 22 MB; safe to delete); default the data dir's cache/ (env ACCTAPI_CACHE_DIR)")
	flags.StringVar(&cfg.OCR, "ocr", envOr("ACCTAPI_OCR", "auto"),
		"OCR of images and scanned pages: auto (the tesseract on PATH, if any), off, or the path of tesseract (env ACCTAPI_OCR)")
	flags.StringVar(&cfg.OCRLanguages, "ocr-languages", envOr("ACCTAPI_OCR_LANGUAGES", "deu+eng"),
		"the languages OCR reads, as tesseract names them (env ACCTAPI_OCR_LANGUAGES)")
}

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

// CachePath is where serve keeps what it may rebuild: the compiled PDF
// reader. --cache-dir, else the data dir's cache/.
func (c *Config) CachePath() string { return cmp.Or(c.CacheDir, filepath.Join(c.DataDir, "cache")) }

// fastWorkers reads the fast lane: its reads take milliseconds, and one
// keeps up with uploads while the cores go to OCR.
const fastWorkers = 1

// openAnalysis opens the document reader, whose engine Run compiles in the
// background after the server listens, and returns the worker that reads
// the stored files with it.
func openAnalysis(ctx context.Context, cfg *Config, s *Server) (*analysis.Worker, *docread.Reader, error) {
	workers := cmp.Or(cfg.AnalysisWorkers, runtime.NumCPU())
	if workers < 1 || workers > 64 {
		return nil, nil, fmt.Errorf("--analysis-workers must be between 1 and 64, not %d", workers)
	}
	engine, noOCR, err := openOCR(cfg, s)
	if err != nil {
		return nil, nil, err
	}
	// Each lane's workers may read a PDF at once: the OCR lane draws the
	// pages of scans.
	reader := docread.OpenReader(ctx, docread.Options{Instances: workers + fastWorkers, CacheDir: filepath.Join(cfg.CachePath(), "pdfium")})
	worker := analysis.New(analysis.Options{Store: s.store, Files: s.files, Reader: reader,
		Workers: workers, FastWorkers: fastWorkers,
		OCR: engine, NoOCR: noOCR,
		TempDir: filepath.Join(cfg.FilesPath(), "tmp"),
		Now:     cfg.Now, // the store's clock, as the worker requires
		Logger:  s.log})
	return worker, reader, nil
}

func newAnalyzeCmd(cfg *Config) *cobra.Command {
	var all, failed, skipped bool
	cmd := &cobra.Command{
		Use:   "analyze (--all | --failed | --skipped)",
		Short: "Read stored files again",
		Long: `Queue stored files of every firm to be read again by the server's background
reader: --failed those whose reading failed, --skipped those skipped (after
installing OCR, say), --all every file. Works while serve runs on the same data
dir; the server takes them up within seconds.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var statuses []string
			switch {
			case all:
				statuses = []string{db.AnalysisPending, db.AnalysisDone, db.AnalysisFailed, db.AnalysisSkipped}
			case failed || skipped:
				if failed {
					statuses = append(statuses, db.AnalysisFailed)
				}
				if skipped {
					statuses = append(statuses, db.AnalysisSkipped)
				}
			default:
				return errors.New("say which files to read again: --all, --failed or --skipped")
			}
			store, err := openCurrentStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			n, err := store.QueueAnalyses(cmd.Context(), statuses)
			if err != nil {
				return err
			}
			fmt.Fprintf(cfg.Stdout, "queued %d files to be read again\n", n)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every file")
	cmd.Flags().BoolVar(&failed, "failed", false, "the files whose reading failed")
	cmd.Flags().BoolVar(&skipped, "skipped", false, "the files that were skipped")
	cmd.MarkFlagsMutuallyExclusive("all", "failed")
	cmd.MarkFlagsMutuallyExclusive("all", "skipped")
	return cmd
}
