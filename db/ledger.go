package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The charts of accounts a client's ledger may follow.
const (
	ChartSKR03 = "SKR03"
	ChartSKR04 = "SKR04"
)

// The roles of a counterparty.
const (
	RoleSupplier = "supplier"
	RoleCustomer = "customer"
)

// Who decided a document's booking.
const (
	BookingRule    = "rule"    // the chart's account for the document's kind and rate
	BookingLearned = "learned" // what a person chose for the supplier's earlier documents
	BookingUser    = "user"    // a person chose it for this document
)

// LedgerSettings are how a client's ledger is kept in DATEV. Chart,
// ConsultantNumber and ClientNumber are nil until a person sets them.
type LedgerSettings struct {
	ClientID         string
	Chart            *string
	ConsultantNumber *int
	ClientNumber     *int
	// FiscalYearStart is "MM-DD".
	FiscalYearStart       string
	AccountLength         int
	BankAccounts          []LedgerBankAccount
	DefaultExpenseAccount *string
	DefaultRevenueAccount *string
	// UpdatedAt is nil until the settings were first set.
	UpdatedAt *time.Time
}

// LedgerBankAccount is the ledger account a bank account of the client is
// booked on.
type LedgerBankAccount struct {
	AccountID     string `json:"accountId"`
	LedgerAccount string `json:"ledgerAccount"`
}

// Missing names, by the store's names, the settings an export needs that
// are not set.
func (s *LedgerSettings) Missing() []string {
	var missing []string
	if s.Chart == nil {
		missing = append(missing, "Chart")
	}
	if s.ConsultantNumber == nil {
		missing = append(missing, "ConsultantNumber")
	}
	if s.ClientNumber == nil {
		missing = append(missing, "ClientNumber")
	}
	return missing
}

// FiscalYear is the fiscal year that holds day: its first day and the
// first day of the next.
func (s *LedgerSettings) FiscalYear(day time.Time) (start, next time.Time) {
	month, _ := strconv.Atoi(s.FiscalYearStart[:2])
	dom, _ := strconv.Atoi(s.FiscalYearStart[3:])
	start = time.Date(day.Year(), time.Month(month), dom, 0, 0, 0, 0, time.UTC)
	if start.After(day) {
		start = start.AddDate(-1, 0, 0)
	}
	return start, start.AddDate(1, 0, 0)
}

const ledgerColumns = `client_id, chart, consultant_number, client_number, fiscal_year_start, account_length,
	bank_accounts, default_expense_account, default_revenue_account, updated_at`

func scanLedgerSettings(row scanner) (*LedgerSettings, error) {
	var s LedgerSettings
	var chart, expense, revenue sql.NullString
	var consultant, client sql.NullInt64
	var banks string
	var updated int64
	if err := row.Scan(&s.ClientID, &chart, &consultant, &client, &s.FiscalYearStart, &s.AccountLength, &banks,
		&expense, &revenue, &updated); err != nil {
		return nil, err
	}
	s.Chart, s.DefaultExpenseAccount, s.DefaultRevenueAccount = nullString(chart), nullString(expense), nullString(revenue)
	if consultant.Valid {
		s.ConsultantNumber = ptr(int(consultant.Int64))
	}
	if client.Valid {
		s.ClientNumber = ptr(int(client.Int64))
	}
	s.UpdatedAt = ptr(fromUnix(updated))
	if err := json.Unmarshal([]byte(banks), &s.BankAccounts); err != nil {
		return nil, fmt.Errorf("ledger settings: bank accounts: %w", err)
	}
	return &s, nil
}

// FindLedgerSettings returns the client's ledger settings: the defaults,
// with nothing set, until a person set them.
func (db *DB) FindLedgerSettings(ctx context.Context, clientID string) (*LedgerSettings, error) {
	return findLedgerSettings(ctx, db.read, clientID)
}

func findLedgerSettings(ctx context.Context, q querier, clientID string) (*LedgerSettings, error) {
	s, err := scanLedgerSettings(q.QueryRowContext(ctx, `SELECT `+ledgerColumns+` FROM ledger_settings WHERE client_id = ?`, clientID))
	if errors.Is(err, sql.ErrNoRows) {
		return &LedgerSettings{ClientID: clientID, FiscalYearStart: "01-01", AccountLength: 4, BankAccounts: []LedgerBankAccount{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger settings: %w", err)
	}
	return s, nil
}

// PutLedgerSettings replaces the client's ledger settings. The bank
// accounts must be the client's. Returns ENOTFOUND naming the first that
// is not.
func (db *DB) PutLedgerSettings(ctx context.Context, clientID string, s LedgerSettings) (*LedgerSettings, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*LedgerSettings, error) {
		for i, b := range s.BankAccounts {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM bank_accounts WHERE client_id = ? AND id = ?`, clientID, b.AccountID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, &Error{Code: ENOTFOUND, Field: []any{"BankAccounts", i, "AccountID"}, Message: "bank account " + b.AccountID + " not found"}
			}
			if err != nil {
				return nil, fmt.Errorf("ledger settings: %w", err)
			}
		}
		if s.BankAccounts == nil {
			s.BankAccounts = []LedgerBankAccount{}
		}
		banks, err := json.Marshal(s.BankAccounts)
		if err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_settings (`+ledgerColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (client_id) DO UPDATE SET chart = excluded.chart, consultant_number = excluded.consultant_number,
			client_number = excluded.client_number, fiscal_year_start = excluded.fiscal_year_start,
			account_length = excluded.account_length, bank_accounts = excluded.bank_accounts,
			default_expense_account = excluded.default_expense_account, default_revenue_account = excluded.default_revenue_account,
			updated_at = excluded.updated_at`,
			clientID, s.Chart, s.ConsultantNumber, s.ClientNumber, s.FiscalYearStart, s.AccountLength, string(banks),
			s.DefaultExpenseAccount, s.DefaultRevenueAccount, unix(now)); err != nil {
			return nil, fmt.Errorf("ledger settings: %w", err)
		}
		s.ClientID, s.UpdatedAt = clientID, &now
		return &s, nil
	})
}

// Counterparty is a supplier or customer of a client, found from its
// documents and their matched transactions.
type Counterparty struct {
	ID       string
	ClientID string
	Role     string
	Name     string
	VATID    *string
	IBAN     *string
	// Account is its personal account, nil until an export needed one.
	Account       *int64
	DocumentCount int
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

const counterpartyColumns = `id, client_id, role, name, vat_id, iban, account,
	(SELECT count(*) FROM file_bookings b WHERE b.counterparty_id = counterparties.id), created_at, updated_at`

func scanCounterparty(row scanner) (*Counterparty, error) {
	var c Counterparty
	var vat, iban sql.NullString
	var account sql.NullInt64
	var created, updated int64
	if err := row.Scan(&c.ID, &c.ClientID, &c.Role, &c.Name, &vat, &iban, &account, &c.DocumentCount, &created, &updated); err != nil {
		return nil, err
	}
	c.VATID, c.IBAN = nullString(vat), nullString(iban)
	if account.Valid {
		c.Account = &account.Int64
	}
	c.CreatedAt, c.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &c, nil
}

// CounterpartySorts are the sorts the counterparty list accepts.
var CounterpartySorts = []string{"createdAt"}

// ListCounterparties returns a page of the client's counterparties.
// Returns EINVALIDCURSOR.
func (db *DB) ListCounterparties(ctx context.Context, clientID string, req PageRequest) (*Page[*Counterparty], error) {
	l := list{table: "counterparties", columns: counterpartyColumns, tenant: condition{"client_id = ?", []any{clientID}},
		sorts: map[string]sortKey{"createdAt": column("created_at")}}
	return readPage(ctx, db, l, req, func(s scanner) (*Counterparty, string, error) {
		c, err := scanCounterparty(s)
		if err != nil {
			return nil, "", err
		}
		return c, c.ID, nil
	})
}

func findCounterpartyTx(ctx context.Context, tx *txn, clientID, id string) (*Counterparty, error) {
	c, err := scanCounterparty(tx.QueryRowContext(ctx, `SELECT `+counterpartyColumns+` FROM counterparties
		WHERE client_id = ? AND id = ?`, clientID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "counterparty %s not found", id)
	}
	return c, err
}

// CounterpartyUpdate is a person's change of a counterparty.
type CounterpartyUpdate struct {
	Name    Update[string]
	Account Update[int64]
}

// UpdateCounterparty changes the client's counterparty. Its account must
// be in its role's range at the client's account length and given to no
// other counterparty of the client. Returns ENOTFOUND, EINVALID for an
// account out of range or a null name, and ECONFLICT for an account taken.
func (db *DB) UpdateCounterparty(ctx context.Context, clientID, id string, u CounterpartyUpdate) (*Counterparty, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Counterparty, error) {
		c, err := findCounterpartyTx(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		if err := notNull("Name", "name", u.Name); err != nil {
			return nil, err
		}
		if u.Account.Set && u.Account.Value != nil {
			s, err := findLedgerSettings(ctx, tx, clientID)
			if err != nil {
				return nil, err
			}
			first, past := PersonalRange(c.Role == RoleSupplier, s.AccountLength)
			if a := *u.Account.Value; a < first || a >= past {
				return nil, &Error{Code: EINVALID, Field: []any{"Account"},
					Message: fmt.Sprintf("a %s's account is from %d to %d at account length %d", c.Role, first, past-1, s.AccountLength)}
			}
			var other string
			err = tx.QueryRowContext(ctx, `SELECT id FROM counterparties WHERE client_id = ? AND account = ? AND id <> ?`,
				clientID, *u.Account.Value, id).Scan(&other)
			if err == nil {
				return nil, &Error{Code: ECONFLICT, Field: []any{"Account"},
					Message: fmt.Sprintf("account %d is already counterparty %s's", *u.Account.Value, other)}
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("update counterparty: %w", err)
			}
		}
		apply(u.Name, func(v *string) { c.Name = *v })
		apply(u.Account, func(v *int64) { c.Account = v })
		c.UpdatedAt = db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `UPDATE counterparties SET name = ?, account = ?, updated_at = ? WHERE client_id = ? AND id = ?`,
			c.Name, c.Account, unix(c.UpdatedAt), clientID, id); err != nil {
			return nil, fmt.Errorf("update counterparty: %w", err)
		}
		return c, nil
	})
}

// PersonalRange is the range [first, past) of a role's personal accounts
// at an account length: at length 4, customers 10000-69999 and suppliers
// 70000-99999, each a digit longer with each digit more.
func PersonalRange(supplier bool, length int) (first, past int64) {
	scale := int64(1)
	for range length - 4 {
		scale *= 10
	}
	if supplier {
		return 70000 * scale, 100000 * scale
	}
	return 10000 * scale, 70000 * scale
}

// CounterpartyFind is a counterparty as an export finds it on a document:
// its hashed keys (by VAT id, by normalised name, by IBAN; "" where the
// document has none) and what it says of it.
type CounterpartyFind struct {
	Role    string
	VATKey  string
	NameKey string
	IBANKey string
	Name    string
	VATID   string
	IBAN    string
}

// Keys are the find's keys, the surest first.
func (f CounterpartyFind) Keys() []string {
	var keys []string
	for _, k := range []string{f.VATKey, f.NameKey, f.IBANKey} {
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// ResolveCounterparties finds or creates the client's counterparty of each
// find, in order, and gives each one without an account the next free
// account of its role's range. Returns EINVALID when a range is full.
func (db *DB) ResolveCounterparties(ctx context.Context, clientID string, finds []CounterpartyFind) ([]*Counterparty, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) ([]*Counterparty, error) {
		s, err := findLedgerSettings(ctx, tx, clientID)
		if err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		out := make([]*Counterparty, len(finds))
		for i, f := range finds {
			c, err := resolveCounterparty(ctx, tx, clientID, f, now)
			if err != nil {
				return nil, err
			}
			if c.Account == nil {
				if c.Account, err = nextAccount(ctx, tx, clientID, f.Role == RoleSupplier, s.AccountLength); err != nil {
					return nil, err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE counterparties SET account = ?, updated_at = ? WHERE client_id = ? AND id = ?`,
					*c.Account, unix(now), clientID, c.ID); err != nil {
					return nil, fmt.Errorf("give an account: %w", err)
				}
			}
			out[i] = c
		}
		return out, nil
	})
}

// resolveCounterparty finds f's counterparty, or creates it; either way it
// is known by all of f's keys after (a key another counterparty has stays
// that one's). The VAT id decides; else the name, unless the two VAT ids
// differ; an IBAN alone only for a find without a name or VAT id, as two
// suppliers may be paid through one account.
func resolveCounterparty(ctx context.Context, tx *txn, clientID string, f CounterpartyFind, now time.Time) (*Counterparty, error) {
	byKey := func(key string) (*Counterparty, error) {
		if key == "" {
			return nil, nil
		}
		var id string
		err := tx.QueryRowContext(ctx, `SELECT counterparty_id FROM counterparty_keys WHERE client_id = ? AND role = ? AND key = ?`,
			clientID, f.Role, key).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("find counterparty: %w", err)
		}
		return findCounterpartyTx(ctx, tx, clientID, id)
	}
	c, err := byKey(f.VATKey)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if c, err = byKey(f.NameKey); err != nil {
			return nil, err
		}
		if c != nil && f.VATID != "" && c.VATID != nil && *c.VATID != f.VATID {
			c = nil
		}
	}
	if c == nil && f.VATKey == "" && f.NameKey == "" {
		if c, err = byKey(f.IBANKey); err != nil {
			return nil, err
		}
	}
	if c == nil {
		c = &Counterparty{ID: NewID(), ClientID: clientID, Role: f.Role, Name: f.Name, CreatedAt: now, UpdatedAt: now}
		if f.VATID != "" {
			c.VATID = &f.VATID
		}
		if f.IBAN != "" {
			c.IBAN = &f.IBAN
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO counterparties (id, client_id, role, name, vat_id, iban, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, clientID, c.Role, c.Name, c.VATID, c.IBAN, unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create counterparty: %w", err)
		}
	}
	for _, key := range f.Keys() {
		if _, err := tx.ExecContext(ctx, `INSERT INTO counterparty_keys (client_id, role, key, counterparty_id) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, clientID, f.Role, key, c.ID); err != nil {
			return nil, fmt.Errorf("key counterparty: %w", err)
		}
	}
	return c, nil
}

// nextAccount is the first account of the role's range above every one
// given in it.
func nextAccount(ctx context.Context, tx *txn, clientID string, supplier bool, length int) (*int64, error) {
	first, past := PersonalRange(supplier, length)
	var highest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(account) FROM counterparties WHERE client_id = ? AND account >= ? AND account < ?`,
		clientID, first, past).Scan(&highest); err != nil {
		return nil, fmt.Errorf("next account: %w", err)
	}
	next := first
	if highest.Valid {
		next = highest.Int64 + 1
	}
	if next >= past {
		return nil, Errorf(EINVALID, "every account from %d to %d is given: free one for the next counterparty", first, past-1)
	}
	return &next, nil
}

// Booking is how a document is booked.
type Booking struct {
	Account       *string
	ContraAccount *string
	TaxKey        *string
	Text          *string
	Source        string
}

// BookingChoice is a person's booking of a document; Suppliers are the
// hashed keys of the document's supplier, which learn it for the firm.
type BookingChoice struct {
	Account   string
	TaxKey    *string
	Text      *string
	Suppliers []string
}

// BookingLesson is what a person's booking of a supplier's document taught.
type BookingLesson struct {
	Account string
	TaxKey  *string
}

// SetBooking records a person's booking of the client's file, which no
// export overwrites, and teaches it for the supplier's next documents in
// the firm. Returns ENOTFOUND.
func (db *DB) SetBooking(ctx context.Context, clientID, fileID string, b BookingChoice) (*File, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*File, error) {
		f, err := findFileTx(ctx, tx, clientID, fileID)
		if err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `INSERT INTO file_bookings (file_id, client_id, account, tax_key, text, source, updated_at)
			VALUES (?, ?, ?, ?, ?, 'user', ?) ON CONFLICT (file_id) DO UPDATE SET account = excluded.account,
			tax_key = excluded.tax_key, text = excluded.text, source = 'user', updated_at = excluded.updated_at`,
			fileID, clientID, b.Account, b.TaxKey, b.Text, unix(now)); err != nil {
			return nil, fmt.Errorf("set booking: %w", err)
		}
		for _, supplier := range b.Suppliers {
			if _, err := tx.ExecContext(ctx, `INSERT INTO booking_lessons (firm_id, supplier, account, tax_key, updated_at)
				SELECT firm_id, ?, ?, ?, ? FROM clients WHERE id = ?
				ON CONFLICT (firm_id, supplier) DO UPDATE SET account = excluded.account, tax_key = excluded.tax_key,
				updated_at = excluded.updated_at`, supplier, b.Account, b.TaxKey, unix(now), clientID); err != nil {
				return nil, fmt.Errorf("learn a booking: %w", err)
			}
		}
		f.UpdatedAt = now
		if _, err := tx.ExecContext(ctx, `UPDATE files SET updated_at = ? WHERE client_id = ? AND id = ?`, unix(now), clientID, fileID); err != nil {
			return nil, fmt.Errorf("set booking: %w", err)
		}
		if err := loadFileLedger(ctx, tx, clientID, []*File{f}); err != nil {
			return nil, err
		}
		return f, db.emit(ctx, tx, event{typ: EventFileUpdated, clientID: &clientID, record: f, changes: []string{"Booking"}})
	})
}

// BookingLessons returns what the firm of the client learnt of its
// suppliers' bookings, by hashed supplier key.
func (db *DB) BookingLessons(ctx context.Context, clientID string) (map[string]BookingLesson, error) {
	rows, err := db.query(ctx, `SELECT supplier, account, tax_key FROM booking_lessons
		WHERE firm_id = (SELECT firm_id FROM clients WHERE id = ?)`, clientID)
	if err != nil {
		return nil, fmt.Errorf("booking lessons: %w", err)
	}
	defer rows.Close()
	out := map[string]BookingLesson{}
	for rows.Next() {
		var supplier string
		var l BookingLesson
		var key sql.NullString
		if err := rows.Scan(&supplier, &l.Account, &key); err != nil {
			return nil, fmt.Errorf("booking lessons: %w", err)
		}
		l.TaxKey = nullString(key)
		out[supplier] = l
	}
	return out, rows.Err()
}

// FileExport is one export that booked a file.
type FileExport struct {
	ID string
	At time.Time
	// Fingerprint sums up what the export booked the file from.
	Fingerprint string
}

// loadFileLedger fills the booking and the exports of the client's files.
func loadFileLedger(ctx context.Context, tx *txn, clientID string, files []*File) error {
	if len(files) == 0 {
		return nil
	}
	byID := make(map[string]*File, len(files))
	args := []any{clientID}
	for _, f := range files {
		f.Exports = []FileExport{}
		byID[f.ID] = f
		args = append(args, f.ID)
	}
	// The contra account is the counterparty's account now: a person may
	// have changed it since the export.
	rows, err := tx.QueryContext(ctx, `SELECT b.file_id, b.account, coalesce(CAST(c.account AS TEXT), b.contra_account),
		b.tax_key, b.text, b.source FROM file_bookings b LEFT JOIN counterparties c ON c.id = b.counterparty_id
		WHERE b.client_id = ? AND b.file_id IN (`+placeholders(len(files))+`)`, args...)
	if err != nil {
		return fmt.Errorf("file bookings: %w", err)
	}
	for rows.Next() {
		var id string
		var account, contra, key, text sql.NullString
		var b Booking
		if err := rows.Scan(&id, &account, &contra, &key, &text, &b.Source); err != nil {
			rows.Close()
			return fmt.Errorf("file bookings: %w", err)
		}
		b.Account, b.ContraAccount, b.TaxKey, b.Text = nullString(account), nullString(contra), nullString(key), nullString(text)
		byID[id].Booking = &b
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("file bookings: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `SELECT file_id, export_id, exported_at, fingerprint FROM export_files
		WHERE client_id = ? AND file_id IN (`+placeholders(len(files))+`) ORDER BY exported_at, export_id`, args...)
	if err != nil {
		return fmt.Errorf("file exports: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var e FileExport
		var at int64
		if err := rows.Scan(&id, &e.ID, &at, &e.Fingerprint); err != nil {
			return fmt.Errorf("file exports: %w", err)
		}
		e.At = fromUnix(at)
		byID[id].Exports = append(byID[id].Exports, e)
	}
	return rows.Err()
}
