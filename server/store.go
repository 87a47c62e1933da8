package server

import (
	"fmt"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/handlers"
	"acctapi/mail"
)

// OpenStore opens the database of the data dir, creating the dir if
// needed, with the writer's batches told to observe (the metrics); nil
// tells no one. Every command opens its store with it.
func OpenStore(cfg *Config, observe db.BatchObserver) (*db.DB, error) {
	if err := cfg.Dirs.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return db.Open(cfg.DatabasePath(), db.Options{
		Synchronous: cfg.Synchronous, Now: cfg.Now,
		EncodeEvent: handlers.EncodeEvent, IdempotencyKey: handlers.IdempotencyKeyOf,
		ObserveBatch: observe, MailHost: mail.Domain(cfg.MailFrom), MailQuota: cfg.MailQuota,
		Teacher: analysis.Teach,
	})
}
