package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// queueSettling queues a file job for each document a person's decision
// confirmed for the transaction or took back (confirmed before or after,
// not both), so that the worker settles its payments again.
func queueSettling(ctx context.Context, tx *txn, clientID string, before, after []TransactionMatch, now time.Time) error {
	confirmed := func(ms []TransactionMatch) map[string]bool {
		set := map[string]bool{}
		for _, m := range ms {
			if m.State == MatchConfirmed {
				set[m.FileID] = true
			}
		}
		return set
	}
	was, is := confirmed(before), confirmed(after)
	var changed []string
	for id := range was {
		if !is[id] {
			changed = append(changed, id)
		}
	}
	for id := range is {
		if !was[id] {
			changed = append(changed, id)
		}
	}
	slices.Sort(changed)
	for _, id := range changed {
		if err := queueBankJob(ctx, tx, clientID, BankJobFile, id, now); err != nil {
			return err
		}
	}
	return nil
}

// MatchNear narrows a file's job to the transactions its document may
// explain: those of these amounts, of either sign, or whose remittance holds
// Text (upper-case), so that a part or combined payment naming it is found.
type MatchNear struct {
	Amounts []int64
	Text    string
}

// TransactionsToMatch returns the client's transactions the job is about
// that matching may change: not decided by a person, not matched; for a
// file, those near it (see MatchNear) and those it was matched to
// automatically (its total may have been corrected since); for a client,
// all of them.
func (db *DB) TransactionsToMatch(ctx context.Context, j *BankJob, near MatchNear) ([]*Transaction, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var rows *sql.Rows
	switch j.Target {
	case BankJobStatement:
		rows, err = tx.QueryContext(ctx, `SELECT `+transactionColumns+` FROM bank_transactions
			WHERE client_id = ? AND statement_id = ? AND decided_by_user = 0 AND status IN ('unmatched', 'suggested')
			ORDER BY booking_date, id`, j.ClientID, j.TargetID)
	case BankJobClient:
		rows, err = tx.QueryContext(ctx, `SELECT `+transactionColumns+` FROM bank_transactions
			WHERE client_id = ? AND decided_by_user = 0 AND status IN ('unmatched', 'suggested') AND `+visibleTransaction+`
			ORDER BY booking_date, id`, j.ClientID)
	default:
		var signed []int64
		for _, a := range near.Amounts {
			signed = append(signed, a, -a)
		}
		amounts, _ := json.Marshal(append(signed, 0))
		rows, err = tx.QueryContext(ctx, `SELECT `+transactionColumns+` FROM bank_transactions
			WHERE client_id = ? AND decided_by_user = 0 AND `+visibleTransaction+` AND (
			  (status IN ('unmatched', 'suggested') AND (amount IN (SELECT value FROM json_each(?))
			    OR (? != '' AND instr(upper(coalesce(remittance_info, '')), ?) > 0)))
			  OR id IN (SELECT transaction_id FROM bank_transaction_matches WHERE client_id = ? AND file_id = ? AND source = 'auto'))
			ORDER BY booking_date, id`,
			j.ClientID, string(amounts), near.Text, near.Text, j.ClientID, j.TargetID)
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

// MatchCandidate is a document of the client that was read: one that may
// explain a transaction, be named in one's remittance, or be the client's
// own.
type MatchCandidate struct {
	FileID string
	Kind   *string
	// DocumentDate is the file's date when a person gave it, else nil.
	DocumentDate *time.Time
	Fields       DocumentFields
	// TotalAmount is nil when the document states none.
	TotalAmount *int64
	// Payment is what the worker decided of it last.
	Payment Payment
}

// MatchDocuments returns the client's documents that were read or
// corrected.
func (db *DB) MatchDocuments(ctx context.Context, clientID string) ([]*MatchCandidate, error) {
	rows, err := db.query(ctx, `SELECT `+fileColumns+`, total_amount FROM files
		WHERE client_id = ? AND (analysis_fields IS NOT NULL OR user_fields IS NOT NULL) ORDER BY id`, clientID)
	if err != nil {
		return nil, fmt.Errorf("match documents: %w", err)
	}
	defer rows.Close()
	var out []*MatchCandidate
	for rows.Next() {
		var total sql.NullInt64
		f, err := scanFile(scanTotal{rows, &total})
		if err != nil {
			return nil, err
		}
		c := &MatchCandidate{FileID: f.ID, Kind: f.Kind, Payment: f.Payment}
		if total.Valid {
			c.TotalAmount = &total.Int64
		}
		if f.DocumentDateSource != nil && *f.DocumentDateSource == SourceUser {
			c.DocumentDate = &f.DocumentDate
		}
		if f.Analysis.Fields != nil {
			c.Fields = *f.Analysis.Fields
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("match documents: %w", err)
	}
	return out, nil
}

// ConfirmedPayment is a transaction of the client confirmed for one or
// more documents.
type ConfirmedPayment struct {
	TransactionID string
	BookingDate   string
	Amount        int64
	FileIDs       []string
}

// confirmedPaymentsSQL selects the client's confirmed matches with their
// transactions; a caller may narrow it further.
const confirmedPaymentsSQL = `SELECT t.id, t.booking_date, t.amount, m.file_id FROM bank_transaction_matches m
	JOIN bank_transactions t ON t.client_id = m.client_id AND t.id = m.transaction_id
	WHERE m.client_id = ? AND m.state = 'confirmed'`

// ConfirmedPayments returns the client's transactions that documents are
// confirmed for, with those documents.
func (db *DB) ConfirmedPayments(ctx context.Context, clientID string) ([]*ConfirmedPayment, error) {
	return db.confirmedPayments(ctx, confirmedPaymentsSQL+` ORDER BY t.id, m.position`, clientID)
}

// FilePayments returns the client's transactions the file is confirmed
// for, each with every document it is confirmed for.
func (db *DB) FilePayments(ctx context.Context, clientID, fileID string) ([]*ConfirmedPayment, error) {
	return db.confirmedPayments(ctx, confirmedPaymentsSQL+` AND m.transaction_id IN (SELECT transaction_id
		FROM bank_transaction_matches WHERE client_id = ? AND file_id = ? AND state = 'confirmed') ORDER BY t.id, m.position`,
		clientID, clientID, fileID)
}

func (db *DB) confirmedPayments(ctx context.Context, query string, args ...any) ([]*ConfirmedPayment, error) {
	rows, err := db.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("confirmed payments: %w", err)
	}
	defer rows.Close()
	var out []*ConfirmedPayment
	for rows.Next() {
		var p ConfirmedPayment
		var fileID string
		if err := rows.Scan(&p.TransactionID, &p.BookingDate, &p.Amount, &fileID); err != nil {
			return nil, fmt.Errorf("confirmed payments: %w", err)
		}
		if n := len(out); n > 0 && out[n-1].TransactionID == p.TransactionID {
			out[n-1].FileIDs = append(out[n-1].FileIDs, fileID)
			continue
		}
		p.FileIDs = []string{fileID}
		out = append(out, &p)
	}
	return out, rows.Err()
}

// Identity is what tells a client's own documents from others'.
type Identity struct {
	VATIDs []string
	// Names are the client's name, its legal name and its accounts'
	// owner names.
	Names []string
	IBANs []string
}

// ClientIdentity returns the client's identity: its VAT ids and names, and
// its bank accounts' IBANs and owner names. Returns ENOTFOUND.
func (db *DB) ClientIdentity(ctx context.Context, clientID string) (*Identity, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var id Identity
	var name string
	var legal, vatIDs sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT name, legal_name, vat_ids FROM clients WHERE id = ?`, clientID).Scan(&name, &legal, &vatIDs)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "client %s not found", clientID)
	}
	if err != nil {
		return nil, fmt.Errorf("client identity: %w", err)
	}
	id.Names = append(id.Names, name)
	if legal.Valid {
		id.Names = append(id.Names, legal.String)
	}
	if vatIDs.Valid {
		if err := json.Unmarshal([]byte(vatIDs.String), &id.VATIDs); err != nil {
			return nil, fmt.Errorf("client identity: %w", err)
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT iban, owner_name FROM bank_accounts WHERE client_id = ? ORDER BY id`, clientID)
	if err != nil {
		return nil, fmt.Errorf("client identity: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var iban, owner sql.NullString
		if err := rows.Scan(&iban, &owner); err != nil {
			return nil, fmt.Errorf("client identity: %w", err)
		}
		if iban.Valid {
			id.IBANs = append(id.IBANs, iban.String)
		}
		if owner.Valid {
			id.Names = append(id.Names, owner.String)
		}
	}
	return &id, rows.Err()
}

// PaymentUpdate is a document's new direction and payment state.
type PaymentUpdate struct {
	FileID  string
	Payment Payment
}

// RecordPayments writes the documents' directions and payment states, in
// one transaction; a file gone meanwhile is left out.
func (db *DB) RecordPayments(ctx context.Context, clientID string, updates []PaymentUpdate) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		now := unix(db.now())
		for _, u := range updates {
			p := u.Payment
			if _, err := tx.ExecContext(ctx, `UPDATE files SET direction = ?, payment_status = ?, open_amount = ?, updated_at = ?
				WHERE client_id = ? AND id = ?`, p.Direction, p.Status, p.OpenAmount, now, clientID, u.FileID); err != nil {
				return fmt.Errorf("record payment state: %w", err)
			}
		}
		return nil
	})
}

// scanTotal scans a file's columns and the total after them.
type scanTotal struct {
	row   scanner
	total *sql.NullInt64
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
			if err := reloadMatches(ctx, tx, clientID, t); err != nil {
				return err
			}
			t.Status, t.UpdatedAt = statusOf(matches, false), now
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
