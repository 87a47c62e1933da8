package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bank statements: the client's accounts, the statements imported for them,
// their entries as transactions, and the documents matched to each.

// Amounts are int64 in 10^-5 of their currency's unit, as
// bankstatement.Amount holds them: exact, and they sort as numbers.

// The states of a transaction.
const (
	TransactionUnmatched = "unmatched"
	TransactionSuggested = "suggested"
	TransactionMatched   = "matched"
	TransactionIgnored   = "ignored"
)

// The states and sources of a transaction's match.
const (
	MatchConfirmed = "confirmed"
	MatchSuggested = "suggested"
	MatchAuto      = "auto"
	MatchUser      = "user"
	MatchCollect   = "collect"
)

// BankAccount is a client's bank account, created by the first statement
// that names it.
type BankAccount struct {
	ID       string
	ClientID string
	// Ref is what identifies the account: its IBAN, or the account id an
	// MT940 statement gives.
	Ref         string
	IBAN        *string
	BIC         *string
	Currency    string
	OwnerName   *string
	Balance     *int64
	BalanceDate *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// BankStatement is a statement as imported.
type BankStatement struct {
	ID               string
	ClientID         string
	AccountID        string
	Format           string
	From, To         string
	Currency         string
	OpeningBalance   *int64
	ClosingBalance   *int64
	TransactionCount int
	DuplicateCount   int
	FileID           *string
	CreatedAt        time.Time
	// Known says an import found every entry of its file known: this is
	// the statement imported before, and nothing was written.
	Known bool
}

// Transaction is an entry of a bank statement.
type Transaction struct {
	ID               string
	ClientID         string
	AccountID        string
	StatementID      string
	BookingDate      string
	ValueDate        *string
	Amount           int64 // stored units; negative is money out
	Currency         string
	CounterpartyName *string
	CounterpartyIBAN *string
	RemittanceInfo   *string
	EndToEndID       *string
	BankReference    *string
	Status           string
	// DecidedByUser says a person decided the transaction: matching leaves
	// it alone.
	DecidedByUser bool
	Note          *string
	Matches       []TransactionMatch
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// TransactionMatch is a document matched to a transaction.
type TransactionMatch struct {
	FileID  string
	State   string // MatchConfirmed or MatchSuggested
	Score   float64
	Reasons []string
	Source  string // MatchAuto, MatchUser or MatchCollect
	// The document beside its file, as read (a person's corrections over
	// the reading), so that a match can be judged without opening it;
	// filled when the match is read, ignored when it is written.
	FileName       string
	DocumentNumber *string
	TotalAmount    *int64
	Currency       *string
}

// StatementImport is a parsed statement to import: one account, its
// entries in the statement's order.
type StatementImport struct {
	Format         string
	Account        AccountImport
	From, To       string
	Currency       string
	OpeningBalance *int64
	ClosingBalance *int64
	Entries        []EntryImport
}

// AccountImport is how a statement names its account.
type AccountImport struct {
	Ref       string
	IBAN      *string
	BIC       *string
	OwnerName *string
}

// EntryImport is one entry of a statement.
type EntryImport struct {
	BookingDate      string
	ValueDate        *string
	Amount           int64
	Currency         string
	CounterpartyName *string
	CounterpartyIBAN *string
	RemittanceInfo   *string
	EndToEndID       *string
	BankReference    *string
}

// dedupKey is what makes an entry the same as one imported before: the
// bank's reference, else its date, amount, counterparty and remittance.
func (e EntryImport) dedupKey() string {
	if e.BankReference != nil && *e.BankReference != "" {
		return "ref\x1f" + *e.BankReference
	}
	str := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	return strings.Join([]string{"entry", e.BookingDate, strconv.FormatInt(e.Amount, 10), e.Currency,
		str(e.CounterpartyName), str(e.CounterpartyIBAN), str(e.RemittanceInfo)}, "\x1f")
}

// findOrCreateAccount returns the client's account the statement names,
// created when this is its first statement.
func (db *DB) findOrCreateAccount(ctx context.Context, tx *txn, clientID string, in StatementImport, now time.Time) (*BankAccount, error) {
	a, err := scanAccount(tx.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM bank_accounts
		WHERE client_id = ? AND account_ref = ?`, clientID, in.Account.Ref))
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	a = &BankAccount{ID: NewID(), ClientID: clientID, Ref: in.Account.Ref, IBAN: in.Account.IBAN, BIC: in.Account.BIC,
		Currency: in.Currency, OwnerName: in.Account.OwnerName, CreatedAt: now, UpdatedAt: now}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bank_accounts (id, client_id, account_ref, iban, bic, currency,
		owner_name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, clientID, a.Ref, a.IBAN, a.BIC,
		a.Currency, a.OwnerName, unix(now), unix(now)); err != nil {
		return nil, fmt.Errorf("create bank account: %w", err)
	}
	return a, nil
}

const accountColumns = `id, client_id, account_ref, iban, bic, currency, owner_name, balance, balance_date, created_at, updated_at`

func scanAccount(row scanner) (*BankAccount, error) {
	var a BankAccount
	var iban, bic, owner, balanceDate sql.NullString
	var balance sql.NullInt64
	var created, updated int64
	if err := row.Scan(&a.ID, &a.ClientID, &a.Ref, &iban, &bic, &a.Currency, &owner, &balance, &balanceDate,
		&created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan bank account: %w", err)
	}
	a.IBAN, a.BIC, a.OwnerName, a.BalanceDate = nullString(iban), nullString(bic), nullString(owner), nullString(balanceDate)
	if balance.Valid {
		a.Balance = &balance.Int64
	}
	a.CreatedAt, a.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &a, nil
}

const statementColumns = `id, client_id, account_id, format, from_date, to_date, currency, opening_balance,
	closing_balance, transaction_count, duplicate_count, file_id, created_at`

func scanStatement(row scanner) (*BankStatement, error) {
	var s BankStatement
	var opening, closing sql.NullInt64
	var fileID sql.NullString
	var created int64
	if err := row.Scan(&s.ID, &s.ClientID, &s.AccountID, &s.Format, &s.From, &s.To, &s.Currency, &opening, &closing,
		&s.TransactionCount, &s.DuplicateCount, &fileID, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan bank statement: %w", err)
	}
	if opening.Valid {
		s.OpeningBalance = &opening.Int64
	}
	if closing.Valid {
		s.ClosingBalance = &closing.Int64
	}
	s.FileID, s.CreatedAt = nullString(fileID), fromUnix(created)
	return &s, nil
}

const transactionColumns = `id, client_id, account_id, statement_id, booking_date, value_date, amount, currency,
	counterparty_name, counterparty_iban, remittance_info, end_to_end_id, bank_reference, status, decided_by_user,
	note, created_at, updated_at`

func scanTransaction(row scanner) (*Transaction, error) {
	var t Transaction
	var valueDate, name, iban, remittance, e2e, ref, note sql.NullString
	var created, updated int64
	if err := row.Scan(&t.ID, &t.ClientID, &t.AccountID, &t.StatementID, &t.BookingDate, &valueDate, &t.Amount,
		&t.Currency, &name, &iban, &remittance, &e2e, &ref, &t.Status, &t.DecidedByUser, &note, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan transaction: %w", err)
	}
	t.ValueDate, t.CounterpartyName, t.CounterpartyIBAN = nullString(valueDate), nullString(name), nullString(iban)
	t.RemittanceInfo, t.EndToEndID, t.BankReference, t.Note = nullString(remittance), nullString(e2e), nullString(ref), nullString(note)
	t.CreatedAt, t.UpdatedAt = fromUnix(created), fromUnix(updated)
	t.Matches = []TransactionMatch{}
	return &t, nil
}

// loadMatches fills the matches of the client's transactions, a query per
// inBatch of them: confirmed first, then by score.
func loadMatches(ctx context.Context, tx *txn, clientID string, txs []*Transaction) error {
	byID := make(map[string]*Transaction, len(txs))
	for _, t := range txs {
		byID[t.ID] = t
	}
	for start := 0; start < len(txs); start += inBatch {
		batch := txs[start:min(start+inBatch, len(txs))]
		args := make([]any, 0, len(batch)+1)
		args = append(args, clientID)
		for _, t := range batch {
			args = append(args, t.ID)
		}
		if err := loadMatchBatch(ctx, tx, byID, args); err != nil {
			return err
		}
	}
	return nil
}

// loadMatchBatch fills the matches of the transactions args names after
// its client.
func loadMatchBatch(ctx context.Context, tx *txn, byID map[string]*Transaction, args []any) error {
	rows, err := tx.QueryContext(ctx, `SELECT m.transaction_id, m.file_id, m.state, m.score, m.reasons, m.source, f.name,
		CASE WHEN json_type(f.user_fields, '$.documentNumber') IS NOT NULL THEN json_extract(f.user_fields, '$.documentNumber')
			ELSE json_extract(f.analysis_fields, '$.documentNumber') END,
		f.total_amount,
		CASE WHEN json_type(f.user_fields, '$.currency') IS NOT NULL THEN json_extract(f.user_fields, '$.currency')
			ELSE json_extract(f.analysis_fields, '$.currency') END
		FROM bank_transaction_matches m JOIN files f ON f.client_id = m.client_id AND f.id = m.file_id
		WHERE m.client_id = ? AND m.transaction_id IN (`+placeholders(len(args)-1)+`)
		ORDER BY m.transaction_id, m.position`, args...)
	if err != nil {
		return fmt.Errorf("transaction matches: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, reasons string
		var m TransactionMatch
		var number, currency sql.NullString
		var total sql.NullInt64
		if err := rows.Scan(&id, &m.FileID, &m.State, &m.Score, &reasons, &m.Source, &m.FileName, &number, &total, &currency); err != nil {
			return fmt.Errorf("transaction matches: %w", err)
		}
		m.DocumentNumber, m.Currency = nullString(number), nullString(currency)
		if total.Valid {
			m.TotalAmount = &total.Int64
		}
		m.Reasons = strings.Fields(reasons)
		byID[id].Matches = append(byID[id].Matches, m)
	}
	return rows.Err()
}

// FindBankAccount returns the client's bank account. Returns ENOTFOUND.
func (db *DB) FindBankAccount(ctx context.Context, clientID, id string) (*BankAccount, error) {
	a, err := scanAccount(db.queryRow(ctx, `SELECT `+accountColumns+` FROM bank_accounts WHERE client_id = ? AND id = ?
		AND `+visibleAccount, clientID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "bank account %s not found", id)
	}
	return a, err
}

// BankAccountSorts are the sorts the account list accepts.
var BankAccountSorts = []string{"createdAt"}

// ListBankAccounts returns a page of the client's bank accounts. Returns
// EINVALIDCURSOR.
func (db *DB) ListBankAccounts(ctx context.Context, clientID string, req PageRequest) (*Page[*BankAccount], error) {
	l := list{table: "bank_accounts", columns: accountColumns, tenant: condition{"client_id = ?", []any{clientID}},
		filters: []condition{{visibleAccount, nil}}, sorts: map[string]sortKey{"createdAt": column("created_at")}}
	return readPage(ctx, db, l, req, func(s scanner) (*BankAccount, string, error) {
		a, err := scanAccount(s)
		if err != nil {
			return nil, "", err
		}
		return a, a.ID, nil
	})
}

// FindBankStatement returns the client's bank statement. Returns ENOTFOUND.
func (db *DB) FindBankStatement(ctx context.Context, clientID, id string) (*BankStatement, error) {
	s, err := scanStatement(db.queryRow(ctx, `SELECT `+statementColumns+` FROM bank_statements WHERE client_id = ? AND id = ?
		AND `+visibleStatement, clientID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "bank statement %s not found", id)
	}
	return s, err
}

// BankStatementSorts are the sorts the statement list accepts.
var BankStatementSorts = []string{"createdAt"}

// ListBankStatements returns a page of the client's bank statements, of
// one account when accountID is not "". Returns EINVALIDCURSOR.
func (db *DB) ListBankStatements(ctx context.Context, clientID, accountID string, req PageRequest) (*Page[*BankStatement], error) {
	l := list{table: "bank_statements", columns: statementColumns, tenant: condition{"client_id = ?", []any{clientID}},
		filters: []condition{{visibleStatement, nil}}, sorts: map[string]sortKey{"createdAt": column("created_at")}}
	if accountID != "" {
		l.filters = append(l.filters, condition{"account_id = ?", []any{accountID}})
	}
	return readPage(ctx, db, l, req, func(s scanner) (*BankStatement, string, error) {
		st, err := scanStatement(s)
		if err != nil {
			return nil, "", err
		}
		return st, st.ID, nil
	})
}

// FindTransaction returns the client's transaction with its matches.
// Returns ENOTFOUND.
func (db *DB) FindTransaction(ctx context.Context, clientID, id string) (*Transaction, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return findTransactionTx(ctx, tx, clientID, id)
}

func findTransactionTx(ctx context.Context, tx *txn, clientID, id string) (*Transaction, error) {
	t, err := scanTransaction(tx.QueryRowContext(ctx, `SELECT `+transactionColumns+` FROM bank_transactions
		WHERE client_id = ? AND id = ? AND `+visibleTransaction, clientID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "transaction %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	return t, loadMatches(ctx, tx, clientID, []*Transaction{t})
}

// TransactionFilter narrows a transaction list; empty fields do not filter.
type TransactionFilter struct {
	AccountID, StatementID string
	// BookingDateFrom and BookingDateTo bound the booking date
	// (YYYY-MM-DD), both inclusive.
	BookingDateFrom, BookingDateTo string
	Status                         string
	// Direction is "in" (amounts above zero) or "out" (below).
	Direction string
	// FileID keeps the transactions the file is matched to, confirmed or
	// suggested.
	FileID string
	// Query keeps the transactions whose counterparty, remittance or
	// reference holds it, ignoring case: through the full-text index of
	// trigrams when it has three characters or more.
	Query string
}

// TransactionSorts are the sorts the transaction list accepts.
var TransactionSorts = []string{"bookingDate", "amount"}

var transactionSortKeys = map[string]sortKey{"bookingDate": column("booking_date"), "amount": column("amount")}

// likeEscaper escapes the wildcards of LIKE (with ESCAPE '\').
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ListTransactions returns a page of the client's transactions with their
// matches. Returns EINVALIDCURSOR.
func (db *DB) ListTransactions(ctx context.Context, clientID string, f TransactionFilter, req PageRequest) (*Page[*Transaction], error) {
	filters := []condition{{visibleTransaction, nil}}
	add := func(value, sql string) {
		if value != "" {
			filters = append(filters, condition{sql, []any{value}})
		}
	}
	add(f.AccountID, "account_id = ?")
	add(f.StatementID, "statement_id = ?")
	add(f.BookingDateFrom, "booking_date >= ?")
	add(f.BookingDateTo, "booking_date <= ?")
	add(f.Status, "status = ?")
	add(f.FileID, "id IN (SELECT transaction_id FROM bank_transaction_matches WHERE file_id = ?)")
	switch f.Direction {
	case "in":
		filters = append(filters, condition{"amount > 0", nil})
	case "out":
		filters = append(filters, condition{"amount < 0", nil})
	}
	tenant := condition{"client_id = ?", []any{clientID}}
	switch {
	case utf8.RuneCountInString(f.Query) >= 3:
		// The index's few rows are the way in: the unary + keeps SQLite
		// from walking the client's rows by date and testing each.
		tenant.sql = "+client_id = ?"
		filters = append(filters, condition{`search_id IN (SELECT rowid FROM bank_transactions_search
			WHERE bank_transactions_search MATCH ?)`, []any{`"` + strings.ReplaceAll(f.Query, `"`, `""`) + `"`}})
	case f.Query != "":
		// Shorter than a trigram: the index cannot answer it.
		like := "%" + likeEscaper.Replace(f.Query) + "%"
		filters = append(filters, condition{`(counterparty_name LIKE ? ESCAPE '\' OR remittance_info LIKE ? ESCAPE '\'
			OR bank_reference LIKE ? ESCAPE '\' OR end_to_end_id LIKE ? ESCAPE '\')`, []any{like, like, like, like}})
	}
	l := list{table: "bank_transactions", columns: transactionColumns, tenant: tenant,
		filters: filters, sorts: transactionSortKeys}
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	page, err := paginate(ctx, tx, l, req, func(s scanner) (*Transaction, string, error) {
		t, err := scanTransaction(s)
		if err != nil {
			return nil, "", err
		}
		return t, t.ID, nil
	})
	if err != nil {
		return nil, err
	}
	return page, loadMatches(ctx, tx, clientID, page.Items)
}

// TransactionUpdate is a person's change of a transaction.
type TransactionUpdate struct {
	// FileIDs are the documents that explain the transaction: each is
	// confirmed, any other match dropped; empty clears them all.
	FileIDs Update[[]string]
	// Ignored says the transaction needs no document.
	Ignored Update[bool]
	Note    Update[string]
}

// UpdateTransaction applies a person's decision to the client's
// transaction. Documents and ignoring are a person's decision, which
// matching never overrides; ignored false hands a transaction without
// confirmed documents back to matching. Emits transaction.matched when it
// becomes matched. Returns ENOTFOUND (for a file: naming it in FileIDs),
// and EINVALID for null documents or ignored.
func (db *DB) UpdateTransaction(ctx context.Context, clientID, id string, u TransactionUpdate) (*Transaction, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Transaction, error) {
		t, err := findTransactionTx(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		if err := cmp.Or(notNull("FileIDs", "fileIds", u.FileIDs), notNull("Ignored", "ignored", u.Ignored)); err != nil {
			return nil, err
		}
		was := t.Status
		now := db.now().UTC().Truncate(time.Second)
		if u.FileIDs.Set {
			previous := map[string]TransactionMatch{}
			for _, m := range t.Matches {
				previous[m.FileID] = m
			}
			matches := []TransactionMatch{}
			for i, fileID := range *u.FileIDs.Value {
				if err := findClientFile(ctx, tx, clientID, fileID); err != nil {
					return nil, withField(err, "FileIDs", i)
				}
				if slices.ContainsFunc(matches, func(m TransactionMatch) bool { return m.FileID == fileID }) {
					continue
				}
				m, ok := previous[fileID]
				if !ok {
					m = TransactionMatch{Score: 1, Reasons: []string{}}
				}
				m.FileID, m.State, m.Source = fileID, MatchConfirmed, MatchUser
				matches = append(matches, m)
			}
			if err := replaceMatches(ctx, tx, clientID, t.ID, matches, now, false); err != nil {
				return nil, err
			}
			if err := queueSettling(ctx, tx, clientID, t.Matches, matches, now); err != nil {
				return nil, err
			}
			t.DecidedByUser = true
			if err := reloadMatches(ctx, tx, clientID, t); err != nil {
				return nil, err
			}
		}
		switch {
		case u.Ignored.Set && *u.Ignored.Value:
			t.DecidedByUser = true
		case u.Ignored.Set && !u.FileIDs.Set:
			// Not ignored any more: a person's documents stay theirs, else
			// matching takes the transaction up again.
			t.DecidedByUser = slices.ContainsFunc(t.Matches, func(m TransactionMatch) bool { return m.Source != MatchAuto })
			if !t.DecidedByUser {
				if err := queueBankJob(ctx, tx, clientID, BankJobStatement, t.StatementID, now); err != nil {
					return nil, err
				}
			}
		}
		ignored := t.Status == TransactionIgnored
		if u.Ignored.Set {
			ignored = *u.Ignored.Value
		}
		t.Status = statusOf(t.Matches, ignored)
		apply(u.Note, func(v *string) { t.Note = v })
		t.UpdatedAt = now
		if _, err := tx.ExecContext(ctx, `UPDATE bank_transactions SET status = ?, decided_by_user = ?, note = ?,
			updated_at = ? WHERE client_id = ? AND id = ?`, t.Status, t.DecidedByUser, t.Note, unix(now), clientID, id); err != nil {
			return nil, fmt.Errorf("update transaction: %w", err)
		}
		if t.Status == TransactionMatched && was != TransactionMatched {
			return t, db.emit(ctx, tx, event{typ: EventTransactionMatched, clientID: &clientID, record: t})
		}
		return t, nil
	})
}

// statusOf is the status of a transaction with the matches.
func statusOf(matches []TransactionMatch, ignored bool) string {
	switch {
	case ignored:
		return TransactionIgnored
	case slices.ContainsFunc(matches, func(m TransactionMatch) bool { return m.State == MatchConfirmed }):
		return TransactionMatched
	case len(matches) > 0:
		return TransactionSuggested
	}
	return TransactionUnmatched
}

// findClientFile checks that the file is the client's. Returns ENOTFOUND.
func findClientFile(ctx context.Context, tx *txn, clientID, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM files WHERE client_id = ? AND id = ?`, clientID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "file %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("find file: %w", err)
	}
	return nil
}

// replaceMatches writes the transaction's matches: every one when all,
// else those matching made (the auto ones), keeping a person's.
func replaceMatches(ctx context.Context, tx *txn, clientID, transactionID string, matches []TransactionMatch, now time.Time, autoOnly bool) error {
	query := `DELETE FROM bank_transaction_matches WHERE client_id = ? AND transaction_id = ?`
	if autoOnly {
		query = `DELETE FROM bank_transaction_matches WHERE client_id = ? AND transaction_id = ? AND source = 'auto'`
	}
	if _, err := tx.ExecContext(ctx, query, clientID, transactionID); err != nil {
		return fmt.Errorf("match transaction: %w", err)
	}
	for i, m := range matches {
		if _, err := tx.ExecContext(ctx, `INSERT INTO bank_transaction_matches (transaction_id, file_id, client_id, state,
			score, reasons, source, position, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (transaction_id, file_id) DO NOTHING`,
			transactionID, m.FileID, clientID, m.State, m.Score, strings.Join(m.Reasons, " "), m.Source, i, unix(now)); err != nil {
			return fmt.Errorf("match transaction: %w", err)
		}
	}
	return nil
}

// reloadMatches reads the transaction's matches again, with their
// documents, after they were written.
func reloadMatches(ctx context.Context, tx *txn, clientID string, t *Transaction) error {
	t.Matches = nil
	return loadMatches(ctx, tx, clientID, []*Transaction{t})
}

// findTransactionRow checks that the transaction is the client's. Returns
// ENOTFOUND.
func findTransactionRow(ctx context.Context, tx *txn, clientID, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM bank_transactions WHERE client_id = ? AND id = ?`, clientID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "transaction %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("find transaction: %w", err)
	}
	return nil
}

// confirmCollected confirms a file uploaded to a collect item for the
// item's transaction, in the upload's transaction: the uploader's document
// explains it, in place of what matching found. A transaction a person
// ignored stays ignored, with the document beside it. Emits
// transaction.matched when it becomes matched.
func (db *DB) confirmCollected(ctx context.Context, tx *txn, clientID, transactionID, fileID string, now time.Time) error {
	t, err := findTransactionTx(ctx, tx, clientID, transactionID)
	if err != nil {
		return err
	}
	before := slices.Clone(t.Matches)
	matches := slices.DeleteFunc(t.Matches, func(m TransactionMatch) bool { return m.Source == MatchAuto || m.FileID == fileID })
	matches = append(matches, TransactionMatch{FileID: fileID, State: MatchConfirmed, Score: 1, Reasons: []string{}, Source: MatchCollect})
	if err := replaceMatches(ctx, tx, clientID, transactionID, matches, now, false); err != nil {
		return err
	}
	if err := queueSettling(ctx, tx, clientID, before, matches, now); err != nil {
		return err
	}
	was := t.Status
	if err := reloadMatches(ctx, tx, clientID, t); err != nil {
		return err
	}
	t.Status, t.DecidedByUser, t.UpdatedAt = statusOf(t.Matches, was == TransactionIgnored), true, now
	if _, err := tx.ExecContext(ctx, `UPDATE bank_transactions SET status = ?, decided_by_user = 1, updated_at = ?
		WHERE client_id = ? AND id = ?`, t.Status, unix(now), clientID, transactionID); err != nil {
		return fmt.Errorf("confirm collected file: %w", err)
	}
	if was == TransactionMatched || t.Status != TransactionMatched {
		return nil
	}
	return db.emit(ctx, tx, event{typ: EventTransactionMatched, clientID: &clientID, record: t})
}

// dropCollected undoes confirmCollected when the uploader takes the file
// back: without another document a person gave, the transaction goes back
// to matching.
func (db *DB) dropCollected(ctx context.Context, tx *txn, clientID, transactionID, fileID string, now time.Time) error {
	t, err := findTransactionTx(ctx, tx, clientID, transactionID)
	if err != nil {
		return err
	}
	n := len(t.Matches)
	matches := slices.DeleteFunc(t.Matches, func(m TransactionMatch) bool { return m.Source == MatchCollect && m.FileID == fileID })
	if len(matches) == n {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM bank_transaction_matches WHERE client_id = ? AND transaction_id = ?
		AND file_id = ? AND source = 'collect'`, clientID, transactionID, fileID); err != nil {
		return fmt.Errorf("drop collected file: %w", err)
	}
	decided := t.Status == TransactionIgnored || len(matches) > 0
	status := statusOf(matches, t.Status == TransactionIgnored)
	if _, err := tx.ExecContext(ctx, `UPDATE bank_transactions SET status = ?, decided_by_user = ?, updated_at = ?
		WHERE client_id = ? AND id = ?`, status, decided, unix(now), clientID, transactionID); err != nil {
		return fmt.Errorf("drop collected file: %w", err)
	}
	if decided {
		return nil
	}
	return queueBankJob(ctx, tx, clientID, BankJobStatement, t.StatementID, now)
}

// MissingReceiptsFilter selects the transactions a collect asks the
// documents of.
type MissingReceiptsFilter struct {
	// IDs are transactions of the client, in the order given; when empty,
	// the account's money-out transactions booked in the range (inclusive)
	// that are neither matched nor ignored, oldest first.
	IDs                            []string
	AccountID                      string
	BookingDateFrom, BookingDateTo string
}

// MissingReceipts returns the client's transactions f selects, at most
// limit+1 of a range (so that a caller sees it is over). Returns
// ENOTFOUND naming an id of IDs ("IDs", i) or the account ("AccountID").
func (db *DB) MissingReceipts(ctx context.Context, clientID string, f MissingReceiptsFilter, limit int) ([]*Transaction, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if len(f.IDs) > 0 {
		out := make([]*Transaction, 0, len(f.IDs))
		for i, id := range f.IDs {
			t, err := findTransactionTx(ctx, tx, clientID, id)
			if err != nil {
				return nil, withField(err, "IDs", i)
			}
			out = append(out, t)
		}
		return out, nil
	}
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM bank_accounts WHERE client_id = ? AND id = ?`, clientID, f.AccountID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &Error{Code: ENOTFOUND, Field: []any{"AccountID"}, Message: "bank account " + f.AccountID + " not found"}
	}
	if err != nil {
		return nil, fmt.Errorf("missing receipts: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+transactionColumns+` FROM bank_transactions
		WHERE client_id = ? AND account_id = ? AND booking_date BETWEEN ? AND ? AND amount < 0
		AND status IN ('unmatched', 'suggested') AND `+visibleTransaction+` ORDER BY booking_date, id LIMIT ?`,
		clientID, f.AccountID, f.BookingDateFrom, f.BookingDateTo, limit+1)
	if err != nil {
		return nil, fmt.Errorf("missing receipts: %w", err)
	}
	defer rows.Close()
	out := []*Transaction{}
	for rows.Next() {
		t, err := scanTransaction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
