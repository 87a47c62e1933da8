package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"acctapi/db"
	"acctapi/mail"
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
			"and reminders wait (env ACCTAPI_MAIL_QUOTA)", minMailQuota))
}

// minMailQuota is the lowest --mail-quota: below it a firm's ordinary
// month of links, reminders and invitations would not go out.
const minMailQuota = 100

// checkMailQuota refuses a --mail-quota below minMailQuota.
func checkMailQuota(cfg *Config) error {
	if cfg.MailQuota != 0 && cfg.MailQuota < minMailQuota {
		return fmt.Errorf("--mail-quota must be at least %d mails an hour, not %d", minMailQuota, cfg.MailQuota)
	}
	return nil
}

// mailRelay reads --smtp-url (or --smtp-url-file) and --mail-from: nil
// when mail is off.
func mailRelay(cfg *Config) (*mail.Relay, string, error) {
	smtpURL := cfg.SMTPURL
	if cfg.SMTPURLFile != "" {
		if cfg.SMTPURL != "" {
			return nil, "", errors.New("--smtp-url and --smtp-url-file name the relay twice: give one")
		}
		data, err := os.ReadFile(cfg.SMTPURLFile)
		if err != nil {
			// The error names the file, never what it holds.
			return nil, "", fmt.Errorf("--smtp-url-file: %w", err)
		}
		smtpURL = strings.TrimSpace(string(data))
		if smtpURL == "" {
			return nil, "", fmt.Errorf("--smtp-url-file: %s is empty", cfg.SMTPURLFile)
		}
	}
	switch {
	case smtpURL == "" && cfg.MailFrom == "":
		return nil, "", nil
	case smtpURL == "":
		return nil, "", errors.New("--mail-from needs --smtp-url: the relay that sends the mails")
	case cfg.MailFrom == "":
		return nil, "", errors.New("--smtp-url needs --mail-from: the address the mails come from")
	}
	relay, err := mail.ParseRelay(smtpURL)
	if err != nil {
		// The URL may hold a password: the error names the flag, not it.
		return nil, "", fmt.Errorf("--smtp-url: %w", err)
	}
	from, err := mail.ParseFrom(cfg.MailFrom)
	if err != nil {
		return nil, "", fmt.Errorf("--mail-from: %w", err)
	}
	relay.RootCAs = cfg.SMTPRootCAs
	return relay, from, nil
}
