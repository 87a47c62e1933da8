package cmd

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"acctapi/db"
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
