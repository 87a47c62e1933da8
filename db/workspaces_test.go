package db_test

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"
	"time"

	"acctapi/db"
)

// Store tests of workspaces, members, folders and labels: what each method
// returns, the codes of its refusals, that every method is scoped to the
// client, and that a refused call changes nothing.

// ---- fixtures ----------------------------------------------------------------

// wsStore is a store with two clients of one firm (A and B) and a client of
// another firm (C), each with a workspace and users.
type wsStore struct {
	d     *db.DB
	raw   *sql.DB
	clock *clock
	firm1 *db.Firm
	firm2 *db.Firm
	A     *db.Client // client A of firm 1: the caller in most tests
	B     *db.Client // client B of firm 1
	C     *db.Client // client C of firm 2
	wsA   string
	wsA2  string
	wsB   string
	wsC   string
	// Users: of client A, B and C, and accountant users of both firms.
	userA, userA2, userB, userC string
	acc1, acc2                  string
}

func newWSStore(t *testing.T) *wsStore {
	t.Helper()
	s := &wsStore{clock: newClock()}
	s.d = mustOpenDBWith(t, db.Options{Now: s.clock.Now})
	s.raw = mustOpenRaw(t, s.d.Path())
	s.firm1 = mustCreateFirm(t, s.d, "Firm One")
	s.firm2 = mustCreateFirm(t, s.d, "Firm Two")
	s.A = mustCreateClient(t, s.d, s.firm1.ID, "Client A")
	s.B = mustCreateClient(t, s.d, s.firm1.ID, "Client B")
	s.C = mustCreateClient(t, s.d, s.firm2.ID, "Client C")
	s.wsA = mustCreateWorkspace(t, s.d, s.A.ID, "A main")
	s.wsA2 = mustCreateWorkspace(t, s.d, s.A.ID, "A second")
	s.wsB = mustCreateWorkspace(t, s.d, s.B.ID, "B main")
	s.wsC = mustCreateWorkspace(t, s.d, s.C.ID, "C main")
	s.userA = s.clientUser(t, s.firm1.ID, s.A.ID, "anna@a.example", "Anna", "Amsel", "https://img.example/anna.png")
	s.userA2 = s.clientUser(t, s.firm1.ID, s.A.ID, "ben@a.example", "", "", "")
	s.userB = s.clientUser(t, s.firm1.ID, s.B.ID, "bert@b.example", "Bert", "", "")
	s.userC = s.clientUser(t, s.firm2.ID, s.C.ID, "carl@c.example", "Carl", "", "")
	s.acc1 = s.accountantUser(t, s.firm1.ID, "acc@one.example")
	s.acc2 = s.accountantUser(t, s.firm2.ID, "acc@two.example")
	return s
}

func wsNullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// clientUser inserts a user of the client; "" leaves a name or the image null.
func (s *wsStore) clientUser(t *testing.T, firmID, clientID, email, first, last, image string) string {
	t.Helper()
	id := db.NewID()
	if _, err := s.raw.Exec(`INSERT INTO users (id, firm_id, client_id, email, first_name, last_name, image, client_role, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'user', 0, 0)`, id, firmID, clientID, email, wsNullable(first), wsNullable(last), wsNullable(image)); err != nil {
		t.Fatalf("insert client user %s: %v", email, err)
	}
	return id
}

// accountantUser inserts an accountant user of the firm with its role user.
func (s *wsStore) accountantUser(t *testing.T, firmID, email string) string {
	t.Helper()
	id := db.NewID()
	res, err := s.raw.Exec(`INSERT INTO users (id, firm_id, email, role_id, created_at, updated_at)
		SELECT ?, ?, ?, id, 0, 0 FROM roles WHERE firm_id = ? AND name = 'user'`, id, firmID, email, firmID)
	if err != nil {
		t.Fatalf("insert accountant user %s: %v", email, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("insert accountant user %s: %d rows, want 1 (no role user in firm %s?)", email, n, firmID)
	}
	return id
}

// rows reads one text column of a query.
func (s *wsStore) rows(t *testing.T, query string, args ...any) []string {
	t.Helper()
	rows, err := s.raw.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// state reads every row these methods could touch, of every tenant.
func (s *wsStore) state(t *testing.T) map[string][]string {
	t.Helper()
	return map[string][]string{
		"workspaces": s.rows(t, `SELECT id || ' ' || client_id || ' ' || name || ' ' || coalesce(archived_at, 'NULL') || ' '
			|| created_at || ' ' || updated_at FROM workspaces ORDER BY id`),
		"members": s.rows(t, `SELECT workspace_id || ' ' || user_id || ' ' || is_muted || ' ' || created_at || ' ' || updated_at
			FROM workspace_members ORDER BY workspace_id, user_id`),
		"folders": s.rows(t, `SELECT id || ' ' || client_id || ' ' || workspace_id || ' ' || coalesce(parent_id, 'NULL') || ' '
			|| name || ' ' || created_at || ' ' || updated_at FROM folders ORDER BY id`),
		"labels": s.rows(t, `SELECT id || ' ' || client_id || ' ' || workspace_id || ' ' || name || ' ' || created_at || ' '
			|| updated_at FROM labels ORDER BY id`),
		"users": s.rows(t, `SELECT id || ' ' || email FROM users ORDER BY id`),
		"tasks": s.rows(t, `SELECT id || ' ' || coalesce(created_by_id, 'NULL') || ' ' || updated_at FROM tasks ORDER BY id`),
		"files": s.rows(t, `SELECT id || ' ' || coalesce(created_by_id, 'NULL') || ' ' || coalesce(task_id, 'NULL') FROM files ORDER BY id`),
	}
}

// refused checks that call fails with the code (and path) and changes
// nothing, also when the clock has moved.
func (s *wsStore) refused(t *testing.T, code string, path []any, call func() error) {
	t.Helper()
	before := s.state(t)
	s.clock.Advance(time.Minute)
	assertError(t, call(), code, path...)
	if after := s.state(t); !reflect.DeepEqual(after, before) {
		for table := range before {
			if !reflect.DeepEqual(after[table], before[table]) {
				t.Errorf("%s changed by a refused call:\n got %v\nwant %v", table, after[table], before[table])
			}
		}
	}
}

func (s *wsStore) now() time.Time { return s.clock.Now().UTC().Truncate(time.Second) }

func wsPageReq(limit int, sortKey string, desc bool, cursor string) db.PageRequest {
	return db.PageRequest{Limit: limit, Sort: sortKey, Desc: desc, Cursor: cursor}
}

func wsWorkspaceIDs(ws []*db.Workspace) []string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return ids
}

func wsMemberIDs(ms []*db.Member) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.UserID
	}
	return ids
}

func wsFolderIDs(fs []*db.Folder) []string {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	return ids
}

func wsLabelIDs(ls []*db.Label) []string {
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	return ids
}

// ---- workspaces ------------------------------------------------------------------

func TestWorkspaceStoreCreateRenameList(t *testing.T) {
	ctx := context.Background()
	s := newWSStore(t)
	A, B := s.A.ID, s.B.ID

	var created *db.Workspace
	t.Run("create", func(t *testing.T) {
		s.clock.Advance(1500 * time.Millisecond)
		w, err := s.d.CreateWorkspace(ctx, A, "Payroll")
		if err != nil {
			t.Fatalf("CreateWorkspace: got %v, want nil", err)
		}
		now := s.now()
		want := &db.Workspace{ID: w.ID, ClientID: A, Name: "Payroll", CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(w, want) {
			t.Errorf("created: got %+v, want %+v", w, want)
		}
		if w.CreatedAt.Location() != time.UTC {
			t.Errorf("createdAt location: got %v, want UTC", w.CreatedAt.Location())
		}
		if !strings.HasPrefix(w.ID, "c") || len(w.ID) != 25 {
			t.Errorf("id: got %q, want a generated cuid", w.ID)
		}
		p, err := s.d.ListWorkspaces(ctx, A, wsPageReq(1, "createdAt", true, w.ID))
		if err != nil || len(p.Items) != 1 || !reflect.DeepEqual(p.Items[0], want) {
			t.Fatalf("stored: got %+v, %v; want %+v", p, err, want)
		}
		created = w
	})

	t.Run("rename", func(t *testing.T) {
		s.clock.Advance(time.Hour)
		w, err := s.d.RenameWorkspace(ctx, A, created.ID, "Payroll 2026")
		if err != nil {
			t.Fatalf("RenameWorkspace: got %v, want nil", err)
		}
		want := *created
		want.Name, want.UpdatedAt = "Payroll 2026", s.now()
		if !reflect.DeepEqual(*w, want) {
			t.Errorf("renamed: got %+v, want %+v", *w, want)
		}
		p, err := s.d.ListWorkspaces(ctx, A, wsPageReq(1, "createdAt", true, created.ID))
		if err != nil || !reflect.DeepEqual(*p.Items[0], want) {
			t.Errorf("stored: got %+v, %v; want %+v", p.Items[0], err, want)
		}
		created = w
	})

	t.Run("rename refused", func(t *testing.T) {
		for name, c := range map[string]struct{ clientID, id string }{
			"client B's workspace":          {A, s.wsB},
			"another firm's workspace":      {A, s.wsC},
			"client A's workspace as B":     {B, s.wsA},
			"client A's workspace as C":     {s.C.ID, created.ID},
			"unknown workspace":             {A, db.NewID()},
			"a client id as workspace id":   {A, A},
			"a folder id as workspace id":   {A, mustCreateFolder(t, s.d, A, s.wsA, "not a workspace")},
			"unknown client, A's workspace": {db.NewID(), s.wsA},
		} {
			t.Run(name, func(t *testing.T) {
				s.refused(t, db.ENOTFOUND, nil, func() error {
					_, err := s.d.RenameWorkspace(ctx, c.clientID, c.id, "Hijacked")
					return err
				})
			})
		}
	})

	t.Run("list is the client's, newest first, ties by id", func(t *testing.T) {
		got, err := s.d.ListWorkspaces(ctx, A, wsPageReq(100, "createdAt", true, ""))
		if err != nil {
			t.Fatal(err)
		}
		// wsA and wsA2 were inserted at the clock's start, created later.
		first, second := s.wsA, s.wsA2
		if first < second {
			first, second = second, first
		}
		if want := []string{created.ID, first, second}; !reflect.DeepEqual(wsWorkspaceIDs(got.Items), want) || got.Total != 3 {
			t.Errorf("client A: got %v (total %d), want %v", wsWorkspaceIDs(got.Items), got.Total, want)
		}
		if got.NextCursor != nil || got.PreviousCursor != nil || got.Limit != 100 {
			t.Errorf("single page: got next %s prev %s limit %d", strp(got.NextCursor), strp(got.PreviousCursor), got.Limit)
		}
		for clientID, want := range map[string][]string{B: {s.wsB}, s.C.ID: {s.wsC}, db.NewID(): {}} {
			p, err := s.d.ListWorkspaces(ctx, clientID, wsPageReq(100, "createdAt", false, ""))
			if err != nil || !reflect.DeepEqual(wsWorkspaceIDs(p.Items), want) || p.Total != len(want) {
				t.Errorf("client %s: got %v (total %d) %v, want %v", clientID, wsWorkspaceIDs(p.Items), p.Total, err, want)
			}
		}
	})

	t.Run("pages both ways", func(t *testing.T) {
		d2 := newWSStore(t)
		for i := range 5 {
			if i%2 == 0 {
				d2.clock.Advance(time.Second)
			}
			if _, err := d2.d.CreateWorkspace(ctx, d2.C.ID, "W"); err != nil {
				t.Fatal(err)
			}
		}
		all, err := d2.d.ListWorkspaces(ctx, d2.C.ID, wsPageReq(100, "createdAt", false, ""))
		if err != nil || all.Total != 6 {
			t.Fatalf("all: got %+v %v, want 6", all, err)
		}
		order := wsWorkspaceIDs(all.Items)
		if order[0] != d2.wsC {
			t.Errorf("oldest: got %s, want the fixture %s", order[0], d2.wsC)
		}
		p1, _ := d2.d.ListWorkspaces(ctx, d2.C.ID, wsPageReq(4, "createdAt", false, ""))
		p2, err := d2.d.ListWorkspaces(ctx, d2.C.ID, wsPageReq(4, "createdAt", false, *p1.NextCursor))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(wsWorkspaceIDs(p1.Items), order[:4]) || !reflect.DeepEqual(wsWorkspaceIDs(p2.Items), order[4:]) ||
			strp(p2.PreviousCursor) != order[0] || p2.NextCursor != nil || p2.Total != 6 {
			t.Errorf("pages: got %v then %v (prev %s next %s), want %v", wsWorkspaceIDs(p1.Items), wsWorkspaceIDs(p2.Items),
				strp(p2.PreviousCursor), strp(p2.NextCursor), order)
		}
	})

	t.Run("a cursor of another client", func(t *testing.T) {
		for _, cursor := range []string{s.wsB, s.wsC, db.NewID()} {
			_, err := s.d.ListWorkspaces(ctx, A, wsPageReq(10, "createdAt", true, cursor))
			assertError(t, err, db.EINVALIDCURSOR, "Cursor")
		}
	})
}

// ---- members ----------------------------------------------------------------------

func TestMemberStore(t *testing.T) {
	ctx := context.Background()
	s := newWSStore(t)
	A, B := s.A.ID, s.B.ID
	if _, err := s.d.AddMember(ctx, B, s.wsB, s.userB); err != nil {
		t.Fatalf("AddMember to client B's workspace: %v", err)
	}

	t.Run("no members", func(t *testing.T) {
		ms, err := s.d.ListMembers(ctx, A, s.wsA)
		if err != nil || ms == nil || len(ms) != 0 {
			t.Errorf("ListMembers: got %v (nil %v), %v; want an empty slice", ms, ms == nil, err)
		}
	})

	t.Run("add a client user and an accountant user of the firm", func(t *testing.T) {
		s.clock.Advance(1500 * time.Millisecond)
		m, err := s.d.AddMember(ctx, A, s.wsA, s.userA)
		if err != nil {
			t.Fatalf("AddMember(client user): %v", err)
		}
		t1 := s.now()
		want := &db.Member{WorkspaceID: s.wsA, UserID: s.userA, CreatedAt: t1, UpdatedAt: t1,
			User: db.MemberUser{ID: s.userA, Email: "anna@a.example", FirstName: ptr("Anna"), LastName: ptr("Amsel"), Image: ptr("https://img.example/anna.png")}}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("member: got %+v, want %+v", m, want)
		}
		s.clock.Advance(time.Minute)
		acc, err := s.d.AddMember(ctx, A, s.wsA, s.acc1)
		if err != nil {
			t.Fatalf("AddMember(accountant user): %v", err)
		}
		if acc.UserID != s.acc1 || acc.User.Email != "acc@one.example" || acc.User.FirstName != nil || acc.User.Image != nil || acc.IsMuted {
			t.Errorf("accountant member: got %+v", acc)
		}
		s.clock.Advance(time.Minute)
		if _, err := s.d.AddMember(ctx, A, s.wsA, s.userA2); err != nil {
			t.Fatalf("AddMember(second client user): %v", err)
		}
		ms, err := s.d.ListMembers(ctx, A, s.wsA)
		if err != nil {
			t.Fatal(err)
		}
		if got := wsMemberIDs(ms); !reflect.DeepEqual(got, []string{s.userA, s.acc1, s.userA2}) {
			t.Errorf("members, oldest first: got %v, want [userA acc1 userA2]", got)
		}
		if !reflect.DeepEqual(ms[0], want) {
			t.Errorf("listed member: got %+v, want %+v", ms[0], want)
		}
		if ms[2].User.FirstName != nil || ms[2].User.LastName != nil || ms[2].User.Image != nil {
			t.Errorf("user without names: got %+v, want nil names and image", ms[2].User)
		}
	})

	t.Run("an accountant user may join workspaces of every client of the firm", func(t *testing.T) {
		if _, err := s.d.AddMember(ctx, B, s.wsB, s.acc1); err != nil {
			t.Errorf("AddMember(acc1 to client B's workspace): %v", err)
		}
		if _, err := s.d.AddMember(ctx, s.C.ID, s.wsC, s.acc2); err != nil {
			t.Errorf("AddMember(acc2 to client C's workspace): %v", err)
		}
	})

	t.Run("add refused", func(t *testing.T) {
		cases := []struct {
			name               string
			clientID, ws, user string
			code               string
			path               []any
		}{
			{"a member already", A, s.wsA, s.userA, db.ECONFLICT, []any{"UserID"}},
			{"an accountant member already", A, s.wsA, s.acc1, db.ECONFLICT, []any{"UserID"}},
			{"a user of client B", A, s.wsA, s.userB, db.ENOTFOUND, []any{"UserID"}},
			{"a user of another firm's client", A, s.wsA, s.userC, db.ENOTFOUND, []any{"UserID"}},
			{"an accountant user of another firm", A, s.wsA, s.acc2, db.ENOTFOUND, []any{"UserID"}},
			{"an unknown user", A, s.wsA, db.NewID(), db.ENOTFOUND, []any{"UserID"}},
			{"a client id as user id", A, s.wsA, A, db.ENOTFOUND, []any{"UserID"}},
			{"client A's user to client B's workspace", B, s.wsB, s.userA2, db.ENOTFOUND, []any{"UserID"}},
			{"client B's workspace as client A", A, s.wsB, s.userA2, db.ENOTFOUND, nil},
			{"client B's workspace as A, with B's user", A, s.wsB, s.userB, db.ENOTFOUND, nil},
			{"another firm's workspace", A, s.wsC, s.acc1, db.ENOTFOUND, nil},
			{"unknown workspace", A, db.NewID(), s.userA2, db.ENOTFOUND, nil},
			{"unknown client", db.NewID(), s.wsA, s.userA2, db.ENOTFOUND, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s.refused(t, c.code, c.path, func() error {
					m, err := s.d.AddMember(ctx, c.clientID, c.ws, c.user)
					if m != nil {
						t.Errorf("AddMember refused with %v returned a member %+v", err, m)
					}
					return err
				})
			})
		}
	})

	t.Run("list refused for other clients' workspaces", func(t *testing.T) {
		for name, c := range map[string]struct{ clientID, ws string }{
			"client B's":     {A, s.wsB},
			"another firm's": {A, s.wsC},
			"A's, as B":      {B, s.wsA},
			"A's, as C":      {s.C.ID, s.wsA},
			"unknown":        {A, db.NewID()},
		} {
			t.Run(name, func(t *testing.T) {
				ms, err := s.d.ListMembers(ctx, c.clientID, c.ws)
				assertError(t, err, db.ENOTFOUND)
				if ms != nil {
					t.Errorf("ListMembers refused returned %v", ms)
				}
			})
		}
	})

	t.Run("remove keeps the user's tasks and files", func(t *testing.T) {
		task := mustCreateTask(t, s.d, A, db.TaskCreate{WorkspaceID: s.wsA, Title: "by Anna"})
		if _, err := s.raw.Exec(`UPDATE tasks SET created_by_id = ? WHERE id = ?`, s.userA, task.ID); err != nil {
			t.Fatal(err)
		}
		file := mustCreateFile(t, s.d, A, s.wsA, &task.ID, "anna.pdf")
		if _, err := s.raw.Exec(`UPDATE files SET created_by_id = ? WHERE id = ?`, s.userA, file); err != nil {
			t.Fatal(err)
		}
		if _, err := s.d.AddMember(ctx, A, s.wsA2, s.userA); err != nil {
			t.Fatal(err)
		}
		before := s.state(t)
		if err := s.d.RemoveMember(ctx, A, s.wsA, s.userA); err != nil {
			t.Fatalf("RemoveMember: %v", err)
		}
		ms, _ := s.d.ListMembers(ctx, A, s.wsA)
		if got := wsMemberIDs(ms); !reflect.DeepEqual(got, []string{s.acc1, s.userA2}) {
			t.Errorf("members after removal: got %v", got)
		}
		ms, _ = s.d.ListMembers(ctx, A, s.wsA2)
		if got := wsMemberIDs(ms); !reflect.DeepEqual(got, []string{s.userA}) {
			t.Errorf("the other workspace's members: got %v, want [userA] (membership is per workspace)", got)
		}
		after := s.state(t)
		for _, table := range []string{"tasks", "files", "users", "workspaces"} {
			if !reflect.DeepEqual(after[table], before[table]) {
				t.Errorf("%s changed by RemoveMember:\n got %v\nwant %v", table, after[table], before[table])
			}
		}
		if got := mustFindTask(t, s.d, A, task.ID); strp(got.CreatedByID) != s.userA {
			t.Errorf("the member's task: createdById %s, want %s", strp(got.CreatedByID), s.userA)
		}
	})

	t.Run("remove refused", func(t *testing.T) {
		cases := []struct {
			name               string
			clientID, ws, user string
			path               []any
		}{
			{"not a member", A, s.wsA, s.userA, []any{"UserID"}},
			{"unknown user", A, s.wsA, db.NewID(), []any{"UserID"}},
			{"a member of client B's workspace, named in A's", A, s.wsA, s.userB, []any{"UserID"}},
			{"client B's workspace as client A", A, s.wsB, s.userB, nil},
			{"client B's workspace as A, the accountant member", A, s.wsB, s.acc1, nil},
			{"another firm's workspace", A, s.wsC, s.acc2, nil},
			{"client A's workspace as B", B, s.wsA, s.acc1, nil},
			{"client A's workspace as C", s.C.ID, s.wsA, s.acc1, nil},
			{"unknown workspace", A, db.NewID(), s.acc1, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s.refused(t, db.ENOTFOUND, c.path, func() error { return s.d.RemoveMember(ctx, c.clientID, c.ws, c.user) })
			})
		}
	})

	t.Run("add again after removal is a new membership", func(t *testing.T) {
		s.clock.Advance(time.Hour)
		m, err := s.d.AddMember(ctx, A, s.wsA, s.userA)
		if err != nil {
			t.Fatal(err)
		}
		if !m.CreatedAt.Equal(s.now()) {
			t.Errorf("createdAt: got %v, want %v", m.CreatedAt, s.now())
		}
		ms, _ := s.d.ListMembers(ctx, A, s.wsA)
		if got := wsMemberIDs(ms); !reflect.DeepEqual(got, []string{s.acc1, s.userA2, s.userA}) {
			t.Errorf("members: got %v, want userA last (newest membership)", got)
		}
	})
}

// ---- folders -------------------------------------------------------------------

func TestFolderStore(t *testing.T) {
	ctx := context.Background()
	s := newWSStore(t)
	A, B := s.A.ID, s.B.ID
	folderB, err := s.d.CreateFolder(ctx, B, s.wsB, "Receipts", nil)
	if err != nil {
		t.Fatal(err)
	}
	folderA2, err := s.d.CreateFolder(ctx, A, s.wsA2, "Receipts", nil)
	if err != nil {
		t.Fatal(err)
	}

	var top, year, nested *db.Folder
	t.Run("create", func(t *testing.T) {
		s.clock.Advance(time.Minute)
		top, err = s.d.CreateFolder(ctx, A, s.wsA, "Receipts", nil)
		if err != nil {
			t.Fatalf("CreateFolder(top): %v", err)
		}
		now := s.now()
		want := &db.Folder{ID: top.ID, ClientID: A, WorkspaceID: s.wsA, Name: "Receipts", CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(top, want) {
			t.Errorf("folder: got %+v, want %+v", top, want)
		}
		s.clock.Advance(time.Minute)
		if year, err = s.d.CreateFolder(ctx, A, s.wsA, "2026", nil); err != nil {
			t.Fatal(err)
		}
		// The same name under another parent, in another case.
		if nested, err = s.d.CreateFolder(ctx, A, s.wsA, "receipts", &year.ID); err != nil {
			t.Fatalf("CreateFolder(nested): %v", err)
		}
		if strp(nested.ParentID) != year.ID || nested.Name != "receipts" {
			t.Errorf("nested: got %+v", nested)
		}
		if _, err := s.d.CreateFolder(ctx, A, s.wsA, "Receipts", &nested.ID); err != nil {
			t.Errorf("CreateFolder(third level, same name): %v", err)
		}
	})

	t.Run("create refused", func(t *testing.T) {
		cases := []struct {
			name         string
			clientID, ws string
			folder       string
			parent       *string
			code         string
			path         []any
		}{
			{"same name at the top, other case", A, s.wsA, "RECEIPTS", nil, db.ECONFLICT, []any{"Name"}},
			{"same name at the top, same case", A, s.wsA, "2026", nil, db.ECONFLICT, []any{"Name"}},
			{"same name under the parent, other case", A, s.wsA, "Receipts", &year.ID, db.ECONFLICT, []any{"Name"}},
			{"parent in another workspace of the client", A, s.wsA, "x", &folderA2.ID, db.ENOTFOUND, []any{"ParentID"}},
			{"parent of client B", A, s.wsA, "x", &folderB.ID, db.ENOTFOUND, []any{"ParentID"}},
			{"unknown parent", A, s.wsA, "x", ptr(db.NewID()), db.ENOTFOUND, []any{"ParentID"}},
			{"the workspace as parent", A, s.wsA, "x", &s.wsA, db.ENOTFOUND, []any{"ParentID"}},
			{"client B's workspace as A", A, s.wsB, "x", nil, db.ENOTFOUND, nil},
			{"client B's workspace as A, under B's folder", A, s.wsB, "x", &folderB.ID, db.ENOTFOUND, nil},
			{"another firm's workspace", A, s.wsC, "x", nil, db.ENOTFOUND, nil},
			{"client A's workspace as B", B, s.wsA, "x", nil, db.ENOTFOUND, nil},
			{"unknown workspace", A, db.NewID(), "x", nil, db.ENOTFOUND, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s.refused(t, c.code, c.path, func() error {
					f, err := s.d.CreateFolder(ctx, c.clientID, c.ws, c.folder, c.parent)
					if f != nil {
						t.Errorf("CreateFolder refused with %v returned %+v", err, f)
					}
					return err
				})
			})
		}
	})

	t.Run("list", func(t *testing.T) {
		p, err := s.d.ListFolders(ctx, A, s.wsA, wsPageReq(100, "name", false, ""))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range p.Items {
			if f.WorkspaceID != s.wsA || f.ClientID != A {
				t.Errorf("folder of another workspace listed: %+v", f)
			}
			names = append(names, f.Name)
		}
		// By name, case-insensitively, ties by id.
		if len(names) != 4 || names[0] != "2026" || strings.ToLower(names[1]) != "receipts" || strings.ToLower(names[3]) != "receipts" || p.Total != 4 {
			t.Errorf("by name: got %v (total %d)", names, p.Total)
		}
		p, err = s.d.ListFolders(ctx, A, s.wsA, wsPageReq(2, "createdAt", false, ""))
		if err != nil || !reflect.DeepEqual(p.Items[0], top) || p.Total != 4 || p.NextCursor == nil {
			t.Errorf("by createdAt asc: got %+v, %v", p, err)
		}
		p, err = s.d.ListFolders(ctx, A, s.wsA2, wsPageReq(10, "createdAt", true, ""))
		if err != nil || !reflect.DeepEqual(wsFolderIDs(p.Items), []string{folderA2.ID}) {
			t.Errorf("second workspace: got %v, %v", wsFolderIDs(p.Items), err)
		}
	})

	t.Run("list refused", func(t *testing.T) {
		for name, c := range map[string]struct{ clientID, ws string }{
			"client B's workspace as A": {A, s.wsB},
			"another firm's workspace":  {A, s.wsC},
			"A's workspace as B":        {B, s.wsA},
			"unknown workspace":         {A, db.NewID()},
		} {
			t.Run(name, func(t *testing.T) {
				p, err := s.d.ListFolders(ctx, c.clientID, c.ws, wsPageReq(10, "createdAt", true, ""))
				assertError(t, err, db.ENOTFOUND)
				if p != nil {
					t.Errorf("refused list returned %+v", p)
				}
			})
		}
		for name, cursor := range map[string]string{"of another workspace": folderA2.ID, "of client B": folderB.ID, "unknown": db.NewID()} {
			t.Run("cursor "+name, func(t *testing.T) {
				_, err := s.d.ListFolders(ctx, A, s.wsA, wsPageReq(10, "name", false, cursor))
				assertError(t, err, db.EINVALIDCURSOR, "Cursor")
			})
		}
	})
}

// ---- labels --------------------------------------------------------------------

func TestLabelStore(t *testing.T) {
	ctx := context.Background()
	s := newWSStore(t)
	A, B := s.A.ID, s.B.ID
	labelB, err := s.d.CreateLabel(ctx, B, s.wsB, "Tax")
	if err != nil {
		t.Fatal(err)
	}

	var tax, urgent *db.Label
	t.Run("create", func(t *testing.T) {
		s.clock.Advance(time.Minute)
		tax, err = s.d.CreateLabel(ctx, A, s.wsA, "Tax")
		if err != nil {
			t.Fatalf("CreateLabel: %v", err)
		}
		now := s.now()
		want := &db.Label{ID: tax.ID, ClientID: A, WorkspaceID: s.wsA, Name: "Tax", CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(tax, want) {
			t.Errorf("label: got %+v, want %+v", tax, want)
		}
		s.clock.Advance(time.Minute)
		if urgent, err = s.d.CreateLabel(ctx, A, s.wsA, "urgent"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.d.CreateLabel(ctx, A, s.wsA2, "TAX"); err != nil {
			t.Errorf("the same name in another workspace: %v", err)
		}
	})

	t.Run("create refused", func(t *testing.T) {
		cases := []struct {
			name, clientID, ws, label, code string
			path                            []any
		}{
			{"duplicate, other case", A, s.wsA, "tAx", db.ECONFLICT, []any{"Name"}},
			{"duplicate, same case", A, s.wsA, "urgent", db.ECONFLICT, []any{"Name"}},
			{"client B's workspace as A", A, s.wsB, "New", db.ENOTFOUND, nil},
			{"another firm's workspace", A, s.wsC, "New", db.ENOTFOUND, nil},
			{"client A's workspace as B", B, s.wsA, "New", db.ENOTFOUND, nil},
			{"unknown workspace", A, db.NewID(), "New", db.ENOTFOUND, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s.refused(t, c.code, c.path, func() error {
					l, err := s.d.CreateLabel(ctx, c.clientID, c.ws, c.label)
					if l != nil {
						t.Errorf("CreateLabel refused with %v returned %+v", err, l)
					}
					return err
				})
			})
		}
	})

	t.Run("list", func(t *testing.T) {
		p, err := s.d.ListLabels(ctx, A, s.wsA, wsPageReq(10, "createdAt", true, ""))
		if err != nil || !reflect.DeepEqual(p.Items, []*db.Label{urgent, tax}) || p.Total != 2 {
			t.Errorf("newest first: got %v (total %d), %v", wsLabelIDs(p.Items), p.Total, err)
		}
		p, err = s.d.ListLabels(ctx, A, s.wsA, wsPageReq(1, "name", false, ""))
		if err != nil || !reflect.DeepEqual(wsLabelIDs(p.Items), []string{tax.ID}) || strp(p.NextCursor) != urgent.ID {
			t.Errorf("by name: got %v next %s, %v", wsLabelIDs(p.Items), strp(p.NextCursor), err)
		}
		p, err = s.d.ListLabels(ctx, B, s.wsB, wsPageReq(10, "name", false, ""))
		if err != nil || !reflect.DeepEqual(wsLabelIDs(p.Items), []string{labelB.ID}) {
			t.Errorf("client B: got %v, %v", wsLabelIDs(p.Items), err)
		}
	})

	t.Run("list refused", func(t *testing.T) {
		for name, c := range map[string]struct{ clientID, ws string }{
			"client B's workspace as A": {A, s.wsB},
			"another firm's workspace":  {A, s.wsC},
			"A's workspace as C":        {s.C.ID, s.wsA},
			"unknown workspace":         {A, db.NewID()},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := s.d.ListLabels(ctx, c.clientID, c.ws, wsPageReq(10, "createdAt", true, ""))
				assertError(t, err, db.ENOTFOUND)
			})
		}
		_, err := s.d.ListLabels(ctx, A, s.wsA, wsPageReq(10, "createdAt", true, labelB.ID))
		assertError(t, err, db.EINVALIDCURSOR, "Cursor")
	})
}

// TestWorkspaceStoreScoping calls every method with client A and the id of
// client B's workspace: each is ENOTFOUND (db.ErrorCode), and nothing of
// client B's changes.
func TestWorkspaceStoreScoping(t *testing.T) {
	ctx := context.Background()
	s := newWSStore(t)
	A, B := s.A.ID, s.B.ID
	if _, err := s.d.AddMember(ctx, B, s.wsB, s.userB); err != nil {
		t.Fatal(err)
	}
	if _, err := s.d.CreateFolder(ctx, B, s.wsB, "B's folder", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.d.CreateLabel(ctx, B, s.wsB, "B's label"); err != nil {
		t.Fatal(err)
	}
	page := wsPageReq(10, "createdAt", true, "")
	calls := map[string]func(ws string) error{
		"RenameWorkspace": func(ws string) error { _, err := s.d.RenameWorkspace(ctx, A, ws, "x"); return err },
		"ListMembers":     func(ws string) error { _, err := s.d.ListMembers(ctx, A, ws); return err },
		"AddMember":       func(ws string) error { _, err := s.d.AddMember(ctx, A, ws, s.acc1); return err },
		"RemoveMember":    func(ws string) error { return s.d.RemoveMember(ctx, A, ws, s.userB) },
		"CreateFolder":    func(ws string) error { _, err := s.d.CreateFolder(ctx, A, ws, "x", nil); return err },
		"ListFolders":     func(ws string) error { _, err := s.d.ListFolders(ctx, A, ws, page); return err },
		"CreateLabel":     func(ws string) error { _, err := s.d.CreateLabel(ctx, A, ws, "x"); return err },
		"ListLabels":      func(ws string) error { _, err := s.d.ListLabels(ctx, A, ws, page); return err },
	}
	for name, call := range calls {
		for target, ws := range map[string]string{"client B": s.wsB, "another firm": s.wsC, "unknown": db.NewID()} {
			t.Run(name+" on "+target, func(t *testing.T) {
				before := s.state(t)
				s.clock.Advance(time.Minute)
				err := call(ws)
				if code := db.ErrorCode(err); code != db.ENOTFOUND {
					t.Errorf("%s: got %v (code %q), want %s", name, err, code, db.ENOTFOUND)
				}
				if want := "workspace " + ws + " not found"; err == nil || !strings.HasSuffix(err.Error(), want) {
					t.Errorf("%s: got %v, want the message %q (the same for every workspace the client lacks)", name, err, want)
				}
				if after := s.state(t); !reflect.DeepEqual(after, before) {
					t.Errorf("%s changed the store:\n got %v\nwant %v", name, after, before)
				}
			})
		}
	}
}
