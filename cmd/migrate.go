package cmd

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"acctapi/db"
)

func newMigrateCmd(cfg *Config) *cobra.Command {
	var noBackup bool
	cmd := &cobra.Command{
		Use:   "migrate [up | down N | version]",
		Short: "Migrate the database schema (default: up to this binary's version)",
		Long: `Migrate the database schema with the migrations built into this binary.
  up        apply every pending migration (the default)
  down N    revert the last N migrations
  version   print the database's schema version and this binary's
Before changing a database that holds data it writes a consistent backup copy
next to it, named after the schema version and the time (--no-backup skips).`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0, len(args) == 1 && (args[0] == "up" || args[0] == "version"):
				return nil
			case len(args) == 2 && args[0] == "down":
				if n, err := strconv.Atoi(args[1]); err != nil || n < 1 {
					return fmt.Errorf("migrate down takes a number of steps of at least 1, not %q", args[1])
				}
				return nil
			}
			return fmt.Errorf("usage: acctapi migrate [up | down N | version]")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			state, err := store.Schema(cmd.Context())
			if err != nil {
				return err
			}
			action := "up"
			if len(args) > 0 {
				action = args[0]
			}
			latest := db.LatestVersion()
			if action == "version" {
				fmt.Fprintf(cfg.Stdout, "database schema version %d%s; this binary's %d\n", state.Version, dirtyNote(state.Dirty), latest)
				return nil
			}
			steps := 0
			if action == "down" {
				steps, _ = strconv.Atoi(args[1])
			}
			if (action == "up" && state.Version == latest && !state.Dirty) || (action == "down" && state.Version == 0) {
				fmt.Fprintf(cfg.Stdout, "schema version %d: nothing to do\n", state.Version)
				return nil
			}
			if !state.Empty && !noBackup {
				backup := fmt.Sprintf("%s.backup-v%d-%s", cfg.DatabasePath(), state.Version, time.Now().UTC().Format("20060102T150405Z"))
				if err := store.Backup(cmd.Context(), backup); err != nil {
					return err
				}
				fmt.Fprintf(cfg.Stdout, "backup written to %s\n", backup)
			}
			if action == "down" {
				err = store.MigrateDown(steps)
			} else {
				err = store.MigrateUp()
			}
			if err != nil {
				return err
			}
			after, err := store.Schema(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(cfg.Stdout, "schema version %d -> %d\n", state.Version, after.Version)
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBackup, "no-backup", false, "do not write a backup copy before migrating")
	return cmd
}

func dirtyNote(dirty bool) string {
	if dirty {
		return " (dirty: a migration failed half-way)"
	}
	return ""
}
