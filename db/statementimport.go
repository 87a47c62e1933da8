package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"acctapi/bankstatement"
)

// A statement is imported in several writes, none of which holds the
// single writer long, so that another firm's write never waits long behind
// an import of 100,000 entries:
//
//  1. a read plans the import: the account's currency, the entries known
//     before, and whether a known entry disagrees with the file (then the
//     file is refused, nothing written);
//  2. the first write creates the account on its first statement and the
//     statement's row with importing = 1;
//  3. the new entries are inserted importBatch at a time, a write each;
//  4. the last write records the file (with workspaceId), sets the
//     statement's counts and importing = 0, the account's balance, queues
//     matching and emits bank_statement.imported.
//
// Until the last write commits, no read sees the statement, its
// transactions or the account it created (visibleTransaction,
// visibleStatement, visibleAccount): a statement is seen whole or not at
// all. Imports of one account run one at a time (importLocks), and one
// that broke off (a write failed, the process stopped) is removed by the
// next import of its account.

// importBatch is how many entries one write of an import inserts: a few
// milliseconds of the writer's time, so that a write queued behind one
// waits for little more than its commit.
const importBatch = 100

// inBatch bounds the values of one IN list, far below SQLite's limit of
// variables in a statement.
const inBatch = 500

// The conditions that hide an import under way from every read.
const (
	visibleTransaction = `statement_id NOT IN (SELECT id FROM bank_statements WHERE importing = 1)`
	visibleStatement   = `importing = 0`
	visibleAccount     = `EXISTS (SELECT 1 FROM bank_statements s WHERE s.account_id = bank_accounts.id AND s.importing = 0)`
)

// keyedLocks holds a lock per key, made when first taken and dropped when
// no one holds or waits for it.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	held  chan struct{}
	users int
}

// lock waits for the key's lock, or until ctx ends, and returns its
// release.
func (k *keyedLocks) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{held: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	leave := func() {
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.held <- struct{}{}:
		return func() { <-l.held; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// importPlan is what an import writes.
type importPlan struct {
	// existing is the statement imported before that holds every entry of
	// the file, when none is new.
	existing *BankStatement
	keys     []string // each entry's dedup key
	fresh    []int    // the entries not known before, by index
}

// knownEntry is a transaction imported before, as an import compares it.
type knownEntry struct {
	id, statementID, bookingDate string
	amount                       int64
	name, iban, remittance       string
	matched                      bool
}

// ImportStatement imports a statement for the client: its account is
// created on its first statement, and its balance follows the newest
// closing balance; only entries not seen before on the account become
// transactions. With file, the statement's bytes are recorded as a File of
// the given workspace, of kind bank_statement, with the statement. The
// transactions are queued for matching, and bank_statement.imported is
// emitted. When no entry is new, nothing is written: the statement that
// holds them is returned with Known set (for a file without entries, the
// account's statement of the same period and balances). Returns ENOTFOUND
// for the file's workspace, and EINVALID (field File) for a statement in
// another currency than its account's or whose entries disagree with the
// transactions imported before.
func (db *DB) ImportStatement(ctx context.Context, clientID string, in StatementImport, file *FileCreate) (*BankStatement, error) {
	return db.importStatement(ctx, clientID, in, file, "")
}

// ImportStatementFile imports a statement read from the client's stored
// file, as ImportStatement does, once: Returns ECONFLICT when a statement
// was imported from the file before, ENOTFOUND when the file is gone.
func (db *DB) ImportStatementFile(ctx context.Context, clientID, fileID string, in StatementImport) (*BankStatement, error) {
	return db.importStatement(ctx, clientID, in, nil, fileID)
}

// importStatement imports in for ImportStatement (file) or
// ImportStatementFile (fileID).
func (db *DB) importStatement(ctx context.Context, clientID string, in StatementImport, file *FileCreate, fileID string) (*BankStatement, error) {
	unlock, err := db.importLocks.lock(ctx, clientID+"\x1f"+in.Account.Ref)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := db.removeBrokenImports(ctx, clientID, in.Account.Ref); err != nil {
		return nil, err
	}
	plan, err := db.planImport(ctx, clientID, in)
	if err != nil || plan.existing != nil {
		return plan.existingOrNil(), err
	}
	s, err := write(ctx, db, func(ctx context.Context, tx *txn) (*BankStatement, error) {
		return db.startImport(ctx, tx, clientID, in, fileID)
	})
	if err != nil {
		return nil, err
	}
	for start := 0; start < len(plan.fresh); start += importBatch {
		batch := plan.fresh[start:min(start+importBatch, len(plan.fresh))]
		err = db.update(ctx, func(ctx context.Context, tx *txn) error {
			return insertEntries(ctx, tx, s, in, plan.keys, batch)
		})
		if err != nil {
			return nil, db.abandonImport(ctx, s, err)
		}
	}
	s.TransactionCount, s.DuplicateCount = len(plan.fresh), len(in.Entries)-len(plan.fresh)
	err = db.update(ctx, func(ctx context.Context, tx *txn) error {
		return db.finishImport(ctx, tx, s, in, file)
	})
	if err != nil {
		return nil, db.abandonImport(ctx, s, err)
	}
	return s, nil
}

func (p *importPlan) existingOrNil() *BankStatement {
	if p == nil {
		return nil
	}
	return p.existing
}

// planImport reads what the import of in writes: it refuses a statement in
// another currency than its account's, or whose known entries disagree
// with it, and finds the statement imported before when no entry is new.
func (db *DB) planImport(ctx context.Context, clientID string, in StatementImport) (*importPlan, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	plan := &importPlan{keys: entryKeys(in.Entries)}
	account, err := scanAccount(tx.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM bank_accounts
		WHERE client_id = ? AND account_ref = ?`, clientID, in.Account.Ref))
	if errors.Is(err, sql.ErrNoRows) {
		plan.fresh = allIndexes(len(in.Entries))
		return plan, nil
	}
	if err != nil {
		return nil, err
	}
	if account.Currency != in.Currency {
		return nil, &Error{Code: EINVALID, Field: []any{"File"}, Message: fmt.Sprintf("the statement is in %s, but its account %s is kept in %s: a statement in another currency is not of this account",
			in.Currency, account.Ref, account.Currency)}
	}
	known, err := knownEntries(ctx, tx, clientID, account.ID, plan.keys)
	if err != nil {
		return nil, err
	}
	var disagree []string
	for i, e := range in.Entries {
		k, ok := known[plan.keys[i]]
		if !ok {
			plan.fresh = append(plan.fresh, i)
			continue
		}
		k.matched = true
		if e.BankReference == nil || *e.BankReference == "" {
			continue
		}
		if d := difference(e, k, in.Currency); d != "" {
			disagree = append(disagree, fmt.Sprintf("entry %d (reference %s): %s", i+1, *e.BankReference, d))
		}
	}
	changed, err := changedEntries(ctx, tx, clientID, account.ID, in, plan, known)
	if err != nil {
		return nil, err
	}
	if disagree = append(disagree, changed...); len(disagree) > 0 {
		return nil, disagreement(disagree)
	}
	if len(plan.fresh) > 0 {
		return plan, nil
	}
	plan.existing, err = previousStatement(ctx, tx, clientID, account.ID, in, plan.keys, known)
	return plan, err
}

// entryKeys are the dedup keys of the entries: an entry's rank among its
// equals of the statement is part of its key, so that equal entries of one
// day stay apart and a statement imported again finds each of them known.
func entryKeys(entries []EntryImport) []string {
	keys := make([]string, len(entries))
	seen := map[string]int{}
	for i, e := range entries {
		key := e.dedupKey()
		seen[key]++
		keys[i] = key + "\x1f" + fmt.Sprint(seen[key])
	}
	return keys
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

const knownColumns = `dedup_key, id, statement_id, booking_date, amount, coalesce(counterparty_name, ''),
	coalesce(counterparty_iban, ''), coalesce(remittance_info, '')`

func scanKnown(rows *sql.Rows) (string, *knownEntry, error) {
	var key string
	var k knownEntry
	err := rows.Scan(&key, &k.id, &k.statementID, &k.bookingDate, &k.amount, &k.name, &k.iban, &k.remittance)
	return key, &k, err
}

// knownEntries returns the account's transactions with one of the keys.
func knownEntries(ctx context.Context, tx *txn, clientID, accountID string, keys []string) (map[string]*knownEntry, error) {
	known := map[string]*knownEntry{}
	for start := 0; start < len(keys); start += inBatch {
		batch := keys[start:min(start+inBatch, len(keys))]
		args := []any{clientID, accountID}
		for _, k := range batch {
			args = append(args, k)
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+knownColumns+` FROM bank_transactions
			WHERE client_id = ? AND account_id = ? AND dedup_key IN (`+placeholders(len(batch))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("known entries: %w", err)
		}
		for rows.Next() {
			key, k, err := scanKnown(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("known entries: %w", err)
			}
			known[key] = k
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("known entries: %w", err)
		}
	}
	return known, nil
}

// difference says how an entry differs from the transaction imported
// before with its bank reference: its booking date, amount or
// counterparty (a name or IBAN both give); "" when they agree.
func difference(e EntryImport, k *knownEntry, currency string) string {
	var d []string
	if e.BookingDate != k.bookingDate {
		d = append(d, fmt.Sprintf("booked %s here, %s before", e.BookingDate, k.bookingDate))
	}
	if e.Amount != k.amount {
		d = append(d, fmt.Sprintf("amount %s here, %s before", formatAmount(e.Amount, currency), formatAmount(k.amount, currency)))
	}
	if name := value(e.CounterpartyName); name != "" && k.name != "" && !strings.EqualFold(name, k.name) {
		d = append(d, fmt.Sprintf("counterparty %q here, %q before", name, k.name))
	}
	if iban := value(e.CounterpartyIBAN); iban != "" && k.iban != "" && iban != k.iban {
		d = append(d, fmt.Sprintf("counterparty IBAN %s here, %s before", iban, k.iban))
	}
	return strings.Join(d, ", ")
}

// changedEntries finds the new entries without a bank reference that are
// a transaction imported before with one thing changed: the file lacks a
// transaction of its days that has the entry's remittance and two of its
// booking date, amount and counterparty, but not the third.
func changedEntries(ctx context.Context, tx *txn, clientID, accountID string, in StatementImport, plan *importPlan, known map[string]*knownEntry) ([]string, error) {
	from, to := "", ""
	for _, i := range plan.fresh {
		e := in.Entries[i]
		if e.BankReference != nil && *e.BankReference != "" {
			continue
		}
		if from == "" || e.BookingDate < from {
			from = e.BookingDate
		}
		to = max(to, e.BookingDate)
	}
	if from == "" {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+knownColumns+` FROM bank_transactions
		WHERE client_id = ? AND account_id = ? AND booking_date BETWEEN ? AND ? AND coalesce(bank_reference, '') = ''
		ORDER BY booking_date, id`, clientID, accountID, from, to)
	if err != nil {
		return nil, fmt.Errorf("changed entries: %w", err)
	}
	defer rows.Close()
	var missing []*knownEntry
	for rows.Next() {
		key, k, err := scanKnown(rows)
		if err != nil {
			return nil, fmt.Errorf("changed entries: %w", err)
		}
		if m := known[key]; m == nil || !m.matched {
			missing = append(missing, k)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changed entries: %w", err)
	}
	var out []string
	for _, i := range plan.fresh {
		e := in.Entries[i]
		if e.BankReference != nil && *e.BankReference != "" {
			continue
		}
		for _, k := range missing {
			if value(e.RemittanceInfo) != k.remittance {
				continue
			}
			sameDate, sameAmount := e.BookingDate == k.bookingDate, e.Amount == k.amount
			sameParty := strings.EqualFold(value(e.CounterpartyName), k.name) && value(e.CounterpartyIBAN) == k.iban
			if trues(sameDate, sameAmount, sameParty) == 2 {
				out = append(out, fmt.Sprintf("entry %d (%s, %s): %s", i+1, e.BookingDate, formatAmount(e.Amount, in.Currency),
					difference(e, k, in.Currency)))
				break
			}
		}
	}
	return out, nil
}

func trues(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// disagreement refuses a statement whose entries disagree with what was
// imported before, naming the first of them.
func disagreement(entries []string) error {
	const listed = 5
	msg := "the statement's entries disagree with the transactions imported before from the bank: " +
		strings.Join(entries[:min(len(entries), listed)], "; ")
	if len(entries) > listed {
		msg += fmt.Sprintf("; and %d more", len(entries)-listed)
	}
	return &Error{Code: EINVALID, Field: []any{"File"}, Message: msg + ". Nothing was imported"}
}

func formatAmount(units int64, currency string) string {
	return bankstatement.Amount(units).Format(currency) + " " + currency
}

func value(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// previousStatement is the statement imported before that a file with no
// new entry repeats: the one holding its last entry, or for a file without
// entries the account's statement of the same period and balances (nil
// when there is none).
func previousStatement(ctx context.Context, tx *txn, clientID, accountID string, in StatementImport, keys []string, known map[string]*knownEntry) (*BankStatement, error) {
	var row *sql.Row
	if len(keys) > 0 {
		row = tx.QueryRowContext(ctx, `SELECT `+statementColumns+` FROM bank_statements WHERE client_id = ? AND id = ?`,
			clientID, known[keys[len(keys)-1]].statementID)
	} else {
		row = tx.QueryRowContext(ctx, `SELECT `+statementColumns+` FROM bank_statements
			WHERE client_id = ? AND account_id = ? AND `+visibleStatement+` AND from_date = ? AND to_date = ?
			AND opening_balance IS ? AND closing_balance IS ? ORDER BY created_at DESC, id DESC LIMIT 1`,
			clientID, accountID, in.From, in.To, in.OpeningBalance, in.ClosingBalance)
	}
	s, err := scanStatement(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.Known = true
	return s, nil
}

// startImport is the import's first write: the account, created on its
// first statement, and the statement's row, seen by no read yet.
func (db *DB) startImport(ctx context.Context, tx *txn, clientID string, in StatementImport, fileID string) (*BankStatement, error) {
	if fileID != "" {
		if err := findClientFile(ctx, tx, clientID, fileID); err != nil {
			return nil, err
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM bank_statements WHERE client_id = ? AND file_id = ?`, clientID, fileID).Scan(&one)
		if err == nil {
			return nil, Errorf(ECONFLICT, "a statement was imported from file %s before", fileID)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("import statement: %w", err)
		}
	}
	now := db.now().UTC().Truncate(time.Second)
	account, err := db.findOrCreateAccount(ctx, tx, clientID, in, now)
	if err != nil {
		return nil, err
	}
	s := &BankStatement{ID: NewID(), ClientID: clientID, AccountID: account.ID, Format: in.Format, From: in.From, To: in.To,
		Currency: in.Currency, OpeningBalance: in.OpeningBalance, ClosingBalance: in.ClosingBalance, CreatedAt: now}
	if fileID != "" {
		s.FileID = &fileID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bank_statements (id, client_id, account_id, format, from_date, to_date,
		currency, opening_balance, closing_balance, transaction_count, duplicate_count, file_id, created_at, importing)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, 1)`, s.ID, clientID, account.ID, s.Format, s.From, s.To, s.Currency,
		s.OpeningBalance, s.ClosingBalance, s.FileID, unix(now)); err != nil {
		return nil, fmt.Errorf("import statement: %w", err)
	}
	return s, nil
}

// insertRows is how many transactions one INSERT writes: a statement of
// many rows is far quicker than as many statements, and the search index
// writes its part once a statement.
const insertRows = importBatch

// insertEntries writes the entries of the batch as the statement's
// transactions, numbered for the search index after the highest number
// given (the writer runs one write at a time).
func insertEntries(ctx context.Context, tx *txn, s *BankStatement, in StatementImport, keys []string, batch []int) error {
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(search_id), 0) FROM bank_transactions`).Scan(&next); err != nil {
		return fmt.Errorf("import statement: %w", err)
	}
	now := unix(s.CreatedAt)
	for start := 0; start < len(batch); start += insertRows {
		rows := batch[start:min(start+insertRows, len(batch))]
		args := make([]any, 0, len(rows)*17)
		for _, i := range rows {
			e := in.Entries[i]
			next++
			args = append(args, NewID(), s.ClientID, s.AccountID, s.ID, e.BookingDate, e.ValueDate, e.Amount, e.Currency,
				e.CounterpartyName, e.CounterpartyIBAN, e.RemittanceInfo, e.EndToEndID, e.BankReference, keys[i], now, now, next)
		}
		values := strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'unmatched', ?, ?, ?), `, len(rows)), ", ")
		if _, err := tx.ExecContext(ctx, `INSERT INTO bank_transactions (id, client_id, account_id, statement_id,
			booking_date, value_date, amount, currency, counterparty_name, counterparty_iban, remittance_info,
			end_to_end_id, bank_reference, dedup_key, status, created_at, updated_at, search_id) VALUES `+values, args...); err != nil {
			return fmt.Errorf("import statement: %w", err)
		}
	}
	return nil
}

// finishImport is the import's last write: the file, the statement's
// counts, the account's balance, matching and the event, and the statement
// seen by every read from its commit on.
func (db *DB) finishImport(ctx context.Context, tx *txn, s *BankStatement, in StatementImport, file *FileCreate) error {
	if file != nil {
		f, err := db.createFile(ctx, tx, s.ClientID, *file)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE files SET kind = 'bank_statement', kind_source = 'user'
			WHERE client_id = ? AND id = ?`, s.ClientID, f.ID); err != nil {
			return fmt.Errorf("import statement: %w", err)
		}
		s.FileID = &f.ID
	}
	if _, err := tx.ExecContext(ctx, `UPDATE bank_statements SET transaction_count = ?, duplicate_count = ?, file_id = ?,
		importing = 0 WHERE client_id = ? AND id = ?`, s.TransactionCount, s.DuplicateCount, s.FileID, s.ClientID, s.ID); err != nil {
		return fmt.Errorf("import statement: %w", err)
	}
	now := s.CreatedAt
	if in.ClosingBalance != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE bank_accounts SET balance = ?, balance_date = ?, updated_at = ?
			WHERE client_id = ? AND id = ? AND (balance_date IS NULL OR balance_date <= ?)`,
			*in.ClosingBalance, in.To, unix(now), s.ClientID, s.AccountID, in.To); err != nil {
			return fmt.Errorf("import statement: %w", err)
		}
	}
	if s.TransactionCount > 0 {
		if err := queueBankJob(ctx, tx, s.ClientID, BankJobStatement, s.ID, now); err != nil {
			return err
		}
	}
	return db.emit(ctx, tx, event{typ: EventBankStatementImported, clientID: &s.ClientID, record: s})
}

// abandonImport removes the statement an import broke off, and returns
// cause.
func (db *DB) abandonImport(ctx context.Context, s *BankStatement, cause error) error {
	if err := db.removeImport(context.WithoutCancel(ctx), s.ClientID, s.ID, s.AccountID); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// removeBrokenImports removes the statements of the account whose import
// broke off: the caller holds the account's import lock, so no import of
// it is under way.
func (db *DB) removeBrokenImports(ctx context.Context, clientID, ref string) error {
	rows, err := db.query(ctx, `SELECT s.id, s.account_id FROM bank_statements s JOIN bank_accounts a ON a.id = s.account_id
		WHERE a.client_id = ? AND a.account_ref = ? AND s.client_id = ? AND s.importing = 1`, clientID, ref, clientID)
	if err != nil {
		return fmt.Errorf("broken imports: %w", err)
	}
	var broken [][2]string
	for rows.Next() {
		var id, account string
		if err := rows.Scan(&id, &account); err != nil {
			rows.Close()
			return fmt.Errorf("broken imports: %w", err)
		}
		broken = append(broken, [2]string{id, account})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("broken imports: %w", err)
	}
	for _, b := range broken {
		if err := db.removeImport(ctx, clientID, b[0], b[1]); err != nil {
			return err
		}
	}
	return nil
}

// removeImport deletes an unfinished statement, its transactions a batch a
// write, and its account when it has no other statement.
func (db *DB) removeImport(ctx context.Context, clientID, statementID, accountID string) error {
	for {
		var n int64
		err := db.update(ctx, func(ctx context.Context, tx *txn) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM bank_transactions WHERE rowid IN (SELECT rowid FROM bank_transactions
				WHERE client_id = ? AND statement_id = ? LIMIT ?)`, clientID, statementID, importBatch)
			if err != nil {
				return fmt.Errorf("remove import: %w", err)
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return err
		}
		if n < importBatch {
			break
		}
	}
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM bank_statements WHERE client_id = ? AND id = ? AND importing = 1`,
			clientID, statementID); err != nil {
			return fmt.Errorf("remove import: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM bank_accounts WHERE client_id = ? AND id = ?
			AND NOT EXISTS (SELECT 1 FROM bank_statements WHERE client_id = ? AND account_id = ?)`,
			clientID, accountID, clientID, accountID); err != nil {
			return fmt.Errorf("remove import: %w", err)
		}
		return nil
	})
}
