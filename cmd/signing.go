package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"acctapi/auth"
)

func newSigningCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "signing",
		Short: "Manage the secret that signs file download links",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "rotate",
		Short: "Sign new download links with a new secret",
		Long: `Sign new download links with a new secret. Links signed with the previous
secret keep working until they expire (at most 10 minutes); links signed
before that are refused. A running server picks the new secret up within a second.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openCurrentStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.RotateLinkSigningSecret(cmd.Context(), auth.NewSecret()); err != nil {
				return fmt.Errorf("%w (start acctapi serve once to create the first secret)", err)
			}
			fmt.Fprintln(cfg.Stdout, "rotated the link-signing secret")
			return nil
		},
	})
	return cmd
}
