package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TransactionsToMatch returns the client's transactions the job is about
// that matching may change: not decided by a person, not matched; for a
// file, also those it was matched to automatically (its total may have
// been corrected since).
func (db *DB) TransactionsToMatch(ctx context.Context, j *BankJob) ([]*Transaction, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var rows *sql.Rows
	if j.Target == BankJobStatement {
		rows, err = tx.QueryContext(ctx, `SELECT `+transactionColumns+` FROM bank_transactions
			WHERE client_id = ? AND statement_id = ? AND decided_by_user = 0 AND status IN ('unmatched', 'suggested')
			ORDER BY booking_date, id`, j.ClientID, j.TargetID)
	} else {
		rows, err = tx.QueryContext(ctx, `SELECT `+transactionColumns+` FROM bank_transactions
			WHERE client_id = ? AND decided_by_user = 0 AND `+visibleTransaction+` AND (
			  (status IN ('unmatched', 'suggested') AND amount IN (
			    SELECT total_amount FROM files WHERE client_id = ? AND id = ? AND total_amount IS NOT NULL
			    UNION ALL SELECT -total_amount FROM files WHERE client_id = ? AND id = ? AND total_amount IS NOT NULL))
			  OR id IN (SELECT transaction_id FROM bank_transaction_matches WHERE client_id = ? AND file_id = ? AND source = 'auto'))
			ORDER BY booking_date, id`,
			j.ClientID, j.ClientID, j.TargetID, j.ClientID, j.TargetID, j.ClientID, j.TargetID)
	}
	if err != nil {
		return nil, fmt.Errorf("transactions to match: %w", err)
	}
	defer rows.Close()
	var txs []*Transaction
	for rows.Next() {
		t, err := scanTransaction(rows)
		if err != nil {
			return nil, err
		}
		txs = append(txs, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("transactions to match: %w", err)
	}
	rows.Close()
	return txs, loadMatches(ctx, tx, j.ClientID, txs)
}

// MatchCandidate is a document of the client with a total: one that may
// explain a transaction, or be named in one's remittance.
type MatchCandidate struct {
	FileID string
	Kind   *string
	// DocumentDate is the file's date when a person gave it, else nil.
	DocumentDate *time.Time
	Fields       DocumentFields
	TotalAmount  int64
	// ConfirmedFor are the transactions the document is confirmed for: a
	// document that explains one is not certain for another.
	ConfirmedFor []string
}

// MatchDocuments returns the client's documents with a total, by the index
// of totals, with the transactions each is confirmed for.
func (db *DB) MatchDocuments(ctx context.Context, clientID string) ([]*MatchCandidate, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+fileColumns+`, total_amount FROM files
		WHERE client_id = ? AND total_amount IS NOT NULL ORDER BY id`, clientID)
	if err != nil {
		return nil, fmt.Errorf("match documents: %w", err)
	}
	defer rows.Close()
	var out []*MatchCandidate
	byID := map[string]*MatchCandidate{}
	for rows.Next() {
		var total int64
		var c MatchCandidate
		f, err := scanFile(scanTotal{rows, &total})
		if err != nil {
			return nil, err
		}
		c.FileID, c.Kind, c.TotalAmount = f.ID, f.Kind, total
		if f.DocumentDateSource != nil && *f.DocumentDateSource == SourceUser {
			c.DocumentDate = &f.DocumentDate
		}
		if f.Analysis.Fields != nil {
			c.Fields = *f.Analysis.Fields
		}
		out = append(out, &c)
		byID[c.FileID] = &c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("match documents: %w", err)
	}
	rows.Close()
	confirmed, err := tx.QueryContext(ctx, `SELECT file_id, transaction_id FROM bank_transaction_matches
		WHERE client_id = ? AND state = 'confirmed' ORDER BY file_id, transaction_id`, clientID)
	if err != nil {
		return nil, fmt.Errorf("match documents: %w", err)
	}
	defer confirmed.Close()
	for confirmed.Next() {
		var fileID, transactionID string
		if err := confirmed.Scan(&fileID, &transactionID); err != nil {
			return nil, fmt.Errorf("match documents: %w", err)
		}
		if c := byID[fileID]; c != nil {
			c.ConfirmedFor = append(c.ConfirmedFor, transactionID)
		}
	}
	if err := confirmed.Err(); err != nil {
		return nil, fmt.Errorf("match documents: %w", err)
	}
	return out, nil
}

// AccountIBANs returns the IBANs of the client's bank accounts: a transfer
// between two of them needs no document.
func (db *DB) AccountIBANs(ctx context.Context, clientID string) ([]string, error) {
	rows, err := db.query(ctx, `SELECT iban FROM bank_accounts WHERE client_id = ? AND iban IS NOT NULL ORDER BY iban`, clientID)
	if err != nil {
		return nil, fmt.Errorf("account IBANs: %w", err)
	}
	defer rows.Close()
	var ibans []string
	for rows.Next() {
		var iban string
		if err := rows.Scan(&iban); err != nil {
			return nil, fmt.Errorf("account IBANs: %w", err)
		}
		ibans = append(ibans, iban)
	}
	return ibans, rows.Err()
}

// scanTotal scans a file's columns and the total after them.
type scanTotal struct {
	row   scanner
	total *int64
}

func (s scanTotal) Scan(dest ...any) error { return s.row.Scan(append(dest, s.total)...) }

// MatchDecision is what matching found for one transaction.
type MatchDecision struct {
	TransactionID string
	Matches       []TransactionMatch
}

// RecordMatches writes what matching found for the client's transactions,
// in one transaction, each in place of what it found before, but for the
// transactions a person decided meanwhile, which stay as they are. Emits
// transaction.matched for each that becomes matched.
func (db *DB) RecordMatches(ctx context.Context, clientID string, decisions []MatchDecision) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		now := db.now().UTC().Truncate(time.Second)
		for _, d := range decisions {
			t, err := findTransactionTx(ctx, tx, clientID, d.TransactionID)
			if ErrorCode(err) == ENOTFOUND {
				continue
			}
			if err != nil {
				return err
			}
			if t.DecidedByUser || t.Status == TransactionIgnored {
				continue
			}
			matches := d.Matches
			for i := range matches {
				matches[i].Source = MatchAuto
			}
			if err := replaceMatches(ctx, tx, clientID, t.ID, matches, now, false); err != nil {
				return err
			}
			was := t.Status
			t.Matches, t.Status, t.UpdatedAt = matches, statusOf(matches, false), now
			if _, err := tx.ExecContext(ctx, `UPDATE bank_transactions SET status = ?, updated_at = ? WHERE client_id = ? AND id = ?`,
				t.Status, unix(now), clientID, t.ID); err != nil {
				return fmt.Errorf("match transaction: %w", err)
			}
			if t.Status == TransactionMatched && was != TransactionMatched {
				if err := db.emit(ctx, tx, event{typ: EventTransactionMatched, clientID: &clientID, record: t}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
