package cmd

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"acctapi/db"
	"acctapi/server"
)

// errMigrateUsage answers a migrate command line with the wrong number of
// arguments.
var errMigrateUsage = errors.New("usage: acctapi migrate [up | down N | force N | version]")

func newMigrateCmd(cfg *Config) *cobra.Command {
	var noBackup bool
	up := newMigrateUpCmd(cfg, &noBackup)
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Migrate the database schema (default: up to this binary's version)",
		Long: `Migrate the database schema with the migrations built into this binary.
Without a subcommand, migrate runs up. Before changing a database that holds
data, up and down write a consistent backup copy next to it, named after the
schema version and the time (--no-backup skips).`,
		Args: noMigrateArgs,
		RunE: up.RunE,
	}
	cmd.PersistentFlags().BoolVar(&noBackup, "no-backup", false, "do not write a backup copy before migrating")
	cmd.AddCommand(up, newMigrateDownCmd(cfg, &noBackup), newMigrateForceCmd(cfg), newMigrateVersionCmd(cfg))
	return cmd
}

func newMigrateUpCmd(cfg *Config, noBackup *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "up",
		Short: "Apply every pending migration (the default); creates a missing database",
		Args:  noMigrateArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, state, err := server.OpenSchema(cmd.Context(), &cfg.Config, true)
			if err != nil {
				return err
			}
			defer store.Close()
			if state.Version == db.LatestVersion() && !state.Dirty {
				fmt.Fprintf(cfg.Stdout, "schema version %d: nothing to do\n", state.Version)
				return nil
			}
			return changeSchema(cmd, cfg, store, state, *noBackup, store.MigrateUp)
		},
	}
}

func newMigrateDownCmd(cfg *Config, noBackup *bool) *cobra.Command {
	return &cobra.Command{
		Use:   "down N",
		Short: "Revert the last N migrations",
		Args:  numberArg("a number of steps", 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, _ := strconv.Atoi(args[0])
			store, state, err := server.OpenSchema(cmd.Context(), &cfg.Config, false)
			if err != nil {
				return err
			}
			defer store.Close()
			if state.Version == 0 {
				fmt.Fprintf(cfg.Stdout, "schema version %d: nothing to do\n", state.Version)
				return nil
			}
			return changeSchema(cmd, cfg, store, state, *noBackup, func() error { return store.MigrateDown(n) })
		},
	}
}

func newMigrateForceCmd(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "force N",
		Short: "Record the schema as being at version N, clean, running nothing",
		Long: `Record the schema as being at version N, clean, running nothing: after a
failed migration was repaired by hand.`,
		Args: numberArg("a schema version", 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, _ := strconv.Atoi(args[0])
			store, state, err := server.OpenSchema(cmd.Context(), &cfg.Config, false)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.MigrateForce(v); err != nil {
				return err
			}
			fmt.Fprintf(cfg.Stdout, "schema version recorded as %d (was %d%s); nothing was run\n", v, state.Version, dirtyNote(state.Dirty))
			return nil
		},
	}
}

func newMigrateVersionCmd(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the database's schema version and this binary's",
		Args:  noMigrateArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, state, err := server.OpenSchema(cmd.Context(), &cfg.Config, false)
			if err != nil {
				return err
			}
			defer store.Close()
			fmt.Fprintf(cfg.Stdout, "database schema version %d%s; this binary's %d\n", state.Version, dirtyNote(state.Dirty), db.LatestVersion())
			return nil
		},
	}
}

// noMigrateArgs refuses arguments with the usage of migrate, which names the
// subcommands, rather than cobra's count of them.
func noMigrateArgs(_ *cobra.Command, args []string) error {
	if len(args) != 0 {
		return errMigrateUsage
	}
	return nil
}

// numberArg accepts one argument, a whole number of at least least; what says
// what the number counts. Another count of arguments gets migrate's usage,
// as in noMigrateArgs.
func numberArg(what string, least int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return errMigrateUsage
		}
		if n, err := strconv.Atoi(args[0]); err != nil || n < least {
			return fmt.Errorf("migrate %s takes %s of at least %d, not %q", cmd.Name(), what, least, args[0])
		}
		return nil
	}
}

// changeSchema runs migrate, which moves the schema up or down from
// before, after a backup of a database that holds data unless noBackup is
// set, and says what it did.
func changeSchema(cmd *cobra.Command, cfg *Config, store *db.DB, before db.SchemaState, noBackup bool, migrate func() error) error {
	backup, after, err := server.ChangeSchema(cmd.Context(), &cfg.Config, store, before, !noBackup, migrate)
	if backup != "" {
		fmt.Fprintf(cfg.Stdout, "backup written to %s\n", backup)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stdout, "schema version %d -> %d\n", before.Version, after.Version)
	return nil
}

func dirtyNote(dirty bool) string {
	if dirty {
		return " (dirty: a migration failed half-way)"
	}
	return ""
}
