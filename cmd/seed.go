package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"acctapi/auth"
	"acctapi/db/seed"
	"acctapi/server"
)

// seedJSON is what seed --json prints.
type seedJSON struct {
	DataDir       string           `json:"dataDir"`
	FirmID        string           `json:"firmId"`
	AccountantKey string           `json:"accountantKey"`
	ClientKey     string           `json:"clientKey"`
	Seconds       float64          `json:"seconds"`
	Clients       []seedClientJSON `json:"clients"`
}

type seedClientJSON struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Tasks        int      `json:"tasks"`
	WorkspaceIDs []string `json:"workspaceIds"`
}

func newSeedCmd(cfg *Config) *cobra.Command {
	spec := seed.Spec{}
	var (
		rateLimit int
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "Fill a new data dir with a large generated dataset, to evaluate and measure acctapi",
		Long: `Fill a new data dir with a generated dataset: a firm with accountant users,
clients with users, workspaces (with members, folders and labels) and tasks
with mixed statuses, due dates, texts and subtasks, spread over two years. The
first client holds --tasks tasks, 60% of them in its first workspace; every
other client holds --other-tasks. It prints an accountant key (every
permission) and a key of the first client, both with a rate limit of
--rate-limit requests a minute so that load tests measure the server, not the
limiter. The data dir must not hold a database yet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Checked before anything is written, so that a bad flag leaves
			// no database behind.
			if err := spec.Check(); err != nil {
				return err
			}
			if rateLimit < 1 {
				return fmt.Errorf("--rate-limit must be at least 1")
			}
			if _, err := os.Stat(cfg.DatabasePath()); !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("seed fills a new data dir, and %s already exists", cfg.DatabasePath())
			}
			out, err := generate(cmd, cfg, spec, rateLimit)
			if err != nil {
				// The database was written without a journal: half of it is no use.
				for _, suffix := range []string{"", "-wal", "-shm"} {
					os.Remove(cfg.DatabasePath() + suffix)
				}
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cfg.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			printSeeded(cfg, out)
			return nil
		},
	}
	flags := cmd.Flags()
	flags.IntVar(&spec.Clients, "clients", 10, "number of clients")
	flags.IntVar(&spec.Tasks, "tasks", 1_000_000, "tasks of the first client")
	flags.IntVar(&spec.OtherTasks, "other-tasks", 1_000, "tasks of every other client")
	flags.IntVar(&spec.Workspaces, "workspaces", 100, "workspaces of each client")
	flags.IntVar(&spec.ClientUsers, "client-users", 5, "users of each client")
	flags.IntVar(&spec.AccountantUsers, "accountant-users", 5, "accountant users of the firm")
	flags.IntVar(&spec.Files, "files", 0, "documents of the first client, already read (their records, texts and search index, without bytes: for measuring lists and search)")
	flags.IntVar(&rateLimit, "rate-limit", 1_000_000_000, "requests a minute the printed keys may make")
	flags.StringVar(&cfg.FirmName, "firm-name", envOr("ACCTAPI_FIRM_NAME", server.DefaultFirmName), "name of the firm")
	flags.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// generate makes the database and the firm as serve's first start would, fills
// it, and mints the keys.
func generate(cmd *cobra.Command, cfg *Config, spec seed.Spec, rateLimit int) (*seedJSON, error) {
	ctx := cmd.Context()
	start := time.Now()
	store, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	firm, err := server.SetUpFirm(ctx, store, cfg.FirmName)
	if err = errors.Join(err, store.Close()); err != nil {
		return nil, err
	}
	seeded, err := seed.Generate(ctx, cfg.DatabasePath(), firm.ID, spec, time.Now())
	if err != nil {
		return nil, err
	}
	if store, err = openStore(cfg); err != nil {
		return nil, err
	}
	defer store.Close()
	out := &seedJSON{DataDir: cfg.DataDir, FirmID: firm.ID}
	if out.AccountantKey, _, err = auth.MintKey(ctx, store, firm.ID,
		auth.KeySpec{Name: "seed accountant key", RateLimitMax: rateLimit}); err != nil {
		return nil, err
	}
	if out.ClientKey, _, err = auth.MintKey(ctx, store, firm.ID,
		auth.KeySpec{Name: "seed client key", ClientID: seeded.Clients[0].ID, RateLimitMax: rateLimit}); err != nil {
		return nil, err
	}
	for _, c := range seeded.Clients {
		out.Clients = append(out.Clients, seedClientJSON{ID: c.ID, Name: c.Name, Tasks: c.Tasks, WorkspaceIDs: c.Workspaces})
	}
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

func printSeeded(cfg *Config, out *seedJSON) {
	tasks := 0
	for _, c := range out.Clients {
		tasks += c.Tasks
	}
	first := out.Clients[0]
	fmt.Fprintf(cfg.Stdout, `Seeded %s in %.1f s: %d clients and %d tasks. The first client holds %d tasks.

  firm               %s
  first client       %s (%s)
  its big workspace  %s
  accountant key     %s
  client key         %s

Both keys may make --rate-limit requests a minute. Start the server on this data dir and call it:

  acctapi serve --data-dir %s
  curl -H "Authorization: Bearer %s" -H "x-client-id: %s" "http://127.0.0.1:8080/v1/tasks?limit=100"
`, out.DataDir, out.Seconds, len(out.Clients), tasks, first.Tasks, out.FirmID, first.ID, first.Name,
		first.WorkspaceIDs[0], out.AccountantKey, out.ClientKey, out.DataDir, out.ClientKey, first.ID)
}
