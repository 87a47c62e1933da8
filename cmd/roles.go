package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"acctapi/db"
)

func newRolesCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "roles",
		Short: "Create and list the firm's roles for accountant users",
	}
	cmd.AddCommand(newRolesCreateCmd(cfg), newRolesListCmd(cfg))
	return cmd
}

// roleJSON is the --json form of a role, as the API shows it.
type roleJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CustomName *string `json:"customName"`
}

func newRolesCreateCmd(cfg *Config) *cobra.Command {
	var name string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Create a custom role; its id is what POST /v1/admin/users takes as role",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name = strings.TrimSpace(name)
			if name == "" || utf8.RuneCountInString(name) > 100 {
				return fmt.Errorf("--name must be 1 to 100 characters")
			}
			return withFirm(cmd, cfg, func(store *db.DB, firm *db.Firm) error {
				r, err := store.CreateRole(cmd.Context(), firm.ID, name)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(cfg.Stdout).Encode(roleJSON{r.ID, r.Name, r.CustomName})
				}
				fmt.Fprintln(cfg.Stdout, r.ID)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the role's name, as the firm calls it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the role as JSON")
	return cmd
}

func newRolesListCmd(cfg *Config) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the firm's roles, built-in and custom",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withFirm(cmd, cfg, func(store *db.DB, firm *db.Firm) error {
				roles, err := store.ListRoles(cmd.Context(), firm.ID)
				if err != nil {
					return err
				}
				toJSON := func(r *db.Role) roleJSON { return roleJSON{r.ID, r.Name, r.CustomName} }
				return printList(cfg, asJSON, roles, toJSON, "ID\tNAME\tCUSTOM NAME", func(r *db.Role) string {
					return r.ID + "\t" + r.Name + "\t" + customName(r)
				})
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the roles as a JSON array")
	return cmd
}

func customName(r *db.Role) string {
	if r.CustomName == nil {
		return "-"
	}
	return *r.CustomName
}
