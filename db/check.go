package db

import (
	"context"
	"fmt"
	"strings"
)

// Check runs SQLite's integrity_check and foreign_key_check and returns an
// error naming what they found, or nil for a sound database: what a restore,
// a crash test or an operator asks of a database before trusting it.
func (db *DB) Check(ctx context.Context) error {
	rows, err := db.read.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return fmt.Errorf("integrity check: %w", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	var violations int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&violations); err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	if violations > 0 {
		problems = append(problems, fmt.Sprintf("%d rows break a foreign key", violations))
	}
	if len(problems) > 0 {
		return fmt.Errorf("database %s is damaged: %s", db.path, strings.Join(problems, "; "))
	}
	return nil
}
