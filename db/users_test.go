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

// Store tests of client users, accountant users, roles and client updates.

// usFixture is a store with two firms: firm one with clients A and B, firm
// two with client C, each client with a workspace or two.
type usFixture struct {
	d       *db.DB
	raw     *sql.DB
	clock   *clock
	firm    *db.Firm
	other   *db.Firm
	A, B, C *db.Client
	wsA1    string
	wsA2    string
	wsB     string
	wsC     string
}

func newUSFixture(t *testing.T) *usFixture {
	t.Helper()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	f := &usFixture{d: d, raw: mustOpenRaw(t, d.Path()), clock: c}
	f.firm = mustCreateFirm(t, d, "Firm One")
	f.other = mustCreateFirm(t, d, "Firm Two")
	f.A = mustCreateClient(t, d, f.firm.ID, "Client A")
	f.B = mustCreateClient(t, d, f.firm.ID, "Client B")
	f.C = mustCreateClient(t, d, f.other.ID, "Client C")
	f.wsA1 = mustCreateWorkspace(t, d, f.A.ID, "A1")
	f.wsA2 = mustCreateWorkspace(t, d, f.A.ID, "A2")
	f.wsB = mustCreateWorkspace(t, d, f.B.ID, "B")
	f.wsC = mustCreateWorkspace(t, d, f.C.ID, "C")
	return f
}

func (f *usFixture) now() time.Time { return f.clock.Now().UTC().Truncate(time.Second) }

func (f *usFixture) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	return count(t, f.raw, query, args...)
}

func (f *usFixture) invite(t *testing.T, clientID string, in db.ClientUserInvite) *db.ClientUser {
	t.Helper()
	u, err := f.d.InviteClientUser(context.Background(), clientID, in)
	if err != nil {
		t.Fatalf("InviteClientUser(%s): got %v, want nil", in.Email, err)
	}
	return u
}

func (f *usFixture) inviteAccountant(t *testing.T, firmID string, in db.AccountantUserInvite) *db.AccountantUser {
	t.Helper()
	u, err := f.d.InviteAccountantUser(context.Background(), firmID, in)
	if err != nil {
		t.Fatalf("InviteAccountantUser(%s): got %v, want nil", in.Email, err)
	}
	return u
}

// builtin returns the id of a built-in role of the firm.
func (f *usFixture) builtin(t *testing.T, firmID, name string) string {
	t.Helper()
	roles, err := f.d.ListRoles(context.Background(), firmID)
	if err != nil {
		t.Fatalf("ListRoles: got %v, want nil", err)
	}
	for _, r := range roles {
		if r.Name == name {
			return r.ID
		}
	}
	t.Fatalf("firm %s has no role %s", firmID, name)
	return ""
}

func usRoleNames(roles []*db.Role) []string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = r.Name + ":" + strp(r.CustomName)
	}
	return out
}

func TestClientUsersStore(t *testing.T) {
	ctx := context.Background()
	f := newUSFixture(t)
	users := func(t *testing.T) int { t.Helper(); return f.count(t, `SELECT count(*) FROM users`) }
	members := func(t *testing.T) int { t.Helper(); return f.count(t, `SELECT count(*) FROM workspace_members`) }

	var anna *db.ClientUser
	t.Run("invite", func(t *testing.T) {
		anna = f.invite(t, f.A.ID, db.ClientUserInvite{Email: "anna@example.com", Role: "admin", FirstName: ptr("Anna"),
			WorkspaceIDs: []string{f.wsA1, f.wsA2}})
		now := f.now()
		if anna.ClientID != f.A.ID || anna.Email != "anna@example.com" || anna.Role != "admin" || strp(anna.FirstName) != "Anna" ||
			anna.LastName != nil || anna.InvitedAt == nil || !anna.InvitedAt.Equal(now) || !anna.CreatedAt.Equal(now) || !anna.UpdatedAt.Equal(now) {
			t.Errorf("user: got %+v (invited %s), want anna@example.com, admin, Anna, invited and created at %v", anna, timep(anna.InvitedAt), now)
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND firm_id = ? AND client_id = ? AND role_id IS NULL
			AND client_role = 'admin' AND invited_at = ?`, anna.ID, f.firm.ID, f.A.ID, now.Unix()); n != 1 {
			t.Errorf("stored user: got %d rows, want 1", n)
		}
		if n := f.count(t, `SELECT count(*) FROM workspace_members WHERE user_id = ? AND workspace_id IN (?, ?) AND is_muted = 0`,
			anna.ID, f.wsA1, f.wsA2); n != 2 {
			t.Errorf("memberships: got %d, want 2", n)
		}
	})

	t.Run("the same email in another client, or another firm", func(t *testing.T) {
		f.invite(t, f.B.ID, db.ClientUserInvite{Email: "anna@example.com", Role: "user", WorkspaceIDs: []string{f.wsB}})
		f.invite(t, f.C.ID, db.ClientUserInvite{Email: "anna@example.com", Role: "user"})
	})

	t.Run("the same email twice in a client: ECONFLICT, nothing written", func(t *testing.T) {
		before, beforeMembers := users(t), members(t)
		_, err := f.d.InviteClientUser(ctx, f.A.ID, db.ClientUserInvite{Email: "anna@example.com", Role: "user", WorkspaceIDs: []string{f.wsA1}})
		assertError(t, err, db.ECONFLICT, "Email")
		if users(t) != before || members(t) != beforeMembers {
			t.Errorf("after ECONFLICT: %d users, %d memberships, want %d and %d", users(t), members(t), before, beforeMembers)
		}
	})

	t.Run("a workspace that is not the client's: ENOTFOUND naming it, nothing written", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			ids   []string
			index int
		}{
			{"another client's", []string{f.wsA1, f.wsB}, 1},
			{"another firm's", []string{f.wsC, f.wsA1}, 0},
			{"unknown", []string{f.wsA1, f.wsA2, db.NewID()}, 2},
		} {
			t.Run(c.name, func(t *testing.T) {
				before, beforeMembers := users(t), members(t)
				_, err := f.d.InviteClientUser(ctx, f.A.ID, db.ClientUserInvite{Email: "nothing@example.com", Role: "user", WorkspaceIDs: c.ids})
				assertError(t, err, db.ENOTFOUND, "WorkspaceIDs", c.index)
				if !strings.Contains(err.Error(), c.ids[c.index]) {
					t.Errorf("error %v does not name %s", err, c.ids[c.index])
				}
				if users(t) != before || members(t) != beforeMembers {
					t.Errorf("after ENOTFOUND: %d users, %d memberships, want %d and %d", users(t), members(t), before, beforeMembers)
				}
				if n := f.count(t, `SELECT count(*) FROM users WHERE email = 'nothing@example.com'`); n != 0 {
					t.Errorf("users with the email: got %d, want 0", n)
				}
			})
		}
	})

	t.Run("SetClientUserRole", func(t *testing.T) {
		f.clock.Advance(time.Hour)
		got, err := f.d.SetClientUserRole(ctx, f.A.ID, anna.ID, "user")
		if err != nil {
			t.Fatalf("SetClientUserRole: got %v, want nil", err)
		}
		if got.Role != "user" || got.ID != anna.ID || got.Email != anna.Email || strp(got.FirstName) != "Anna" ||
			!got.CreatedAt.Equal(anna.CreatedAt) || !got.UpdatedAt.Equal(f.now()) || timep(got.InvitedAt) != timep(anna.InvitedAt) {
			t.Errorf("user: got %+v, want %+v with role user, updated at %v", got, anna, f.now())
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND client_role = 'user' AND updated_at = ?`, anna.ID, f.now().Unix()); n != 1 {
			t.Errorf("stored role: got %d rows, want 1", n)
		}
	})

	t.Run("SetClientUserRole is scoped to the client", func(t *testing.T) {
		acct := f.inviteAccountant(t, f.firm.ID, db.AccountantUserInvite{Email: "acct@example.com", Role: db.RoleRef{Name: "admin"}})
		for _, c := range []struct{ name, clientID, id string }{
			{"through another client of the firm", f.B.ID, anna.ID},
			{"through another firm's client", f.C.ID, anna.ID},
			{"an accountant user", f.A.ID, acct.ID},
			{"unknown", f.A.ID, db.NewID()},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := f.d.SetClientUserRole(ctx, c.clientID, c.id, "admin")
				assertCode(t, err, db.ENOTFOUND)
			})
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND client_role = 'user'`, anna.ID); n != 1 {
			t.Errorf("role after refused changes: want user")
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND client_role IS NULL`, acct.ID); n != 1 {
			t.Errorf("accountant user got a client role")
		}
	})

	t.Run("SetClientUserRole refuses a role that is not a client role", func(t *testing.T) {
		if _, err := f.d.SetClientUserRole(ctx, f.A.ID, anna.ID, "owner"); err == nil {
			t.Errorf("role owner: got nil, want an error")
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND client_role = 'user'`, anna.ID); n != 1 {
			t.Errorf("role after a refused change: want user")
		}
	})
}

func TestAccountantUsersStore(t *testing.T) {
	ctx := context.Background()
	f := newUSFixture(t)
	senior, err := f.d.CreateRole(ctx, f.firm.ID, "Senior accountant")
	if err != nil {
		t.Fatalf("CreateRole: got %v, want nil", err)
	}
	partner, err := f.d.CreateRole(ctx, f.other.ID, "Partner")
	if err != nil {
		t.Fatalf("CreateRole: got %v, want nil", err)
	}
	adminID, userID := f.builtin(t, f.firm.ID, "admin"), f.builtin(t, f.firm.ID, "user")
	users := func(t *testing.T) int { t.Helper(); return f.count(t, `SELECT count(*) FROM users`) }

	var anna, bob, carl *db.AccountantUser
	t.Run("invite with a built-in role by name, and by id, and a custom one", func(t *testing.T) {
		anna = f.inviteAccountant(t, f.firm.ID, db.AccountantUserInvite{Email: "anna@example.com", Role: db.RoleRef{Name: "admin"},
			FirstName: ptr("Anna"), LastName: ptr("Alt")})
		if anna.FirmID != f.firm.ID || anna.RoleID != adminID || anna.Role == nil || anna.Role.Name != "admin" || anna.Role.CustomName != nil ||
			strp(anna.FirstName) != "Anna" || strp(anna.LastName) != "Alt" || !anna.CreatedAt.Equal(f.now()) || timep(anna.InvitedAt) != timep(&anna.CreatedAt) {
			t.Errorf("anna: got %+v (role %+v)", anna, anna.Role)
		}
		bob = f.inviteAccountant(t, f.firm.ID, db.AccountantUserInvite{Email: "bob@example.com", Role: db.RoleRef{ID: userID}})
		if bob.RoleID != userID || bob.Role.Name != "user" {
			t.Errorf("bob: got role %+v, want user", bob.Role)
		}
		carl = f.inviteAccountant(t, f.firm.ID, db.AccountantUserInvite{Email: "carl@example.com", Role: db.RoleRef{ID: senior.ID}})
		if carl.RoleID != senior.ID || carl.Role.Name != "custom" || strp(carl.Role.CustomName) != "Senior accountant" {
			t.Errorf("carl: got role %+v, want the custom role", carl.Role)
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND client_id IS NULL AND client_role IS NULL AND role_id = ?`, anna.ID, adminID); n != 1 {
			t.Errorf("stored anna: got %d rows, want 1", n)
		}
	})

	t.Run("a role that is not the firm's: ENOTFOUND at role, nothing written", func(t *testing.T) {
		before := users(t)
		for _, ref := range []db.RoleRef{
			{ID: partner.ID}, {ID: f.builtin(t, f.other.ID, "admin")}, {ID: db.NewID()}, {ID: anna.ID},
			{Name: "custom"}, {Name: "owner"}, {Name: "Senior accountant"},
		} {
			_, err := f.d.InviteAccountantUser(ctx, f.firm.ID, db.AccountantUserInvite{Email: "eve@example.com", Role: ref})
			assertError(t, err, db.ENOTFOUND, "Role")
		}
		if users(t) != before {
			t.Errorf("users: got %d, want %d", users(t), before)
		}
	})

	t.Run("the same email twice in the firm: ECONFLICT; fine elsewhere", func(t *testing.T) {
		_, err := f.d.InviteAccountantUser(ctx, f.firm.ID, db.AccountantUserInvite{Email: "anna@example.com", Role: db.RoleRef{Name: "user"}})
		assertError(t, err, db.ECONFLICT, "Email")
		f.inviteAccountant(t, f.other.ID, db.AccountantUserInvite{Email: "anna@example.com", Role: db.RoleRef{ID: partner.ID}})
		f.invite(t, f.A.ID, db.ClientUserInvite{Email: "anna@example.com", Role: "admin"})
		// A client user's email does not block an accountant user's.
		f.invite(t, f.A.ID, db.ClientUserInvite{Email: "dora@example.com", Role: "admin"})
		f.inviteAccountant(t, f.firm.ID, db.AccountantUserInvite{Email: "dora@example.com", Role: db.RoleRef{Name: "user"}})
	})

	t.Run("FindAccountantUser is scoped to the firm's accountant users", func(t *testing.T) {
		got, err := f.d.FindAccountantUser(ctx, f.firm.ID, carl.ID)
		if err != nil {
			t.Fatalf("FindAccountantUser: got %v, want nil", err)
		}
		if got.ID != carl.ID || got.Email != carl.Email || got.Role == nil || got.Role.ID != senior.ID || strp(got.Role.CustomName) != "Senior accountant" {
			t.Errorf("carl: got %+v (role %+v)", got, got.Role)
		}
		clientUser := f.invite(t, f.B.ID, db.ClientUserInvite{Email: "client@example.com", Role: "user"})
		for _, c := range []struct{ name, firmID, id string }{
			{"another firm's", f.other.ID, carl.ID},
			{"a client user", f.firm.ID, clientUser.ID},
			{"unknown", f.firm.ID, db.NewID()},
		} {
			_, err := f.d.FindAccountantUser(ctx, c.firmID, c.id)
			assertCode(t, err, db.ENOTFOUND)
		}
	})

	t.Run("SetAccountantUserRole", func(t *testing.T) {
		f.clock.Advance(time.Hour)
		got, err := f.d.SetAccountantUserRole(ctx, f.firm.ID, bob.ID, db.RoleRef{ID: senior.ID})
		if err != nil {
			t.Fatalf("SetAccountantUserRole: got %v, want nil", err)
		}
		if got.RoleID != senior.ID || got.Role.Name != "custom" || !got.UpdatedAt.Equal(f.now()) || !got.CreatedAt.Equal(bob.CreatedAt) {
			t.Errorf("bob: got %+v (role %+v), want the custom role, updated at %v", got, got.Role, f.now())
		}
		got, err = f.d.SetAccountantUserRole(ctx, f.firm.ID, bob.ID, db.RoleRef{Name: "admin"})
		if err != nil || got.RoleID != adminID {
			t.Errorf("bob to admin: got %+v, %v", got, err)
		}
	})

	t.Run("SetAccountantUserRole is scoped", func(t *testing.T) {
		clientUser := f.invite(t, f.A.ID, db.ClientUserInvite{Email: "client2@example.com", Role: "user"})
		for _, c := range []struct {
			name, firmID, id string
			ref              db.RoleRef
			path             []any
		}{
			{"another firm's role", f.firm.ID, bob.ID, db.RoleRef{ID: partner.ID}, []any{"Role"}},
			{"an unknown role", f.firm.ID, bob.ID, db.RoleRef{ID: db.NewID()}, []any{"Role"}},
			{"another firm's user", f.other.ID, bob.ID, db.RoleRef{Name: "user"}, nil},
			{"a client user", f.firm.ID, clientUser.ID, db.RoleRef{Name: "user"}, nil},
			{"an unknown user", f.firm.ID, db.NewID(), db.RoleRef{Name: "user"}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := f.d.SetAccountantUserRole(ctx, c.firmID, c.id, c.ref)
				assertError(t, err, db.ENOTFOUND, c.path...)
			})
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND role_id = ?`, bob.ID, adminID); n != 1 {
			t.Errorf("bob's role after refused changes: want admin")
		}
		if n := f.count(t, `SELECT count(*) FROM users WHERE id = ? AND role_id IS NULL AND client_role = 'user'`, clientUser.ID); n != 1 {
			t.Errorf("client user after a refused change: want unchanged")
		}
	})

	t.Run("ListAccountantUsers is scoped and carries roles", func(t *testing.T) {
		page, err := f.d.ListAccountantUsers(ctx, f.firm.ID, db.PageRequest{Limit: 100, Sort: "email"})
		if err != nil {
			t.Fatalf("ListAccountantUsers: got %v, want nil", err)
		}
		var emails []string
		for _, u := range page.Items {
			emails = append(emails, u.Email+":"+u.Role.Name)
			if u.FirmID != f.firm.ID || u.Role == nil || u.Role.ID != u.RoleID {
				t.Errorf("listed user %+v (role %+v)", u, u.Role)
			}
		}
		want := []string{"anna@example.com:admin", "bob@example.com:admin", "carl@example.com:custom", "dora@example.com:user"}
		if !reflect.DeepEqual(emails, want) || page.Total != 4 {
			t.Errorf("firm one's accountant users: got %v (total %d), want %v", emails, page.Total, want)
		}
		other, err := f.d.ListAccountantUsers(ctx, f.other.ID, db.PageRequest{Limit: 100, Sort: "createdAt"})
		if err != nil || len(other.Items) != 1 || other.Total != 1 || other.Items[0].Role.ID != partner.ID {
			t.Errorf("firm two's accountant users: got %+v, %v", other, err)
		}
		_, err = f.d.ListAccountantUsers(ctx, f.other.ID, db.PageRequest{Limit: 10, Sort: "email", Cursor: anna.ID})
		assertCode(t, err, db.EINVALIDCURSOR)
	})

	t.Run("names sort case-insensitively, missing ones last both ways", func(t *testing.T) {
		// Of anna (Anna), bob, carl and dora only anna has a first name.
		f.inviteAccountant(t, f.firm.ID, db.AccountantUserInvite{Email: "erin@example.com", Role: db.RoleRef{Name: "user"}, FirstName: ptr("bea")})
		f.inviteAccountant(t, f.firm.ID, db.AccountantUserInvite{Email: "finn@example.com", Role: db.RoleRef{Name: "user"}, FirstName: ptr("BEN")})
		for _, c := range []struct {
			desc bool
			want []string
		}{
			{false, []string{"Anna", "bea", "BEN", "<nil>", "<nil>", "<nil>"}},
			{true, []string{"BEN", "bea", "Anna", "<nil>", "<nil>", "<nil>"}},
		} {
			page, err := f.d.ListAccountantUsers(ctx, f.firm.ID, db.PageRequest{Limit: 100, Sort: "firstName", Desc: c.desc})
			if err != nil {
				t.Fatalf("ListAccountantUsers: got %v, want nil", err)
			}
			var got []string
			for _, u := range page.Items {
				got = append(got, strp(u.FirstName))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("first names, desc %v: got %v, want %v", c.desc, got, c.want)
			}
		}
	})
}

func TestRolesStore(t *testing.T) {
	ctx := context.Background()
	f := newUSFixture(t)

	t.Run("built-in roles first", func(t *testing.T) {
		roles, err := f.d.ListRoles(ctx, f.firm.ID)
		if err != nil {
			t.Fatalf("ListRoles: got %v, want nil", err)
		}
		if got := usRoleNames(roles); !reflect.DeepEqual(got, []string{"admin:<nil>", "user:<nil>"}) {
			t.Errorf("roles of a new firm: got %v, want admin and user", got)
		}
	})

	var senior *db.Role
	t.Run("CreateRole", func(t *testing.T) {
		var err error
		senior, err = f.d.CreateRole(ctx, f.firm.ID, "Senior accountant")
		if err != nil {
			t.Fatalf("CreateRole: got %v, want nil", err)
		}
		if senior.Name != "custom" || strp(senior.CustomName) != "Senior accountant" || senior.FirmID != f.firm.ID ||
			!senior.CreatedAt.Equal(f.now()) {
			t.Errorf("role: got %+v", senior)
		}
		if n := f.count(t, `SELECT count(*) FROM roles WHERE id = ? AND firm_id = ? AND name = 'custom' AND custom_name = 'Senior accountant'`,
			senior.ID, f.firm.ID); n != 1 {
			t.Errorf("stored role: got %d rows, want 1", n)
		}
	})

	t.Run("a name taken in the firm: ECONFLICT; fine in another firm", func(t *testing.T) {
		_, err := f.d.CreateRole(ctx, f.firm.ID, "Senior accountant")
		assertCode(t, err, db.ECONFLICT)
		if n := f.count(t, `SELECT count(*) FROM roles WHERE firm_id = ?`, f.firm.ID); n != 3 {
			t.Errorf("roles of firm one: got %d, want 3", n)
		}
		other, err := f.d.CreateRole(ctx, f.other.ID, "Senior accountant")
		if err != nil || other.ID == senior.ID || other.FirmID != f.other.ID {
			t.Errorf("same name in firm two: got %+v, %v", other, err)
		}
	})

	t.Run("ListRoles: built-in first, then custom ones by name, the firm's only", func(t *testing.T) {
		for _, name := range []string{"Zeta", "Assistant"} {
			if _, err := f.d.CreateRole(ctx, f.firm.ID, name); err != nil {
				t.Fatalf("CreateRole(%s): got %v, want nil", name, err)
			}
		}
		roles, err := f.d.ListRoles(ctx, f.firm.ID)
		if err != nil {
			t.Fatalf("ListRoles: got %v, want nil", err)
		}
		want := []string{"admin:<nil>", "user:<nil>", "custom:Assistant", "custom:Senior accountant", "custom:Zeta"}
		if got := usRoleNames(roles); !reflect.DeepEqual(got, want) {
			t.Errorf("roles: got %v, want %v", got, want)
		}
		for _, r := range roles {
			if r.FirmID != f.firm.ID {
				t.Errorf("role %+v is not firm one's", r)
			}
		}
		other, err := f.d.ListRoles(ctx, f.other.ID)
		if err != nil {
			t.Fatalf("ListRoles: got %v, want nil", err)
		}
		if got := usRoleNames(other); !reflect.DeepEqual(got, []string{"admin:<nil>", "user:<nil>", "custom:Senior accountant"}) {
			t.Errorf("firm two's roles: got %v", got)
		}
	})
}

func TestUpdateClientStore(t *testing.T) {
	ctx := context.Background()
	f := newUSFixture(t)
	created, err := f.d.CreateClient(ctx, f.firm.ID, db.ClientCreate{Name: "Müller & Söhne GmbH", Type: db.ClientLegalPerson,
		CustomID: ptr("K-1"), Address: db.Address{Line1: ptr("Hauptstraße 1"), City: ptr("Berlin"), CountryCode: ptr("DE")}})
	if err != nil {
		t.Fatalf("CreateClient: got %v, want nil", err)
	}
	stored := func(t *testing.T) *db.Client {
		t.Helper()
		c, err := f.d.FindClient(ctx, f.firm.ID, created.ID)
		if err != nil {
			t.Fatalf("FindClient: got %v, want nil", err)
		}
		return c
	}

	t.Run("rename keeps the slug; only the fields set change", func(t *testing.T) {
		f.clock.Advance(time.Hour)
		got, err := f.d.UpdateClient(ctx, f.firm.ID, created.ID, db.ClientUpdate{Name: val("Schmidt KG"), LegalName: val("Schmidt KG i.L."),
			Address: db.AddressUpdate{City: val("München"), Line2: val("Hof")}})
		if err != nil {
			t.Fatalf("UpdateClient: got %v, want nil", err)
		}
		if got.Name != "Schmidt KG" || got.Slug != "mueller-soehne-gmbh" || got.Type != db.ClientLegalPerson || strp(got.CustomID) != "K-1" ||
			strp(got.LegalName) != "Schmidt KG i.L." || !got.UpdatedAt.Equal(f.now()) || !got.CreatedAt.Equal(created.CreatedAt) {
			t.Errorf("client: got %+v", got)
		}
		a := stored(t).Address
		if strp(a.Line1) != "Hauptstraße 1" || strp(a.Line2) != "Hof" || strp(a.City) != "München" || a.PostalCode != nil || strp(a.CountryCode) != "DE" {
			t.Errorf("address: got %s %s %s %s %s", strp(a.Line1), strp(a.Line2), strp(a.City), strp(a.PostalCode), strp(a.CountryCode))
		}
		if s := stored(t); s.Name != "Schmidt KG" || s.Slug != "mueller-soehne-gmbh" || !s.UpdatedAt.Equal(f.now()) {
			t.Errorf("stored client: got %+v", s)
		}
		// A new client of the old name takes the next slug: the old one is still taken.
		again := mustCreateClient(t, f.d, f.firm.ID, "Müller & Söhne GmbH")
		if again.Slug != "mueller-soehne-gmbh-2" {
			t.Errorf("slug of a new client of the old name: got %s, want mueller-soehne-gmbh-2", again.Slug)
		}
	})

	t.Run("null clears the optional fields", func(t *testing.T) {
		got, err := f.d.UpdateClient(ctx, f.firm.ID, created.ID, db.ClientUpdate{CustomID: null[string](), LegalName: null[string](),
			Type: val(db.ClientNaturalPerson), Address: db.AddressUpdate{Line1: null[string](), CountryCode: null[string]()}})
		if err != nil {
			t.Fatalf("UpdateClient: got %v, want nil", err)
		}
		if got.CustomID != nil || got.LegalName != nil || got.Type != db.ClientNaturalPerson {
			t.Errorf("client: got %+v", got)
		}
		if a := stored(t).Address; a.Line1 != nil || a.CountryCode != nil || strp(a.City) != "München" {
			t.Errorf("address: got %+v", a)
		}
	})

	t.Run("a null name or type: EINVALID, nothing changes", func(t *testing.T) {
		before := stored(t)
		f.clock.Advance(time.Hour)
		for _, c := range []struct {
			field string
			u     db.ClientUpdate
		}{
			{"Name", db.ClientUpdate{Name: null[string](), LegalName: val("changed")}},
			{"Type", db.ClientUpdate{Type: null[string](), CustomID: val("changed")}},
		} {
			_, err := f.d.UpdateClient(ctx, f.firm.ID, created.ID, c.u)
			assertError(t, err, db.EINVALID, c.field)
		}
		if after := stored(t); !reflect.DeepEqual(after, before) {
			t.Errorf("client after EINVALID: got %+v, want %+v", after, before)
		}
	})

	t.Run("another firm's client: ENOTFOUND", func(t *testing.T) {
		for _, c := range []struct{ firmID, id string }{{f.other.ID, created.ID}, {f.firm.ID, f.C.ID}, {f.firm.ID, db.NewID()}} {
			_, err := f.d.UpdateClient(ctx, c.firmID, c.id, db.ClientUpdate{Name: val("Hijacked")})
			assertCode(t, err, db.ENOTFOUND)
		}
		if n := f.count(t, `SELECT count(*) FROM clients WHERE name = 'Hijacked'`); n != 0 {
			t.Errorf("renamed across firms: %d", n)
		}
	})
}

func TestListClientsStore(t *testing.T) {
	ctx := context.Background()
	f := newUSFixture(t) // firm one: Client A and Client B; firm two: Client C
	for _, name := range []string{"bravo", "Alpha", "alpha"} {
		f.clock.Advance(time.Second)
		mustCreateClient(t, f.d, f.firm.ID, name)
	}
	names := func(p *db.Page[*db.Client]) []string {
		var out []string
		for _, c := range p.Items {
			out = append(out, c.Name)
			if c.FirmID != f.firm.ID {
				t.Errorf("client %s of firm %s listed for firm one", c.Name, c.FirmID)
			}
		}
		return out
	}

	t.Run("by name, case-insensitively, ties by id", func(t *testing.T) {
		page, err := f.d.ListClients(ctx, f.firm.ID, db.PageRequest{Limit: 100, Sort: "name"})
		if err != nil {
			t.Fatalf("ListClients: got %v, want nil", err)
		}
		got := names(page)
		if page.Total != 5 || len(got) != 5 || strings.ToLower(got[0]) != "alpha" || strings.ToLower(got[1]) != "alpha" ||
			!reflect.DeepEqual(got[2:], []string{"bravo", "Client A", "Client B"}) {
			t.Errorf("by name: got %v (total %d)", got, page.Total)
		}
		if page.Items[0].ID > page.Items[1].ID {
			t.Errorf("the two alphas: ids %s, %s, want ascending", page.Items[0].ID, page.Items[1].ID)
		}
	})

	t.Run("pages of two, newest first", func(t *testing.T) {
		first, err := f.d.ListClients(ctx, f.firm.ID, db.PageRequest{Limit: 2, Sort: "createdAt", Desc: true})
		if err != nil {
			t.Fatalf("ListClients: got %v, want nil", err)
		}
		if !reflect.DeepEqual(names(first), []string{"alpha", "Alpha"}) || first.NextCursor == nil || first.PreviousCursor != nil || first.Total != 5 {
			t.Fatalf("first page: got %v next %s previous %s", names(first), strp(first.NextCursor), strp(first.PreviousCursor))
		}
		second, err := f.d.ListClients(ctx, f.firm.ID, db.PageRequest{Limit: 2, Sort: "createdAt", Desc: true, Cursor: *first.NextCursor})
		if err != nil {
			t.Fatalf("ListClients: got %v, want nil", err)
		}
		if names(second)[0] != "bravo" || strp(second.PreviousCursor) != first.Items[0].ID {
			t.Errorf("second page: got %v previous %s", names(second), strp(second.PreviousCursor))
		}
	})

	t.Run("another firm's clients stay apart", func(t *testing.T) {
		page, err := f.d.ListClients(ctx, f.other.ID, db.PageRequest{Limit: 100, Sort: "createdAt"})
		if err != nil || len(page.Items) != 1 || page.Items[0].ID != f.C.ID || page.Total != 1 {
			t.Errorf("firm two: got %+v, %v", page, err)
		}
		_, err = f.d.ListClients(ctx, f.firm.ID, db.PageRequest{Limit: 10, Sort: "name", Cursor: f.C.ID})
		assertCode(t, err, db.EINVALIDCURSOR)
	})
}
