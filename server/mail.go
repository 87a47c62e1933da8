package server

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"acctapi/mail"
)

// MinMailQuota is the lowest --mail-quota: below it a firm's ordinary
// month of links, reminders and invitations would not go out.
const MinMailQuota = 100

// checkMailQuota refuses a --mail-quota below MinMailQuota.
func checkMailQuota(cfg *Config) error {
	if cfg.MailQuota != 0 && cfg.MailQuota < MinMailQuota {
		return fmt.Errorf("--mail-quota must be at least %d mails an hour, not %d", MinMailQuota, cfg.MailQuota)
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
