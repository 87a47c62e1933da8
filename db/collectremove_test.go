package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"acctapi/db"
)

// TestRemoveCollectFile: the uploader takes files back from an item; the
// file stays the workspace's, and an item asked again stays so.
func TestRemoveCollectFile(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "Client")
	ws := mustCreateWorkspace(t, d, client.ID, "Books")
	collect, err := d.CreateCollect(ctx, client.ID, db.CollectCreate{WorkspaceID: ws, Title: "March",
		Items: []db.CollectItemCreate{{Title: "Statements", Required: true}, {Title: "Receipts"}}})
	if err != nil {
		t.Fatal(err)
	}
	token := hash("remove token")
	if _, err := d.CreateCollectSession(ctx, client.ID, collect.ID, db.CollectSessionCreate{TokenHash: token, ExpiresAt: c.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	upload := func(itemID, name string) string {
		t.Helper()
		f, err := d.ReceiveCollectFile(ctx, token, itemID, db.FileCreate{ID: db.NewID(), Name: name, MimeType: "application/pdf", Size: 1, SHA256: make([]byte, 32)}, db.DefaultCollectBudget)
		if err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	statements, receipts := collect.Items[0].ID, collect.Items[1].ID
	a, b, r := upload(statements, "a.pdf"), upload(statements, "b.pdf"), upload(receipts, "r.pdf")

	v, err := d.RemoveCollectFile(ctx, token, statements, a)
	if err != nil || v.Collect.Items[0].Status != db.ItemReceived || !slices.Equal(v.Collect.Items[0].FileIDs, []string{b}) || v.Files[a] != nil {
		t.Fatalf("RemoveCollectFile(a): %+v, %v; want the item RECEIVED with b alone", v, err)
	}
	if _, err := d.RemoveCollectFile(ctx, token, statements, a); db.ErrorCode(err) != db.ENOTFOUND {
		t.Errorf("a second time: %v, want ENOTFOUND", err)
	}
	if _, err := d.RemoveCollectFile(ctx, token, statements, r); db.ErrorCode(err) != db.ENOTFOUND {
		t.Errorf("another item's file: %v, want ENOTFOUND", err)
	}
	if _, err := d.RemoveCollectFile(ctx, token, db.NewID(), b); db.ErrorCode(err) != db.ENOTFOUND {
		t.Errorf("an item not of the collect: %v, want ENOTFOUND", err)
	}
	if _, err := d.RemoveCollectFile(ctx, hash("no such token"), statements, b); db.ErrorCode(err) != db.ENOTFOUND {
		t.Errorf("a token of no session: %v, want ENOTFOUND", err)
	}
	if f, err := d.FindFile(ctx, client.ID, a); err != nil || f.WorkspaceID != ws {
		t.Errorf("the file taken back: %+v, %v; want it kept in the workspace", f, err)
	}

	// Asked again, an item keeps asking when its last file is taken back.
	rejected, reason := db.ItemRejected, "the second account"
	if _, err := d.UpdateCollectItem(ctx, client.ID, collect.ID, statements, db.CollectItemUpdate{
		Status: db.Update[string]{Set: true, Value: &rejected}, RejectionReason: db.Update[string]{Set: true, Value: &reason}}); err != nil {
		t.Fatal(err)
	}
	if v, err := d.RemoveCollectFile(ctx, token, statements, b); err != nil || v.Collect.Items[0].Status != db.ItemRejected || len(v.Collect.Items[0].FileIDs) != 0 {
		t.Errorf("the last file of a rejected item: %+v, %v; want it REJECTED without files", v.Collect.Items[0], err)
	}
	if v, err := d.RemoveCollectFile(ctx, token, receipts, r); err != nil || v.Collect.Items[1].Status != db.ItemPending {
		t.Errorf("the last file of a received item: %+v, %v; want it PENDING", v.Collect.Items[1], err)
	}

	upload(statements, "c.pdf")
	c2 := upload(receipts, "r2.pdf")
	if _, err := d.SubmitCollect(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, err := d.RemoveCollectFile(ctx, token, receipts, c2); db.ErrorCode(err) != db.ECONFLICT {
		t.Errorf("after submit: %v, want ECONFLICT", err)
	}
}
