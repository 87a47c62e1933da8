package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"acctapi/server"
)

// addStorageFlags adds the flags that say where the file store is and how
// to reach a bucket.
func addStorageFlags(cmd *cobra.Command, s *server.StorageConfig) {
	flags := cmd.Flags()
	flags.StringVar(&s.Location, "storage", envOr("ACCTAPI_STORAGE", "local"),
		"where the bytes of uploads go: local (the data dir's files/) or s3://BUCKET[/PREFIX], an S3-compatible bucket; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (env ACCTAPI_STORAGE)")
	addBucketFlags(cmd, s)
}

// addBucketFlags adds the flags that say how to reach a bucket.
func addBucketFlags(cmd *cobra.Command, s *server.StorageConfig) {
	flags := cmd.Flags()
	flags.StringVar(&s.Endpoint, "s3-endpoint", envOr("ACCTAPI_S3_ENDPOINT", ""),
		"S3 API address: http(s)://host[:port], or a host spoken to over HTTPS; default AWS S3 (env ACCTAPI_S3_ENDPOINT)")
	flags.StringVar(&s.Region, "s3-region", envOr("ACCTAPI_S3_REGION", ""),
		"the bucket's region; asked of the bucket once when empty (env ACCTAPI_S3_REGION)")
	flags.BoolVar(&s.PathStyle, "s3-path-style", envBool("ACCTAPI_S3_PATH_STYLE", false),
		"name the bucket in the path, not the host name: MinIO, Ceph, Garage, versitygw (env ACCTAPI_S3_PATH_STYLE)")
}

// addSweepFlag adds the flag of the bucket's sweep, which only serve runs.
func addSweepFlag(cmd *cobra.Command, s *server.StorageConfig) {
	cmd.Flags().DurationVar(&s.SweepAfter, "s3-sweep-after", envDuration("ACCTAPI_S3_SWEEP_AFTER", server.DefaultSweepAfter),
		"how old an object without a row, or an upload never completed, must be before a sweep removes it (env ACCTAPI_S3_SWEEP_AFTER)")
}

// envDuration is the duration in the environment variable, else fallback.
func envDuration(name string, fallback time.Duration) time.Duration {
	if v, err := time.ParseDuration(envOr(name, "")); err == nil {
		return v
	}
	return fallback
}

func newStorageCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Manage the file store",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newStorageMigrateCmd(cfg))
	return cmd
}

func newStorageMigrateCmd(cfg *Config) *cobra.Command {
	var to string
	cmd := &cobra.Command{
		Use:   "migrate --to s3://BUCKET[/PREFIX] | local",
		Short: "Copy every stored file to another file store",
		Long: `Copy the bytes of every file the database records from the file store that
--storage names (local by default) to the one --to names, each checked against
its recorded size and SHA-256 on the way. Files already in the target with the
recorded SHA-256 are skipped, so the command can be stopped and run again: it
takes up where it stopped and changes nothing already in place. It changes
nothing in the source either. Files uploaded while it runs are copied by the
next run: run it once while the server serves, stop the server, run it again,
then start the server with --storage set to the target.

The S3 flags apply to whichever side is a bucket. On a terminal it shows a
progress bar of files and bytes; otherwise it prints a line per file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return migrateStorage(cmd.Context(), cfg, to)
		},
	}
	addStorageFlags(cmd, &cfg.Storage)
	cmd.Flags().StringVar(&to, "to", "", "the file store to copy to: local (the data dir's files/) or s3://BUCKET[/PREFIX]")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

// migrateStorage copies the data dir's files from cfg.Storage to the store
// named to, showing its progress.
func migrateStorage(ctx context.Context, cfg *Config, to string) error {
	start := time.Now()
	show := newMigrationProgress(cfg.Stdout)
	from, done, err := server.MigrateFiles(ctx, &cfg.Config, to, show.update)
	show.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stdout, "migrated %d files (%s) from %s to %s in %.1f s: %d copied and verified, %d already in place\n",
		done.TotalFiles, byteSize(done.TotalBytes), from, to, time.Since(start).Seconds(), done.Copied, done.Skipped)
	return nil
}
