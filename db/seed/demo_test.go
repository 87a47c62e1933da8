package seed_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/db/seed"
	"acctapi/filestore"
)

func TestDemo(t *testing.T) {
	ctx := context.Background()
	d := mustOpenStore(t, filepath.Join(t.TempDir(), "acct.db"))
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	firm := mustFirm(t, d, "Demo Firm")
	raw := mustOpenRaw(t, d.Path())
	counts := func() [4]int {
		return [4]int{
			count(t, raw, `SELECT count(*) FROM clients WHERE firm_id = ?`, firm.ID),
			count(t, raw, `SELECT count(*) FROM workspaces`),
			count(t, raw, `SELECT count(*) FROM users WHERE firm_id = ?`, firm.ID),
			count(t, raw, `SELECT count(*) FROM workspace_members`),
		}
	}

	demo, err := seed.Demo(ctx, d, files, firm.ID, time.Now())
	if err != nil {
		t.Fatalf("Demo: got %v, want nil", err)
	}
	if demo == nil {
		t.Fatalf("Demo: got nil, want the demo records")
	}

	t.Run("client", func(t *testing.T) {
		c, err := d.FindClient(ctx, firm.ID, demo.ClientID)
		if err != nil {
			t.Fatalf("FindClient(demo client): got %v, want nil", err)
		}
		if c.Slug != "mueller-soehne" {
			t.Errorf("demo client slug: got %v, want %v", c.Slug, "mueller-soehne")
		}
	})

	t.Run("ledger settings, so that its month exports", func(t *testing.T) {
		s, err := d.FindLedgerSettings(ctx, demo.ClientID)
		if err != nil {
			t.Fatal(err)
		}
		if missing := s.Missing(); len(missing) != 0 || *s.Chart != db.ChartSKR03 {
			t.Errorf("the demo client's ledger settings: chart %v, missing %v; want SKR03 and nothing missing", s.Chart, missing)
		}
	})

	t.Run("workspace and members", func(t *testing.T) {
		if n := count(t, raw, `SELECT count(*) FROM workspaces WHERE id = ? AND client_id = ?`, demo.WorkspaceID, demo.ClientID); n != 1 {
			t.Errorf("demo workspace of the demo client: got %v, want %v", n, 1)
		}
		if n := count(t, raw, `SELECT count(*) FROM workspace_members m JOIN users u ON u.id = m.user_id
			WHERE m.workspace_id = ? AND u.firm_id = ?`, demo.WorkspaceID, firm.ID); n != 3 {
			t.Errorf("members of the demo workspace: got %v, want %v", n, 3)
		}
		if n := count(t, raw, `SELECT count(*) FROM users WHERE client_id = ?`, demo.ClientID); n != 2 {
			t.Errorf("client users: got %v, want %v", n, 2)
		}
		if n := count(t, raw, `SELECT count(*) FROM clients WHERE firm_id = ?`, firm.ID); n != 2 {
			t.Errorf("demo clients: got %v, want %v", n, 2)
		}
		if n := count(t, raw, `SELECT count(*) FROM users u JOIN roles r ON r.id = u.role_id
			WHERE u.firm_id = ? AND u.client_id IS NULL AND r.name = 'admin'`, firm.ID); n != 1 {
			t.Errorf("accountant admin users: got %v, want %v", n, 1)
		}
	})

	t.Run("summary", func(t *testing.T) {
		summary := strings.Join(demo.Summary, "\n")
		tasks := count(t, raw, `SELECT count(*) FROM tasks WHERE workspace_id = ?`, demo.WorkspaceID)
		files := count(t, raw, `SELECT count(*) FROM files WHERE workspace_id = ? AND name = ?`, demo.WorkspaceID, seed.StatementName)
		for _, want := range []string{"Müller & Söhne", "Annual accounts 2026", fmt.Sprintf("%d tasks", tasks), seed.StatementName} {
			if !strings.Contains(summary, want) {
				t.Errorf("summary does not name %q:\n%s", want, summary)
			}
		}
		if files != 1 {
			t.Errorf("files named %q in the demo workspace: got %v, want %v", seed.StatementName, files, 1)
		}
	})

	t.Run("documents", func(t *testing.T) {
		if n := count(t, raw, `SELECT count(*) FROM files WHERE client_id = ?`, demo.ClientID); n != len(seed.DemoDocuments) {
			t.Errorf("demo files: got %v, want %v", n, len(seed.DemoDocuments))
		}
		for _, doc := range seed.DemoDocuments {
			sum := sha256.Sum256([]byte(doc.Data))
			var id string
			var inFolder bool
			err := raw.QueryRow(`SELECT f.id, f.folder_id IS NOT NULL FROM files f WHERE f.workspace_id = ? AND f.name = ? AND f.mimetype = ?
				AND f.size = ? AND f.sha256 = ?`, demo.WorkspaceID, doc.Name, doc.MimeType, len(doc.Data), sum[:]).Scan(&id, &inFolder)
			if err != nil {
				t.Errorf("the demo file %q: %v", doc.Name, err)
				continue
			}
			if want := doc.Kind != "bank_statement"; inFolder != want {
				t.Errorf("the demo file %q in a folder: got %v, want %v", doc.Name, inFolder, want)
			}
			rc, err := files.Open(ctx, id)
			if err != nil {
				t.Errorf("the demo file %q's bytes: %v", doc.Name, err)
				continue
			}
			stored, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || string(stored) != doc.Data {
				t.Errorf("the demo file %q's bytes: got %d bytes, %v, want the document", doc.Name, len(stored), err)
			}
		}
		if !strings.Contains(strings.Join(demo.Summary, "\n"), seed.DemoDocuments[4].Name) {
			t.Errorf("summary does not name %q:\n%s", seed.DemoDocuments[4].Name, strings.Join(demo.Summary, "\n"))
		}
	})

	t.Run("collect", func(t *testing.T) {
		c, err := d.FindCollect(ctx, demo.ClientID, demo.CollectID)
		if err != nil {
			t.Fatalf("FindCollect(demo collect): got %v, want nil", err)
		}
		if c.WorkspaceID != demo.WorkspaceID || c.Title != seed.CollectTitle || c.Status != db.CollectOpen || len(c.Items) != 3 {
			t.Fatalf("demo collect: got %+v, want %q, open, in the demo workspace, with three items", c, seed.CollectTitle)
		}
		statement := count(t, raw, `SELECT count(*) FROM files WHERE id = ? AND name = ?`, c.Items[0].FileIDs[0], seed.StatementName)
		if c.Items[0].Status != db.ItemReceived || len(c.Items[0].FileIDs) != 1 || statement != 1 {
			t.Errorf("first item: got %+v, want it received with the statement", c.Items[0])
		}
		for _, it := range c.Items[1:] {
			if it.Status != db.ItemPending || len(it.FileIDs) != 0 {
				t.Errorf("item %q: got %+v, want it pending", it.Title, it)
			}
		}
		view, err := d.OpenCollectSession(ctx, auth.HashCollectToken(demo.CollectToken))
		if err != nil || view.Collect.ID != c.ID || view.Session.ExpiresAt.Before(time.Now().Add(13*24*time.Hour)) {
			t.Fatalf("the demo token: got %+v, %v, want the demo collect's session, valid for 14 days", view, err)
		}
		if !strings.Contains(strings.Join(demo.Summary, "\n"), seed.CollectTitle) {
			t.Errorf("summary does not name the collect %q:\n%s", seed.CollectTitle, strings.Join(demo.Summary, "\n"))
		}
	})

	t.Run("key and message", func(t *testing.T) {
		id, _, ok := auth.ParseKey(demo.Key)
		if !ok {
			t.Fatalf("the demo key %q does not parse", demo.Key)
		}
		if n := count(t, raw, `SELECT count(*) FROM api_keys WHERE id = ? AND firm_id = ? AND client_id = ? AND revoked_at IS NULL`,
			id, firm.ID, demo.ClientID); n != 1 {
			t.Errorf("keys of the demo client with the demo key's id: got %v, want 1", n)
		}
		var out strings.Builder
		demo.Print(&out, "http://127.0.0.1:8080/collect/"+demo.CollectToken)
		for _, want := range append([]string{demo.ClientID, demo.WorkspaceID, demo.Key, "http://127.0.0.1:8080/collect/" + demo.CollectToken},
			demo.Summary...) {
			if !strings.Contains(out.String(), want) {
				t.Errorf("the demo's message lacks %q:\n%s", want, out.String())
			}
		}
	})

	t.Run("second call", func(t *testing.T) {
		before := counts()
		again, err := seed.Demo(ctx, d, files, firm.ID, time.Now())
		if err != nil || again != nil {
			t.Errorf("second Demo: got %+v, %v, want nil, nil", again, err)
		}
		if after := counts(); after != before {
			t.Errorf("counts (clients, workspaces, users, members) after second Demo: got %v, want %v", after, before)
		}
	})

	t.Run("firm with clients", func(t *testing.T) {
		busy := mustFirm(t, d, "Busy Firm")
		if _, err := d.CreateClient(ctx, busy.ID, db.ClientCreate{Name: "Real Client", Type: db.ClientLegalPerson}); err != nil {
			t.Fatal(err)
		}
		got, err := seed.Demo(ctx, d, files, busy.ID, time.Now())
		if err != nil || got != nil {
			t.Errorf("Demo of a firm with clients: got %+v, %v, want nil, nil", got, err)
		}
	})
}
