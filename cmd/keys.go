package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"acctapi/auth"
	"acctapi/db"
)

func newKeysCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create, list and revoke API keys",
	}
	cmd.AddCommand(newKeysCreateCmd(cfg), newKeysListCmd(cfg), newKeysRevokeCmd(cfg))
	return cmd
}

// keyJSON is the --json form of a key; Key only when it was just minted.
type keyJSON struct {
	ID                  string     `json:"id"`
	Key                 string     `json:"key,omitempty"`
	Type                auth.Kind  `json:"type"`
	AccountantID        string     `json:"accountantId"`
	ClientID            string     `json:"clientId,omitempty"`
	Name                string     `json:"name"`
	Permissions         []string   `json:"permissions"`
	RateLimitMax        int        `json:"rateLimitMax"`
	RateLimitTimeWindow int64      `json:"rateLimitTimeWindow"`
	CreatedAt           time.Time  `json:"createdAt"`
	ExpiresAt           *time.Time `json:"expiresAt,omitempty"`
	RevokedAt           *time.Time `json:"revokedAt,omitempty"`
}

func toKeyJSON(k *db.APIKey, key string) keyJSON {
	out := keyJSON{
		ID: k.ID, Key: key, Type: auth.Accountant, AccountantID: k.FirmID, Name: k.Name,
		Permissions: k.Permissions, RateLimitMax: k.RateLimitMax, RateLimitTimeWindow: k.RateLimitWindowMS,
		CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
	}
	if k.ClientID != nil {
		out.Type, out.ClientID = auth.Client, *k.ClientID
	}
	if out.Permissions == nil {
		out.Permissions = []string{}
	}
	return out
}

// withFirm opens the current database, finds the deployment's firm, which
// the keys and roles commands act for, runs fn with both and closes the
// database.
func withFirm(cmd *cobra.Command, cfg *Config, fn func(store *db.DB, firm *db.Firm) error) error {
	store, err := openCurrentStore(cmd, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	firm, err := store.DeploymentFirm(cmd.Context())
	if err != nil {
		return fmt.Errorf("%w (start acctapi serve once to set up the firm)", err)
	}
	return fn(store, firm)
}

func newKeysCreateCmd(cfg *Config) *cobra.Command {
	var (
		spec      auth.KeySpec
		perms     string
		windowMS  int64
		expiresIn time.Duration
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Mint an API key and print it (shown once)",
		Long: `Mint an API key. It is printed once, alone on stdout, and stored only as a
hash; its id, which keys list and keys revoke name, goes to stderr.

Permissions (--permissions, comma-separated; default all the key's kind may hold):
` + permissionLines(auth.PermissionsFor(auth.Accountant)) + `
Client keys (--client) may hold all but these:
` + permissionLines(auth.FirmOnly()),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("permissions") {
				spec.Permissions = strings.Split(perms, ",")
			}
			if spec.RateLimitMax < 1 || windowMS < 1 {
				return fmt.Errorf("--rate-limit-max and --rate-limit-window-ms must be at least 1")
			}
			spec.RateLimitWindow = time.Duration(windowMS) * time.Millisecond
			spec.ClientID = strings.ToLower(spec.ClientID)
			if expiresIn < 0 {
				return fmt.Errorf("--expires-in must be positive")
			}
			if expiresIn > 0 {
				at := time.Now().Add(expiresIn).UTC()
				spec.ExpiresAt = &at
			}
			return withFirm(cmd, cfg, func(store *db.DB, firm *db.Firm) error { return mintKey(cmd, cfg, store, firm, spec, asJSON) })
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&spec.ClientID, "client", "", "make a client key bound to this client id (default: an accountant key)")
	flags.StringVar(&spec.Name, "name", "", "a name to recognise the key by")
	flags.StringVar(&perms, "permissions", "", "comma-separated permissions (default: all that the key's kind may hold, for a client key all but mail:send)")
	flags.IntVar(&spec.RateLimitMax, "rate-limit-max", auth.DefaultRateLimitMax, "requests allowed per window")
	flags.Int64Var(&windowMS, "rate-limit-window-ms", auth.DefaultRateLimitWindow.Milliseconds(), "rate-limit window in milliseconds")
	flags.DurationVar(&expiresIn, "expires-in", 0, "expire the key after this long, e.g. 720h (default: never)")
	flags.BoolVar(&asJSON, "json", false, "print the key and its record as JSON")
	return cmd
}

// mintKey mints the key spec asks for and prints it: alone on stdout, its id
// on stderr; or both as JSON.
func mintKey(cmd *cobra.Command, cfg *Config, store *db.DB, firm *db.Firm, spec auth.KeySpec, asJSON bool) error {
	key, stored, err := auth.MintKey(cmd.Context(), store, firm.ID, spec)
	if db.ErrorCode(err) == db.ENOTFOUND && spec.ClientID != "" {
		return fmt.Errorf("no client %s in the firm %q: --client takes the id of one of its clients", spec.ClientID, firm.Name)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(cfg.Stdout).Encode(toKeyJSON(stored, key))
	}
	kind := "an accountant key"
	if spec.ClientID != "" {
		kind = "a client key of " + spec.ClientID
	}
	fmt.Fprintf(cfg.Stderr, "acctapi: minted %s, id %s. The key is shown this once and stored only as a hash: keep it now.\n", kind, stored.ID)
	fmt.Fprintln(cfg.Stdout, key)
	return nil
}

// permissionLines writes permissions one resource, read and write, a line.
func permissionLines(perms []auth.Permission) string {
	var b strings.Builder
	for i, p := range perms {
		if i%2 == 0 {
			b.WriteString("\n  " + string(p))
		} else {
			b.WriteString(" " + string(p))
		}
	}
	return strings.TrimPrefix(b.String(), "\n")
}

func newKeysListCmd(cfg *Config) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the firm's API keys (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withFirm(cmd, cfg, func(store *db.DB, firm *db.Firm) error {
				keys, err := store.ListAPIKeys(cmd.Context(), firm.ID)
				if err != nil {
					return err
				}
				toJSON := func(k *db.APIKey) keyJSON { return toKeyJSON(k, "") }
				return printList(cfg, asJSON, keys, toJSON, "ID\tTYPE\tCLIENT\tNAME\tRATE LIMIT\tCREATED\tSTATUS", func(k *db.APIKey) string {
					j := toJSON(k)
					client := j.ClientID
					if client == "" {
						client = "-"
					}
					return fmt.Sprintf("%s\t%s\t%s\t%s\t%d/%dms\t%s\t%s", j.ID, j.Type, client, j.Name,
						j.RateLimitMax, j.RateLimitTimeWindow, j.CreatedAt.Format(time.RFC3339), keyStatus(k))
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the keys as a JSON array")
	return cmd
}

func keyStatus(k *db.APIKey) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked " + k.RevokedAt.Format(time.RFC3339)
	case k.ExpiresAt != nil && !time.Now().Before(*k.ExpiresAt):
		return "expired " + k.ExpiresAt.Format(time.RFC3339)
	case k.ExpiresAt != nil:
		return "active until " + k.ExpiresAt.Format(time.RFC3339)
	}
	return "active"
}

func newKeysRevokeCmd(cfg *Config) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key; a running server refuses it within 2 seconds",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withFirm(cmd, cfg, func(store *db.DB, firm *db.Firm) error {
				k, err := store.RevokeAPIKey(cmd.Context(), firm.ID, strings.ToLower(args[0]))
				if err != nil {
					return err
				}
				fmt.Fprintf(cfg.Stdout, "revoked %s at %s\n", k.ID, k.RevokedAt.Format(time.RFC3339))
				return nil
			})
		},
	}
}
