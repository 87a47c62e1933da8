// Package cmd is acctapi's command line: flags and environment fill one
// Config, which embeds server.Config; each command calls server or a lower
// package with it and prints what it returns.
package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"acctapi/db"
	"acctapi/server"
)

// version and commit are set at build time with -ldflags "-X acctapi/cmd.version=...".
var (
	version = "dev"
	commit  = ""
)

// Config is everything the commands are configured with: the server's
// configuration, which the other commands read too (the data dir, the
// storage), and what only the commands use.
type Config struct {
	server.Config
	Stdout io.Writer
}

// Execute runs the command line and returns the exit code.
func Execute(args []string, stdout, stderr io.Writer) int {
	cfg := &Config{Stdout: stdout, Config: server.Config{Stderr: stderr, Version: version, Commit: buildCommit(),
		Storage: server.StorageConfig{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY")}}}
	root := newRootCmd(cfg)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "acctapi:", sentence(err))
		return 1
	}
	return 0
}

// sentence is err as a person reads it: a store error's code, which the
// API's answers carry for programs, is left out.
func sentence(err error) string {
	var e *db.Error
	if errors.As(err, &e) {
		return strings.Replace(err.Error(), e.Error(), e.Message, 1)
	}
	return err.Error()
}

func newRootCmd(cfg *Config) *cobra.Command {
	root := &cobra.Command{
		Use:           "acctapi",
		Short:         "acctapi serves the accounting collaboration API on SQLite",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	flags := root.PersistentFlags()
	flags.StringVar(&cfg.DataDir, "data-dir", envOr("ACCTAPI_DATA_DIR", "./data"),
		"directory of the database and the file store (env ACCTAPI_DATA_DIR)")
	flags.StringVar(&cfg.Synchronous, "synchronous", envOr("ACCTAPI_SYNCHRONOUS", "FULL"),
		"SQLite synchronous setting: FULL (commits survive power loss), NORMAL or EXTRA (env ACCTAPI_SYNCHRONOUS)")

	root.AddCommand(newServeCmd(cfg), newMigrateCmd(cfg), newKeysCmd(cfg), newFirmCmd(cfg), newRolesCmd(cfg), newSigningCmd(cfg), newStorageCmd(cfg), newSeedCmd(cfg), newBackupCmd(cfg), newRestoreCmd(cfg), newAnalyzeCmd(cfg), newHealthCmd(cfg), newVersionCmd(cfg), newCompilePDFReaderCmd())
	return root
}

func envOr(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return fallback
}

// envList splits a comma-separated environment variable; nil when unset.
func envList(name string) []string {
	v := os.Getenv(name)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func envBool(name string, fallback bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(name)); err == nil {
		return v
	}
	return fallback
}

func envInt(name string, fallback int64) int64 {
	if v, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return fallback
}

// openStore opens the database of the data dir, creating the dir if needed.
func openStore(cfg *Config) (*db.DB, error) { return server.OpenStore(&cfg.Config, nil) }

// openExistingStore opens the data dir's database, refusing to create one.
func openExistingStore(cfg *Config) (*db.DB, error) { return server.OpenExistingStore(&cfg.Config) }

// openCurrentStore opens the existing database at this binary's schema, as
// every command but serve and migrate needs.
func openCurrentStore(cmd *cobra.Command, cfg *Config) (*db.DB, error) {
	return server.OpenCurrentStore(cmd.Context(), &cfg.Config)
}

// printList prints a listing command's items: as a JSON array of their
// toJSON forms, or as a table of the header and one tab-separated row each.
func printList[T, J any](cfg *Config, asJSON bool, items []T, toJSON func(T) J, header string, row func(T) string) error {
	if asJSON {
		out := make([]J, len(items))
		for i, item := range items {
			out[i] = toJSON(item)
		}
		return json.NewEncoder(cfg.Stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(cfg.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, item := range items {
		fmt.Fprintln(tw, row(item))
	}
	return tw.Flush()
}

func buildCommit() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func newVersionCmd(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and schema version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cfg.Stdout, "acctapi %s\ncommit %s\nschema version %d\n", version, buildCommit(), db.LatestVersion())
			return nil
		},
	}
}
