package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"acctapi/db"
	"acctapi/server"
)

// addMailFlags adds the SMTP relay and the sender address of serve.
func addMailFlags(cmd *cobra.Command, cfg *Config) {
	flags := cmd.Flags()
	flags.StringVar(&cfg.SMTPURL, "smtp-url", envOr("ACCTAPI_SMTP_URL", ""),
		"SMTP relay that sends collect links, reminders and invitations: smtp://user:pass@host:587 (STARTTLS required; "+
			"?insecure=true for a relay on this machine) or smtps://user:pass@host:465; no mail is sent when empty (env ACCTAPI_SMTP_URL)")
	flags.StringVar(&cfg.SMTPURLFile, "smtp-url-file", envOr("ACCTAPI_SMTP_URL_FILE", ""),
		"file holding the --smtp-url, so that its password is on no command line (env ACCTAPI_SMTP_URL_FILE)")
	flags.StringVar(&cfg.MailFrom, "mail-from", envOr("ACCTAPI_MAIL_FROM", ""),
		"sender address of the mails, shown beside the firm's name; required with --smtp-url (env ACCTAPI_MAIL_FROM)")
	flags.IntVar(&cfg.MailQuota, "mail-quota", int(envInt("ACCTAPI_MAIL_QUOTA", db.DefaultMailQuota)),
		fmt.Sprintf("mails a firm may send an hour, at least %d: past it a request that would mail answers 429 and queues nothing, "+
			"and reminders wait (env ACCTAPI_MAIL_QUOTA)", server.MinMailQuota))
}
