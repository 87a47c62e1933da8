package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docread"
)

// addAnalysisFlags adds the flags of the background reading of files.
func addAnalysisFlags(cmd *cobra.Command, cfg *Config) {
	flags := cmd.Flags()
	flags.IntVar(&cfg.AnalysisWorkers, "analysis-workers", int(envInt("ACCTAPI_ANALYSIS_WORKERS", 1)),
		"how many stored files are read at once in the background, each with up to 256 MiB for a PDF (env ACCTAPI_ANALYSIS_WORKERS)")
}

// CachePath is where serve keeps what it may rebuild: the compiled PDF
// reader.
func (c *Config) CachePath() string { return filepath.Join(c.DataDir, "cache") }

// openAnalysis starts the document reader, paying its start-up once, and
// returns the worker that reads the stored files with it.
func openAnalysis(ctx context.Context, cfg *Config, s *Server) (*analysis.Worker, *docread.Reader, error) {
	workers := cmp.Or(cfg.AnalysisWorkers, 1)
	if workers < 1 || workers > 64 {
		return nil, nil, fmt.Errorf("--analysis-workers must be between 1 and 64, not %d", workers)
	}
	reader, err := docread.NewReader(ctx, docread.Options{Instances: workers, CacheDir: filepath.Join(cfg.CachePath(), "pdfium")})
	if err != nil {
		return nil, nil, fmt.Errorf("start the PDF reader: %w", err)
	}
	worker := analysis.New(analysis.Options{Store: s.store, Files: s.files, Reader: reader, Workers: workers,
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
