package seed

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"time"

	"acctapi/auth"
	"acctapi/db"
	vocab "acctapi/document"
	"acctapi/filestore"
)

// Files keeps the bytes of the demo's documents: the local store or an S3
// bucket, as the server is configured.
type Files interface {
	Write(r io.Reader, max int64) (*filestore.Pending, error)
	Keep(p *filestore.Pending, id string, record func() error) error
}

// DemoRecords names what Demo made for the start-up message.
type DemoRecords struct {
	ClientID    string
	WorkspaceID string
	CollectID   string
	// CollectToken is the token of the demo collect's session: the last
	// part of its page's address, shown once.
	CollectToken string
	// Summary names everything Demo made, by name, a line each, for people
	// who try the API on it.
	Summary []string
	// Key is the demo client's key, shown once.
	Key string
}

// Print writes the start-up message of a demo: what was made, the demo
// client's key and the address of the collect request's upload page.
func (r *DemoRecords) Print(w io.Writer, pageURL string) {
	fmt.Fprintf(w, "acctapi: seeded the demo client %s (workspace %s):\n", r.ClientID, r.WorkspaceID)
	for _, line := range r.Summary {
		fmt.Fprintf(w, "  - %s\n", line)
	}
	fmt.Fprintf(w, "The demo client's key, shown once:\n\n    %s\n\n", r.Key)
	fmt.Fprintf(w, "The upload page of the collect request %q, for the client, shown once:\n\n    %s\n\n", CollectTitle, pageURL)
}

// Demo fills the firm with a demo client with two workspaces, users of the
// client and accountant users who are members, folders (nested), labels,
// tasks (with subtasks, due dates and every status), a key of the demo
// client, an open collect
// request with a live session through which the bank statement was
// uploaded, the other real documents of DemoDocuments (the statement as the
// bank's camt.053 XML, an invoice PDF, a CII e-invoice and a receipt photo),
// so that reading them shows, and a second client with a workspace and a user of its own. It writes
// through the store's own methods, the checks and rules of the API's writes
// included, so the demo holds nothing the API could not have made. It does
// nothing and returns nil, nil when the firm already has clients.
func Demo(ctx context.Context, store *db.DB, files Files, firmID string, now time.Time) (*DemoRecords, error) {
	clients, err := store.ListClients(ctx, firmID, db.PageRequest{Limit: 1, Sort: "createdAt"})
	if err != nil || clients.Total > 0 {
		return nil, err
	}
	const (
		muellerName  = "Müller & Söhne"
		accountsName = "Annual accounts 2026"
		payrollName  = "Payroll"
		novakName    = "Jana Novák"
		incomeName   = "Income tax 2026"
	)
	d := &demo{ctx: ctx, store: store}
	mueller := d.client(firmID, db.ClientCreate{Name: muellerName, Type: db.ClientLegalPerson,
		LegalName: ptr("Müller & Söhne GmbH"), Address: db.Address{Line1: ptr("Hauptstraße 1"), City: ptr("Berlin"),
			PostalCode: ptr("10115"), CountryCode: ptr("DE")}})
	accounts := d.workspace(mueller, accountsName)
	d.clientUser(mueller, "anna.mueller@example.com", "Anna", "Müller", "admin", accounts)
	berta := d.accountant(firmID, "berta.berater@example.com", "Berta", "Berater", "admin")
	d.member(mueller, accounts, berta)

	novak := d.client(firmID, db.ClientCreate{Name: novakName, Type: db.ClientNaturalPerson, CustomID: ptr("K-1002")})
	incomeTax := d.workspace(novak, incomeName)
	d.clientUser(novak, "jana.novak@example.com", "Jana", "Novák", "admin")
	d.clientUser(mueller, "bob.mueller@example.com", "Bob", "Müller", "user", accounts)
	carl := d.accountant(firmID, "carl.kontor@example.com", "Carl", "Kontor", "user")
	d.member(novak, incomeTax, carl)

	d.member(mueller, d.workspace(mueller, payrollName), berta)
	receipts := d.folder(mueller, accounts, "Receipts", nil)
	d.folder(mueller, accounts, "Travel", &receipts)
	d.folder(mueller, accounts, "Bank statements", nil)
	d.label(mueller, accounts, "Needs review")
	d.label(mueller, accounts, "Booked")

	day := 24 * time.Hour
	statements := d.task(mueller, accounts, berta, "Upload bank statements for Q3", nil, "IN_PROGRESS", now.Add(7*day))
	d.task(mueller, accounts, berta, "Sparkasse business account", &statements, "ACCEPTED", now.Add(7*day))
	d.task(mueller, accounts, berta, "N26 credit card", &statements, "OPEN", time.Time{})
	annual := d.task(mueller, accounts, berta, "Review draft annual accounts 2026", nil, "IN_REVIEW", now.Add(14*day))
	d.task(mueller, accounts, berta, "Confirm inventory count", &annual, "OPEN", now.Add(10*day))
	d.task(mueller, accounts, berta, "Sign engagement letter", nil, "ACCEPTED", time.Time{})
	d.task(mueller, accounts, berta, "Receipts for travel expenses in May", nil, "DECLINED", now.Add(-3*day))
	d.task(mueller, accounts, berta, "Answer the tax office's query", nil, "OPEN", time.Time{})
	if d.err != nil {
		return nil, fmt.Errorf("seed demo: %w", d.err)
	}
	collect, token, err := demoCollect(ctx, store, files, mueller, accounts, receipts, now)
	if err != nil {
		return nil, fmt.Errorf("seed demo: %w", err)
	}
	for _, doc := range DemoDocuments[1:] {
		folder := &receipts
		if doc.Kind == "bank_statement" {
			folder = nil
		}
		if err := demoFile(ctx, store, files, mueller, accounts, folder, doc); err != nil {
			return nil, fmt.Errorf("seed demo: %s: %w", doc.Name, err)
		}
	}
	// Ledger settings, so that the client's month can be exported to DATEV
	// (POST /v1/exports with an accountant key).
	if _, err := store.PutLedgerSettings(ctx, mueller, db.LedgerSettings{Chart: ptr(db.ChartSKR03), ConsultantNumber: ptr(29098),
		ClientNumber: ptr(55003), FiscalYearStart: "01-01", AccountLength: 4}); err != nil {
		return nil, fmt.Errorf("seed demo: ledger settings: %w", err)
	}
	key, _, err := auth.MintKey(ctx, store, firmID, auth.KeySpec{ClientID: mueller, Name: "demo client key"})
	if err != nil {
		return nil, fmt.Errorf("seed demo: %w", err)
	}
	return &DemoRecords{ClientID: mueller, WorkspaceID: accounts, CollectID: collect.ID, CollectToken: token, Key: key, Summary: []string{
		fmt.Sprintf("the client %q, with the client users anna.mueller@example.com (admin) and bob.mueller@example.com", muellerName),
		fmt.Sprintf("its workspace %q: %d tasks (%d of them subtasks), %d folders, %d labels and %d real documents to read: %s",
			accountsName, d.tasks, d.subtasks, d.folders, d.labels, len(DemoDocuments), demoNames()),
		fmt.Sprintf("in it the open collect request %q (%s) asking for %d documents, the first, %q, uploaded through its link",
			collect.Title, collect.ID, len(collect.Items), StatementName),
		fmt.Sprintf("its workspace %q, and a second client %q with the workspace %q", payrollName, novakName, incomeName),
		"the accountant users berta.berater@example.com (admin) and carl.kontor@example.com, members of those workspaces",
		fmt.Sprintf("ledger settings for %q (SKR03, consultant 29098, client 55003), so that its month exports to DATEV", muellerName),
	}}, nil
}

// StatementName is the name of the bank statement Demo uploads through the
// collect request.
const StatementName = "Kontoauszug Q3 2026.pdf"

// DemoPDF is the bank statement Demo uploads through the collect request: a
// PDF with a text layer that reads as a bank statement, made by
// TestDemoDocuments (demodocs_test.go) with the documents beside it in
// demo/, which the walk-through uploads too.
//
//go:embed demo/statement.pdf
var DemoPDF string

//go:embed demo/statement.xml
var demoCAMT string

//go:embed demo/invoice.pdf
var demoInvoice string

//go:embed demo/einvoice.xml
var demoEInvoice string

//go:embed demo/receipt.jpg
var demoReceipt string

// DemoDocument is one of the real documents Demo stores.
type DemoDocument struct {
	Name, MimeType string
	// Kind is what the document is, as the readers should find it.
	Kind string
	Data string
}

// DemoDocuments are the documents Demo stores, the statement it uploads
// through the collect request first. The statements stay at the workspace's
// top, where the bank statement's import finds the camt.053 XML; the
// invoices and the receipt go in the folder "Receipts".
var DemoDocuments = []DemoDocument{
	{Name: StatementName, MimeType: "application/pdf", Kind: "bank_statement", Data: DemoPDF},
	{Name: "Kontoauszug Q3 2026.xml", MimeType: "application/xml", Kind: "bank_statement", Data: demoCAMT},
	{Name: "Rechnung RE-2026-0815 Büro Schmidt.pdf", MimeType: "application/pdf", Kind: "invoice", Data: demoInvoice},
	{Name: "Rechnung 2026-3117 Kassentechnik Nord.xml", MimeType: "application/xml", Kind: "invoice", Data: demoEInvoice},
	{Name: "Beleg ARAL 2026-09-14.jpg", MimeType: "image/jpeg", Kind: "receipt", Data: demoReceipt},
}

func demoNames() string {
	names := make([]string, len(DemoDocuments))
	for i, doc := range DemoDocuments {
		names[i] = fmt.Sprintf("%q", doc.Name)
	}
	return strings.Join(names, ", ")
}

// demoFile stores a document in the workspace as an upload does: bytes in
// place first, then the record.
func demoFile(ctx context.Context, store *db.DB, files Files, clientID, workspaceID string, folderID *string, doc DemoDocument) error {
	pending, err := files.Write(strings.NewReader(doc.Data), int64(len(doc.Data)))
	if err != nil {
		return err
	}
	id := db.NewID()
	return files.Keep(pending, id, func() error {
		_, err := store.CreateFile(ctx, clientID, db.FileCreate{ID: id, WorkspaceID: workspaceID, FolderID: folderID,
			Name: doc.Name, MimeType: doc.MimeType, Size: pending.Size, SHA256: pending.SHA256})
		return err
	})
}

// CollectTitle is the title of the collect request Demo makes: in German,
// as the demo client, a Berlin GmbH, would be asked.
const CollectTitle = "Unterlagen für das 3. Quartal 2026"

// demoCollect makes an open collect request of three documents, in German,
// in the workspace and a session valid for 14 days, and uploads the bank
// statement through it as the client would: bytes in place first, then the
// record. It returns the collect as the upload left it and the session's
// token.
func demoCollect(ctx context.Context, store *db.DB, files Files, clientID, workspaceID, receiptsFolder string, now time.Time) (*db.Collect, string, error) {
	due := now.Add(14 * 24 * time.Hour)
	collect, err := store.CreateCollect(ctx, clientID, db.CollectCreate{
		WorkspaceID: workspaceID, Title: CollectTitle, DueDate: &due, Locale: "de",
		Message: ptr("Bitte laden Sie die Unterlagen für das dritte Quartal bis zum Fälligkeitsdatum hoch. Vielen Dank!"),
		Items: []db.CollectItemCreate{
			{Title: "Kontoauszüge Juli bis September", Description: ptr("Alle Konten, alle Seiten"), Required: true, Kind: ptr(vocab.BankStatement)},
			{Title: "Belege", Description: ptr("Fotos oder Scans aller Belege über 50 EUR"), Required: true, FolderID: &receiptsFolder},
			{Title: "Lohnunterlagen", Required: false, Kind: ptr(vocab.Payslip)},
		},
	})
	if err != nil {
		return nil, "", err
	}
	token, hash, err := auth.NewCollectToken()
	if err != nil {
		return nil, "", err
	}
	if _, err := store.CreateCollectSession(ctx, clientID, collect.ID, db.CollectSessionCreate{
		Label: ptr("demo link"), ExpiresAt: now.Add(14 * 24 * time.Hour), TokenHash: hash,
	}); err != nil {
		return nil, "", err
	}
	pending, err := files.Write(strings.NewReader(DemoPDF), int64(len(DemoPDF)))
	if err != nil {
		return nil, "", err
	}
	id := db.NewID()
	if err := files.Keep(pending, id, func() error {
		_, err := store.ReceiveCollectFile(ctx, hash, collect.Items[0].ID, db.FileCreate{
			ID: id, Name: StatementName, MimeType: "application/pdf", Size: pending.Size, SHA256: pending.SHA256,
		}, db.DefaultCollectBudget)
		return err
	}); err != nil {
		return nil, "", err
	}
	collect, err = store.FindCollect(ctx, clientID, collect.ID)
	return collect, token, err
}

// demo makes the records one after the other and keeps the first error, so
// that Demo reads as the list of what it makes; after an error it makes
// nothing more.
type demo struct {
	ctx   context.Context
	store *db.DB
	err   error
	// The counts of what was made, for the summary.
	tasks, subtasks, folders, labels int
}

// run makes one record unless an earlier one failed, keeps the first error,
// and returns the id of what it made ("" after an error).
func run[T any](d *demo, write func() (T, error), id func(T) string) string {
	if d.err != nil {
		return ""
	}
	made, err := write()
	if err != nil {
		d.err = err
		return ""
	}
	return id(made)
}

func (d *demo) client(firmID string, in db.ClientCreate) string {
	return run(d, func() (*db.Client, error) { return d.store.CreateClient(d.ctx, firmID, in) },
		func(c *db.Client) string { return c.ID })
}

func (d *demo) workspace(clientID, name string) string {
	return run(d, func() (*db.Workspace, error) { return d.store.CreateWorkspace(d.ctx, clientID, name) },
		func(w *db.Workspace) string { return w.ID })
}

func (d *demo) clientUser(clientID, email, first, last, role string, workspaceIDs ...string) {
	run(d, func() (*db.ClientUser, error) {
		return d.store.InviteClientUser(d.ctx, clientID, db.ClientUserInvite{Email: email, Role: role,
			FirstName: &first, LastName: &last, WorkspaceIDs: workspaceIDs})
	}, func(u *db.ClientUser) string { return u.ID })
}

func (d *demo) accountant(firmID, email, first, last, role string) string {
	return run(d, func() (*db.AccountantUser, error) {
		return d.store.InviteAccountantUser(d.ctx, firmID, db.AccountantUserInvite{Email: email,
			FirstName: &first, LastName: &last, Role: db.RoleRef{Name: role}})
	}, func(u *db.AccountantUser) string { return u.ID })
}

func (d *demo) member(clientID, workspaceID, userID string) {
	run(d, func() (*db.Member, error) { return d.store.AddMember(d.ctx, clientID, workspaceID, userID) },
		func(m *db.Member) string { return m.UserID })
}

func (d *demo) folder(clientID, workspaceID, name string, parentID *string) string {
	d.folders++
	return run(d, func() (*db.Folder, error) { return d.store.CreateFolder(d.ctx, clientID, workspaceID, name, parentID) },
		func(f *db.Folder) string { return f.ID })
}

func (d *demo) label(clientID, workspaceID, name string) {
	d.labels++
	run(d, func() (*db.Label, error) { return d.store.CreateLabel(d.ctx, clientID, workspaceID, name) },
		func(l *db.Label) string { return l.ID })
}

// task makes a task created by the accountant user, then moves it to the
// status, as the accountant would; a zero due date leaves it open.
func (d *demo) task(clientID, workspaceID, createdBy, title string, parentID *string, status string, due time.Time) string {
	in := db.TaskCreate{WorkspaceID: workspaceID, Title: title, ParentID: parentID, ActorType: db.ActorUser, CreatedByID: &createdBy}
	if !due.IsZero() {
		in.DueDate = &due
	}
	d.tasks++
	if parentID != nil {
		d.subtasks++
	}
	id := run(d, func() (*db.Task, error) { return d.store.CreateTask(d.ctx, clientID, in) },
		func(t *db.Task) string { return t.ID })
	if status != db.TaskStatuses[0] {
		run(d, func() (*db.Task, error) {
			return d.store.UpdateTask(d.ctx, clientID, id, db.TaskUpdate{Status: db.Update[string]{Set: true, Value: &status}})
		}, func(t *db.Task) string { return t.ID })
	}
	return id
}

func ptr[T any](v T) *T { return &v }
