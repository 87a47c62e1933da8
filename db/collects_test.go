package db_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"acctapi/db"
)

// collectFixture is a firm with a client and a workspace to ask documents in.
type collectFixture struct {
	store  *db.DB
	clock  *clock
	firm   *db.Firm
	client *db.Client
	ws     string
	folder string
}

func newCollectFixture(t *testing.T) *collectFixture {
	t.Helper()
	c := newClock()
	store := mustOpenDBWith(t, db.Options{Now: c.Now, EncodeEvent: encodeEvent})
	firm := mustCreateFirm(t, store, "Kanzlei Muster")
	client := mustCreateClient(t, store, firm.ID, "Bäckerei Schmidt")
	ws := mustCreateWorkspace(t, store, client.ID, "Books")
	return &collectFixture{store: store, clock: c, firm: firm, client: client, ws: ws,
		folder: mustCreateFolder(t, store, client.ID, ws, "Bank")}
}

// mustCreateCollect creates a collect in the fixture's workspace with the
// items named, all required.
func (f *collectFixture) mustCreateCollect(t *testing.T, title string, items ...string) *db.Collect {
	t.Helper()
	in := db.CollectCreate{WorkspaceID: f.ws, Title: title}
	for _, it := range items {
		in.Items = append(in.Items, db.CollectItemCreate{Title: it, Required: true})
	}
	c, err := f.store.CreateCollect(context.Background(), f.client.ID, in)
	if err != nil {
		t.Fatalf("CreateCollect(%q): got %v, want nil", title, err)
	}
	return c
}

// mustCreateSession creates a session of the collect valid for an hour and
// returns its token hash.
func (f *collectFixture) mustCreateSession(t *testing.T, collectID, token string) ([]byte, *db.CollectSession) {
	t.Helper()
	h := hash(token)
	s, err := f.store.CreateCollectSession(context.Background(), f.client.ID, collectID,
		db.CollectSessionCreate{TokenHash: h, ExpiresAt: f.clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("CreateCollectSession: got %v, want nil", err)
	}
	return h, s
}

// upload records a file uploaded through the session to the item.
func (f *collectFixture) upload(token []byte, itemID, name string) (*db.File, error) {
	return f.store.ReceiveCollectFile(context.Background(), token, itemID, db.FileCreate{
		ID: db.NewID(), Name: name, MimeType: "application/pdf", Size: 3, SHA256: hash(name)})
}

func TestCollectFlow(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	c := f.mustCreateCollect(t, "March", "Bank statement", "Receipts")
	token, _ := f.mustCreateSession(t, c.ID, "token")

	view, err := f.store.OpenCollectSession(ctx, token)
	if err != nil {
		t.Fatalf("OpenCollectSession: got %v, want nil", err)
	}
	if view.FirmName != f.firm.Name || view.ClientName != f.client.Name || view.Collect.ID != c.ID || len(view.Collect.Items) != 2 {
		t.Fatalf("view: got %+v, want the collect with the firm's and client's names", view)
	}
	var missing *db.MissingItemsError
	if _, err := f.store.SubmitCollect(ctx, token); !errors.As(err, &missing) || !slices.Equal(missing.Positions, []int{0, 1}) {
		t.Fatalf("SubmitCollect with nothing uploaded: got %v, want a MissingItemsError for both items", err)
	}
	for _, it := range c.Items {
		if _, err := f.upload(token, it.ID, it.Title+".pdf"); err != nil {
			t.Fatalf("ReceiveCollectFile: got %v, want nil", err)
		}
	}
	view, err = f.store.SubmitCollect(ctx, token)
	if err != nil || view.Collect.Status != db.CollectSubmitted || len(view.Files) != 2 {
		t.Fatalf("SubmitCollect: got %+v, %v, want SUBMITTED with two files", view, err)
	}
}
