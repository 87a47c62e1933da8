package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"acctapi/db"
)

func newFirmCmd(cfg *Config) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "firm",
		Short: "Show and change the firm: its name, its mails' sender name, its default language",
	}
	cmd.AddCommand(newFirmShowCmd(cfg), newFirmSetCmd(cfg))
	return cmd
}

// firmJSON is the --json form of the firm, as GET /v1/firm shows it.
type firmJSON struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	MailFromName *string   `json:"mailFromName"`
	Locale       string    `json:"locale"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// printFirm prints the firm as JSON or as one line per field.
func printFirm(cfg *Config, f *db.Firm, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(cfg.Stdout).Encode(firmJSON{f.ID, f.Name, f.MailFromName, f.Locale, f.CreatedAt, f.UpdatedAt})
	}
	from := f.Name + " (the firm's name)"
	if f.MailFromName != nil {
		from = *f.MailFromName
	}
	_, err := fmt.Fprintf(cfg.Stdout, "id          %s\nname        %s\nmail from   %s\nlocale      %s\ncreated     %s\nupdated     %s\n",
		f.ID, f.Name, from, f.Locale, f.CreatedAt.Format(time.RFC3339), f.UpdatedAt.Format(time.RFC3339))
	return err
}

func newFirmShowCmd(cfg *Config) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the firm",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withFirm(cmd, cfg, func(_ *db.DB, firm *db.Firm) error { return printFirm(cfg, firm, asJSON) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the firm as JSON, as GET /v1/firm answers it")
	return cmd
}

func newFirmSetCmd(cfg *Config) *cobra.Command {
	var name, mailFromName, locale string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "set [--name NAME] [--mail-from-name NAME] [--locale en|de]",
		Short: "Change the firm, as PATCH /v1/firm does; upload pages and mails use the change at once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var u db.FirmUpdate
			flags := cmd.Flags()
			if flags.Changed("name") {
				v, err := firmNameFlag("--name", name)
				if err != nil {
					return err
				}
				u.Name = db.Update[string]{Set: true, Value: &v}
			}
			if flags.Changed("mail-from-name") {
				u.MailFromName.Set = true
				if strings.TrimSpace(mailFromName) != "" {
					v, err := firmNameFlag("--mail-from-name", mailFromName)
					if err != nil {
						return err
					}
					u.MailFromName.Value = &v
				}
			}
			if flags.Changed("locale") {
				if locale != "en" && locale != "de" {
					return fmt.Errorf("--locale must be en or de, not %q", locale)
				}
				u.Locale = db.Update[string]{Set: true, Value: &locale}
			}
			if !u.Name.Set && !u.MailFromName.Set && !u.Locale.Set {
				return fmt.Errorf("nothing to change: give --name, --mail-from-name or --locale")
			}
			return withFirm(cmd, cfg, func(store *db.DB, firm *db.Firm) error {
				f, err := store.UpdateFirm(cmd.Context(), firm.ID, u)
				if err != nil {
					return err
				}
				return printFirm(cfg, f, asJSON)
			})
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&name, "name", "", "the firm's name, shown on upload pages and in mails")
	flags.StringVar(&mailFromName, "mail-from-name", "", `the sender name of the firm's mails; "" makes it the firm's name`)
	flags.StringVar(&locale, "locale", "", "the language of collects and invitations that name none: en or de")
	flags.BoolVar(&asJSON, "json", false, "print the firm as JSON")
	return cmd
}

// firmNameFlag checks a name as PATCH /v1/firm does: trimmed, 1 to 200
// characters, no control characters (a mail's sender name is a header).
func firmNameFlag(flag, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || utf8.RuneCountInString(s) > 200 {
		return "", fmt.Errorf("%s must be 1 to 200 characters", flag)
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return "", fmt.Errorf("%s must not contain control characters", flag)
	}
	return s, nil
}
