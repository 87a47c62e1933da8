package db

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Client types.
const (
	ClientNaturalPerson        = "natural_person"
	ClientIndividualEnterprise = "individual_enterprise"
	ClientLegalPerson          = "legal_person"
)

// ClientTypes lists the accepted client types.
var ClientTypes = []string{ClientNaturalPerson, ClientIndividualEnterprise, ClientLegalPerson}

// Client is one client of a firm.
type Client struct {
	ID             string
	FirmID         string
	Name           string
	Slug           string
	Type           string
	CustomID       *string
	LegalName      *string
	LedgerClientID *string
	// VATIDs are the client's own VAT ids: with its names and its bank
	// accounts they tell the invoices it issued from those it received.
	VATIDs     []string
	Address    Address
	ArchivedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Address is a client's postal address. It is stored and never returned.
type Address struct {
	Line1, Line2, City, PostalCode, CountryCode *string
}

// ClientCreate holds the fields of a new client.
type ClientCreate struct {
	Name      string
	Type      string
	CustomID  *string
	LegalName *string
	VATIDs    []string
	Address   Address
}

const clientColumns = `id, firm_id, name, slug, type, custom_id, legal_name, ledger_client_id,
	address_line1, address_line2, address_city, address_postal_code, address_country_code,
	archived_at, created_at, updated_at, vat_ids`

// CreateClient creates a client of the firm. Its slug is derived from the name
// and made unique within the firm with a numeric suffix.
func (db *DB) CreateClient(ctx context.Context, firmID string, in ClientCreate) (*Client, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Client, error) {
		slug, err := uniqueSlug(ctx, tx, firmID, Slugify(in.Name))
		if err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		c := &Client{
			ID: NewID(), FirmID: firmID, Name: in.Name, Slug: slug, Type: in.Type,
			CustomID: in.CustomID, LegalName: in.LegalName, VATIDs: vatIDsOrEmpty(in.VATIDs), Address: in.Address,
			CreatedAt: now, UpdatedAt: now,
		}
		a := in.Address
		if _, err := tx.ExecContext(ctx, `INSERT INTO clients (`+clientColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
			c.ID, firmID, c.Name, c.Slug, c.Type, c.CustomID, c.LegalName,
			a.Line1, a.Line2, a.City, a.PostalCode, a.CountryCode, unix(now), unix(now), vatIDsColumn(c.VATIDs)); err != nil {
			return nil, fmt.Errorf("create client: %w", err)
		}
		return c, db.emit(ctx, tx, event{typ: EventClientCreated, firmID: firmID, clientID: &c.ID, record: c})
	})
}

// uniqueSlug returns base, or base-2, base-3, ... whichever is free in the firm.
func uniqueSlug(ctx context.Context, tx *txn, firmID, base string) (string, error) {
	rows, err := tx.QueryContext(ctx,
		`SELECT slug FROM clients WHERE firm_id = ? AND (slug = ? OR slug LIKE ? ESCAPE '\')`,
		firmID, base, strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(base)+"-%")
	if err != nil {
		return "", fmt.Errorf("find slugs: %w", err)
	}
	defer rows.Close()
	taken := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", fmt.Errorf("find slugs: %w", err)
		}
		taken[s] = true
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("find slugs: %w", err)
	}
	slug := base
	for n := 2; taken[slug]; n++ {
		slug = base + "-" + strconv.Itoa(n)
	}
	return slug, nil
}

// transliterations spell the letters of the firm's likely client names in
// ASCII the way their languages do ("Müller" is "mueller", not "mller").
var transliterations = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss", 'æ': "ae", 'ø': "oe", 'å': "aa",
	'œ': "oe", 'þ': "th", 'ð': "d", 'ł': "l", 'đ': "d", 'ı': "i",
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ā': "a", 'ă': "a", 'ą': "a",
	'ç': "c", 'ć': "c", 'č': "c", 'ď': "d", 'è': "e", 'é': "e", 'ê': "e", 'ë': "e",
	'ē': "e", 'ė': "e", 'ę': "e", 'ě': "e", 'ğ': "g", 'ì': "i", 'í': "i", 'î': "i",
	'ï': "i", 'ī': "i", 'į': "i", 'ľ': "l", 'ĺ': "l", 'ñ': "n", 'ń': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ō': "o", 'ő': "o", 'ŕ': "r", 'ř': "r",
	'ś': "s", 'š': "s", 'ş': "s", 'ș': "s", 'ť': "t", 'ţ': "t", 'ț': "t",
	'ù': "u", 'ú': "u", 'û': "u", 'ū': "u", 'ů': "u", 'ű': "u", 'ų': "u",
	'ý': "y", 'ÿ': "y", 'ź': "z", 'ż': "z", 'ž': "z", '&': "-",
}

// Slugify turns a name into a URL-style short name: lower-case ASCII letters,
// digits and single hyphens. A name with nothing to keep gives "client".
func Slugify(name string) string {
	var b strings.Builder
	hyphen := false
	emit := func(s string) {
		for _, r := range s {
			if r == '-' {
				hyphen = b.Len() > 0
				continue
			}
			if hyphen {
				b.WriteByte('-')
				hyphen = false
			}
			b.WriteRune(r)
		}
	}
	// NFC first: "ü" sent decomposed (u + U+0308, as macOS does) is then the
	// one letter the table knows.
	for _, r := range strings.ToLower(norm.NFC.String(name)) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			emit(string(r))
		case transliterations[r] != "":
			emit(transliterations[r])
		case unicode.Is(unicode.Mn, r):
			// A combining mark left after NFC belongs to the letter before it.
		default:
			hyphen = b.Len() > 0
		}
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return "client"
	}
	return strings.TrimRight(b.String(), "-")
}

// FindClient returns the firm's client with the id. Returns ENOTFOUND when the
// client does not exist or belongs to another firm: the two are one answer.
func (db *DB) FindClient(ctx context.Context, firmID, id string) (*Client, error) {
	row := db.queryRow(ctx,
		`SELECT `+clientColumns+` FROM clients WHERE firm_id = ? AND id = ?`, firmID, id)
	c, err := scanClient(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "client not found")
	}
	return c, err
}

func scanClient(row interface{ Scan(...any) error }) (*Client, error) {
	var c Client
	var custom, legal, ledger, l1, l2, city, postal, country, vatIDs sql.NullString
	var archived sql.NullInt64
	var created, updated int64
	if err := row.Scan(&c.ID, &c.FirmID, &c.Name, &c.Slug, &c.Type, &custom, &legal, &ledger,
		&l1, &l2, &city, &postal, &country, &archived, &created, &updated, &vatIDs); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan client: %w", err)
	}
	c.CustomID, c.LegalName, c.LedgerClientID = nullString(custom), nullString(legal), nullString(ledger)
	c.Address = Address{nullString(l1), nullString(l2), nullString(city), nullString(postal), nullString(country)}
	c.ArchivedAt = nullTime(archived)
	c.CreatedAt, c.UpdatedAt = fromUnix(created), fromUnix(updated)
	c.VATIDs = []string{}
	if vatIDs.Valid {
		if err := json.Unmarshal([]byte(vatIDs.String), &c.VATIDs); err != nil {
			return nil, fmt.Errorf("scan client %s: its VAT ids: %w", c.ID, err)
		}
	}
	return &c, nil
}

// vatIDsColumn is the stored form of a client's VAT ids: a JSON array, or
// NULL for none.
func vatIDsColumn(ids []string) any {
	if len(ids) == 0 {
		return nil
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func vatIDsOrEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// ClientUpdate holds the fields a client update may change.
type ClientUpdate struct {
	Name      Update[string]
	Type      Update[string]
	CustomID  Update[string]
	LegalName Update[string]
	VATIDs    Update[[]string]
	Address   AddressUpdate
}

// AddressUpdate holds the address fields an update may change.
type AddressUpdate struct {
	Line1, Line2, City, PostalCode, CountryCode Update[string]
}

// ClientSorts are the sorts a client list accepts.
var ClientSorts = []string{"createdAt", "updatedAt", "name"}

// UpdateClient changes the fields of the firm's client that u sets. The slug
// stays: it was derived from the name at creation and is how others link to
// the client. Returns ENOTFOUND, and EINVALID for a null name or type.
func (db *DB) UpdateClient(ctx context.Context, firmID, id string, u ClientUpdate) (*Client, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Client, error) {
		c, err := scanClient(tx.QueryRowContext(ctx, `SELECT `+clientColumns+` FROM clients WHERE firm_id = ? AND id = ?`, firmID, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENOTFOUND, "client %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		if err := cmp.Or(notNull("Name", "name", u.Name), notNull("Type", "type", u.Type)); err != nil {
			return nil, err
		}
		apply(u.Name, func(v *string) { c.Name = *v })
		apply(u.Type, func(v *string) { c.Type = *v })
		apply(u.CustomID, func(v *string) { c.CustomID = v })
		apply(u.LegalName, func(v *string) { c.LegalName = v })
		apply(u.VATIDs, func(v *[]string) {
			c.VATIDs = []string{}
			if v != nil {
				c.VATIDs = vatIDsOrEmpty(*v)
			}
		})
		a := &c.Address
		apply(u.Address.Line1, func(v *string) { a.Line1 = v })
		apply(u.Address.Line2, func(v *string) { a.Line2 = v })
		apply(u.Address.City, func(v *string) { a.City = v })
		apply(u.Address.PostalCode, func(v *string) { a.PostalCode = v })
		apply(u.Address.CountryCode, func(v *string) { a.CountryCode = v })
		c.UpdatedAt = db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `UPDATE clients SET name = ?, type = ?, custom_id = ?, legal_name = ?,
			address_line1 = ?, address_line2 = ?, address_city = ?, address_postal_code = ?, address_country_code = ?,
			vat_ids = ?, updated_at = ? WHERE firm_id = ? AND id = ?`,
			c.Name, c.Type, c.CustomID, c.LegalName, a.Line1, a.Line2, a.City, a.PostalCode, a.CountryCode,
			vatIDsColumn(c.VATIDs), unix(c.UpdatedAt), firmID, id); err != nil {
			return nil, fmt.Errorf("update client: %w", err)
		}
		if u.Name.Set || u.LegalName.Set || u.VATIDs.Set {
			// The client's identity tells its own documents: every one's
			// direction, and so its candidates, may change.
			if err := queueBankJob(ctx, tx, c.ID, BankJobClient, c.ID, c.UpdatedAt); err != nil {
				return nil, err
			}
		}
		return c, db.emit(ctx, tx, event{typ: EventClientUpdated, firmID: firmID, clientID: &c.ID, record: c, changes: u.fields()})
	})
}

// fields names the fields u sets; "Address" for any of the address's.
func (u ClientUpdate) fields() []string {
	var names []string
	for _, f := range []struct {
		set  bool
		name string
	}{
		{u.Name.Set, "Name"}, {u.Type.Set, "Type"}, {u.CustomID.Set, "CustomID"}, {u.LegalName.Set, "LegalName"}, {u.VATIDs.Set, "VATIDs"},
		{u.Address.Line1.Set || u.Address.Line2.Set || u.Address.City.Set || u.Address.PostalCode.Set || u.Address.CountryCode.Set, "Address"},
	} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}

// ListClients returns a page of the firm's clients.
func (db *DB) ListClients(ctx context.Context, firmID string, req PageRequest) (*Page[*Client], error) {
	return readPage(ctx, db, list{
		table: "clients", columns: clientColumns, tenant: condition{"firm_id = ?", []any{firmID}},
		sorts: map[string]sortKey{"createdAt": column("created_at"), "updatedAt": column("updated_at"), "name": column("name")},
	}, req, func(s scanner) (*Client, string, error) {
		c, err := scanClient(s)
		if err != nil {
			return nil, "", err
		}
		return c, c.ID, nil
	})
}
