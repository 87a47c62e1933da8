package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"acctapi/backup"
	"acctapi/db"
	"acctapi/server"
)

// backupJSON is what backup --json and restore --json print: the manifest,
// the directory written and how long it took.
type backupJSON struct {
	Dir     string  `json:"dir"`
	Seconds float64 `json:"seconds"`
	backup.Manifest
}

func newBackupCmd(cfg *Config) *cobra.Command {
	var (
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "backup --out DIR",
		Short: "Write a consistent backup of the data dir, also while the server runs",
		Long: `Write a consistent backup of the data dir into DIR: the database as of one
moment (VACUUM INTO from one snapshot, without holding up the server's writes),
the bytes of exactly the files that database records, each checked against its
recorded sha256, and backup.json, which acctapi restore verifies. With --storage
s3://..., the files stay in the bucket: the backup holds objects.jsonl instead,
the key, size and sha256 of the object of every file the database records, each
checked to be in the bucket with that size (the bucket's versioning and
replication protect the bytes). The backup is
built in a temporary directory beside DIR and renamed into place when complete.
DIR must not exist or be empty.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			bucket, err := server.Bucket(cmd.Context(), &cfg.Config)
			if err != nil {
				return err
			}
			m, err := backup.Write(cmd.Context(), backup.WriteOptions{
				DataDir: cfg.DataDir,
				Bucket:  bucket,
				Open:    func() (*db.DB, error) { return openExistingStore(cfg) },
				Out:     out,
				Version: version,
				Commit:  buildCommit(),
				Now:     cfg.Now,
				Dirs:    cfg.Dirs,
			})
			if err != nil {
				return err
			}
			res := backupJSON{Dir: out, Seconds: time.Since(start).Seconds(), Manifest: *m}
			if asJSON {
				return json.NewEncoder(cfg.Stdout).Encode(res)
			}
			fmt.Fprintf(cfg.Stdout, "backed up %s to %s in %.1f s: schema version %d, database %s, files: %d (%s)\n",
				cfg.DataDir, out, res.Seconds, m.SchemaVersion, byteSize(m.Database.Size), m.Files.Count, byteSize(m.Files.Bytes))
			if m.Objects != nil {
				fmt.Fprintf(cfg.Stdout, "the files stay in %s: %s lists their objects (key, size, sha256); protect the bucket with versioning and replication\n",
					m.Objects.Location, backup.ObjectsName)
			}
			return nil
		},
	}
	addStorageFlags(cmd, &cfg.Storage)
	cmd.Flags().StringVar(&out, "out", "", "directory to write the backup to; must not exist or be empty")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func newRestoreCmd(cfg *Config) *cobra.Command {
	var (
		from   string
		force  bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "restore --from DIR --data-dir DIR2 [--force]",
		Short: "Restore a backup into a data dir",
		Long: `Restore the backup in DIR (written by acctapi backup) as the data dir DIR2.
Before anything in DIR2 changes, it verifies the whole backup: the manifest, the
database's sha256, SQLite's integrity and foreign key checks, and every file's
sha256 against its row. It refuses a DIR2 that is not empty unless --force is
given; then it replaces DIR2's contents whole (the new data dir is built beside
it and swapped in), and refuses while another process, such as a server, has
DIR2's database open.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			m, err := backup.Restore(cmd.Context(), backup.RestoreOptions{From: from, DataDir: cfg.DataDir, Force: force, Dirs: cfg.Dirs})
			if err != nil {
				return err
			}
			res := backupJSON{Dir: cfg.DataDir, Seconds: time.Since(start).Seconds(), Manifest: *m}
			if asJSON {
				return json.NewEncoder(cfg.Stdout).Encode(res)
			}
			fmt.Fprintf(cfg.Stdout, "restored %s (taken %s) into %s in %.1f s: schema version %d, database %s, files: %d (%s)\n",
				from, m.CreatedAt.Format(time.RFC3339), cfg.DataDir, res.Seconds, m.SchemaVersion,
				byteSize(m.Database.Size), m.Files.Count, byteSize(m.Files.Bytes))
			if m.Objects != nil {
				fmt.Fprintf(cfg.Stdout, "its files are in %s: serve with --storage %s\n", m.Objects.Location, strings.TrimSuffix(m.Objects.Location, "/"))
			}
			if latest := db.LatestVersion(); m.SchemaVersion < latest {
				fmt.Fprintf(cfg.Stdout, "its schema is older than this binary's %d: run acctapi migrate before acctapi serve\n", latest)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "directory of the backup to restore")
	cmd.Flags().BoolVar(&force, "force", false, "replace the contents of a data dir that is not empty")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

// byteSize formats a number of bytes for people.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
