package cmd

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"acctapi/db"
)

func newMigrateCmd(cfg *Config) *cobra.Command {
	var noBackup bool
	cmd := &cobra.Command{
		Use:   "migrate [up | down N | force N | version]",
		Short: "Migrate the database schema (default: up to this binary's version)",
		Long: `Migrate the database schema with the migrations built into this binary.
  up        apply every pending migration (the default)
  down N    revert the last N migrations
  force N   record the schema as being at version N, clean, running nothing:
            after a failed migration was repaired by hand
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
			case len(args) == 2 && args[0] == "force":
				if n, err := strconv.Atoi(args[1]); err != nil || n < 0 {
					return fmt.Errorf("migrate force takes a schema version of at least 0, not %q", args[1])
				}
				return nil
			}
			return fmt.Errorf("usage: acctapi migrate [up | down N | force N | version]")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			action := "up"
			if len(args) > 0 {
				action = args[0]
			}
			store, err := openExistingStore(cfg)
			if errors.Is(err, os.ErrNotExist) && action == "up" {
				store, err = openStore(cfg)
			}
			if err != nil {
				return err
			}
			defer store.Close()
			state, err := store.Schema(cmd.Context())
			if err != nil {
				return err
			}
			latest := db.LatestVersion()
			var n int
			if len(args) == 2 {
				n, _ = strconv.Atoi(args[1])
			}
			switch action {
			case "version":
				fmt.Fprintf(cfg.Stdout, "database schema version %d%s; this binary's %d\n", state.Version, dirtyNote(state.Dirty), latest)
				return nil
			case "force":
				if err := store.MigrateForce(n); err != nil {
					return err
				}
				fmt.Fprintf(cfg.Stdout, "schema version recorded as %d (was %d%s); nothing was run\n", n, state.Version, dirtyNote(state.Dirty))
				return nil
			}
			if (action == "up" && state.Version == latest && !state.Dirty) || (action == "down" && state.Version == 0) {
				fmt.Fprintf(cfg.Stdout, "schema version %d: nothing to do\n", state.Version)
				return nil
			}
			if state.Dirty {
				return fmt.Errorf("schema version %d is dirty: a migration failed half-way; repair the schema by hand (or restore a backup), then run `acctapi migrate force N` with the version it is at", state.Version)
			}
			if !state.Empty && !noBackup {
				backup := backupPath(cfg.DatabasePath(), state.Version, time.Now())
				if err := store.Backup(cmd.Context(), backup); err != nil {
					return err
				}
				fmt.Fprintf(cfg.Stdout, "backup written to %s\n", backup)
			}
			if action == "down" {
				err = store.MigrateDown(n)
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

// backupPath names a backup after the schema version and the time, with a
// counter when a backup of the same second exists.
func backupPath(dbPath string, version uint, now time.Time) string {
	base := fmt.Sprintf("%s.backup-v%d-%s", dbPath, version, now.UTC().Format("20060102T150405Z"))
	path := base
	for i := 2; ; i++ {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return path
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
}

func dirtyNote(dirty bool) string {
	if dirty {
		return " (dirty: a migration failed half-way)"
	}
	return ""
}
