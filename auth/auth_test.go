package auth_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// clock is a clock the tests move by hand instead of sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// mustOpenDB opens a migrated store in a new file under tb.TempDir(), on the
// clock now.
func mustOpenDB(tb testing.TB, now func() time.Time) *db.DB {
	tb.Helper()
	d, err := db.Open(filepath.Join(tb.TempDir(), "acct.db"), db.Options{Now: now})
	if err != nil {
		tb.Fatalf("Open: got %v, want nil", err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("Close: got %v, want nil", err)
		}
	})
	if err := d.MigrateUp(); err != nil {
		tb.Fatalf("MigrateUp: got %v, want nil", err)
	}
	return d
}

func mustCreateFirm(tb testing.TB, d *db.DB, name string) *db.Firm {
	tb.Helper()
	f, err := d.CreateFirm(context.Background(), name)
	if err != nil {
		tb.Fatalf("CreateFirm(%q): got %v, want nil", name, err)
	}
	return f
}

func mustCreateClient(tb testing.TB, d *db.DB, firmID, name string) *db.Client {
	tb.Helper()
	c, err := d.CreateClient(context.Background(), firmID, db.ClientCreate{Name: name, Type: db.ClientLegalPerson})
	if err != nil {
		tb.Fatalf("CreateClient(%q): got %v, want nil", name, err)
	}
	return c
}

func mustMintKey(tb testing.TB, d *db.DB, firmID string, spec auth.KeySpec) (string, *db.APIKey) {
	tb.Helper()
	key, stored, err := auth.MintKey(context.Background(), d, firmID, spec)
	if err != nil {
		tb.Fatalf("MintKey(%+v): got %v, want nil", spec, err)
	}
	return key, stored
}

func permissionNames(perms []auth.Permission) []string {
	s := make([]string, len(perms))
	for i, p := range perms {
		s[i] = string(p)
	}
	return s
}

func TestNewKeyParseKey(t *testing.T) {
	id := db.NewID()
	key, hash := auth.NewKey(id)

	t.Run("format", func(t *testing.T) {
		want := regexp.MustCompile(`^ak_` + regexp.QuoteMeta(id) + `_[0-9a-f]{64}$`)
		if !want.MatchString(key) {
			t.Errorf("NewKey(%q): got %q, want it to match %v", id, key, want)
		}
		if len(hash) != 32 {
			t.Errorf("len(secret hash): got %v, want %v", len(hash), 32)
		}
	})

	t.Run("parse", func(t *testing.T) {
		gotID, secret, ok := auth.ParseKey(key)
		if !ok {
			t.Fatalf("ParseKey(%q): got ok false, want true", key)
		}
		if gotID != id {
			t.Errorf("ParseKey id: got %v, want %v", gotID, id)
		}
		if want := strings.TrimPrefix(key, "ak_"+id+"_"); secret != want {
			t.Errorf("ParseKey secret: got %v, want %v", secret, want)
		}
		if !auth.SecretMatches(secret, hash) {
			t.Errorf("SecretMatches(secret, hash): got false, want true")
		}
		other := strings.Repeat("0", 64)
		if auth.SecretMatches(other, hash) {
			t.Errorf("SecretMatches(another secret, hash): got true, want false")
		}
		if auth.SecretMatches(secret, nil) {
			t.Errorf("SecretMatches(secret, nil): got true, want false")
		}
	})

	t.Run("id with underscore", func(t *testing.T) {
		k, _ := auth.NewKey("a_b")
		gotID, _, ok := auth.ParseKey(k)
		if !ok || gotID != "a_b" {
			t.Errorf("ParseKey(%q): got %q, %v, want %q, true", k, gotID, ok, "a_b")
		}
	})

	t.Run("rejects", func(t *testing.T) {
		secret := strings.Repeat("a", 64)
		for _, tt := range []struct{ name, key string }{
			{"empty", ""},
			{"bearer", "Bearer x"},
			{"bearer with key", "Bearer " + key},
			{"prefix only", "ak_"},
			{"no id", "ak__" + secret},
			{"no separator", "ak_" + secret},
			{"63 char secret", "ak_" + id + "_" + secret[:63]},
			{"65 char secret", "ak_" + id + "_" + secret + "a"},
			{"no prefix", id + "_" + secret},
			{"other prefix", "sk_" + id + "_" + secret},
			{"upper case prefix", "AK_" + id + "_" + secret},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if gotID, gotSecret, ok := auth.ParseKey(tt.key); ok {
					t.Errorf("ParseKey(%q): got %q, %q, true, want ok false", tt.key, gotID, gotSecret)
				}
			})
		}
	})

	t.Run("keys differ", func(t *testing.T) {
		again, againHash := auth.NewKey(id)
		if again == key {
			t.Errorf("second NewKey(%q): got %v again, want a new secret", id, again)
		}
		if string(againHash) == string(hash) {
			t.Errorf("second NewKey(%q) hash: got the first hash again, want a new one", id)
		}
	})
}

func TestPermissions(t *testing.T) {
	t.Run("client", func(t *testing.T) {
		perms := auth.PermissionsFor(auth.Client)
		if len(perms) != 15 {
			t.Errorf("len(PermissionsFor(Client)): got %v, want %v", len(perms), 15)
		}
		if !slices.Contains(perms, auth.MailSend) || slices.Contains(auth.DefaultPermissions(auth.Client), auth.MailSend) {
			t.Errorf("a client key may hold mail:send, but only when minted with it: %v, default %v", perms, auth.DefaultPermissions(auth.Client))
		}
		if !slices.Contains(auth.DefaultPermissions(auth.Accountant), auth.MailSend) {
			t.Errorf("an accountant key holds mail:send by default: %v", auth.DefaultPermissions(auth.Accountant))
		}
		for _, p := range perms {
			if strings.HasPrefix(string(p), "clients:") || strings.HasPrefix(string(p), "accountant_users:") || strings.HasPrefix(string(p), "webhooks:") ||
				strings.HasPrefix(string(p), "firm:") || strings.HasPrefix(string(p), "exports:") {
				t.Errorf("PermissionsFor(Client) holds %v, want no clients:*, accountant_users:*, webhooks:*, firm:* or exports:*", p)
			}
		}
	})

	t.Run("accountant", func(t *testing.T) {
		want := []auth.Permission{
			auth.TasksRead, auth.TasksWrite, auth.WorkspacesRead, auth.WorkspacesWrite,
			auth.MembersRead, auth.MembersWrite, auth.UsersRead, auth.UsersWrite,
			auth.FilesRead, auth.FilesWrite, auth.ClientsRead, auth.ClientsWrite,
			auth.AccountantUsersRead, auth.AccountantUsersWrite, auth.WebhooksRead, auth.WebhooksWrite,
			auth.CollectsRead, auth.CollectsWrite, auth.MailSend, auth.FirmRead, auth.FirmWrite, auth.BankingRead, auth.BankingWrite,
			auth.ExportsRead, auth.ExportsWrite,
		}
		got := auth.PermissionsFor(auth.Accountant)
		if !slices.Equal(got, want) {
			t.Errorf("PermissionsFor(Accountant): got %v, want %v", got, want)
		}
		// The result is a copy: changing it changes nothing for the next caller.
		got[0] = "mangled"
		if again := auth.PermissionsFor(auth.Accountant); again[0] != auth.TasksRead {
			t.Errorf("PermissionsFor(Accountant)[0] after a caller changed its copy: got %v, want %v", again[0], auth.TasksRead)
		}
	})

	t.Run("client may not hold admin permissions", func(t *testing.T) {
		for _, p := range []string{"clients:read", "clients:write", "accountant_users:read", "accountant_users:write", "webhooks:read", "webhooks:write",
			"firm:read", "firm:write", "exports:read", "exports:write"} {
			if _, err := auth.ParsePermissions(auth.Client, []string{p}); err == nil {
				t.Errorf("ParsePermissions(Client, [%s]): got nil, want an error", p)
			}
		}
		if _, err := auth.ParsePermissions(auth.Accountant, []string{"clients:read"}); err != nil {
			t.Errorf("ParsePermissions(Accountant, [clients:read]): got %v, want nil", err)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		for _, kind := range []auth.Kind{auth.Accountant, auth.Client} {
			_, err := auth.ParsePermissions(kind, []string{"tasks:read", "tasks:delete"})
			if err == nil || !strings.Contains(err.Error(), "tasks:delete") {
				t.Errorf("ParsePermissions(%s, [tasks:read tasks:delete]): got %v, want an error naming tasks:delete", kind, err)
			}
		}
	})

	t.Run("normalised", func(t *testing.T) {
		got, err := auth.ParsePermissions(auth.Accountant,
			[]string{"files:write", " tasks:read ", "clients:read", "tasks:read", "files:write", ""})
		if err != nil {
			t.Fatalf("ParsePermissions: got %v, want nil", err)
		}
		want := []auth.Permission{auth.TasksRead, auth.FilesWrite, auth.ClientsRead}
		if !slices.Equal(got, want) {
			t.Errorf("ParsePermissions: got %v, want %v", got, want)
		}
	})

	t.Run("can", func(t *testing.T) {
		p := &auth.Principal{Permissions: []auth.Permission{auth.TasksRead}}
		if !p.Can(auth.TasksRead) || p.Can(auth.TasksWrite) {
			t.Errorf("Can(tasks:read), Can(tasks:write): got %v, %v, want true, false", p.Can(auth.TasksRead), p.Can(auth.TasksWrite))
		}
	})
}

func TestAuthenticator(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDB(t, c.Now)
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "Client")
	a := auth.NewAuthenticator(d, c.Now)

	accountantKey, accountantStored := mustMintKey(t, d, firm.ID, auth.KeySpec{})
	clientKey, clientStored := mustMintKey(t, d, firm.ID, auth.KeySpec{
		ClientID: client.ID, Permissions: []string{"tasks:write", "tasks:read"},
		RateLimitMax: 5, RateLimitWindow: 2 * time.Second,
	})

	t.Run("accountant key", func(t *testing.T) {
		p, err := a.Authenticate(ctx, accountantKey)
		if err != nil {
			t.Fatalf("Authenticate: got %v, want nil", err)
		}
		want := auth.Principal{
			KeyID: accountantStored.ID, Kind: auth.Accountant, FirmID: firm.ID,
			Permissions:  auth.PermissionsFor(auth.Accountant),
			RateLimitMax: auth.DefaultRateLimitMax, RateLimitWindow: auth.DefaultRateLimitWindow,
		}
		checkPrincipal(t, p, want)
	})

	t.Run("client key", func(t *testing.T) {
		p, err := a.Authenticate(ctx, clientKey)
		if err != nil {
			t.Fatalf("Authenticate: got %v, want nil", err)
		}
		want := auth.Principal{
			KeyID: clientStored.ID, Kind: auth.Client, FirmID: firm.ID, ClientID: client.ID,
			Permissions:  []auth.Permission{auth.TasksRead, auth.TasksWrite},
			RateLimitMax: 5, RateLimitWindow: 2 * time.Second,
		}
		checkPrincipal(t, p, want)
	})

	t.Run("refused", func(t *testing.T) {
		id, _, _ := auth.ParseKey(accountantKey)
		unknown, _ := auth.NewKey(db.NewID())
		for _, tt := range []struct{ name, key string }{
			{"wrong secret", "ak_" + id + "_" + strings.Repeat("0", 64)},
			{"malformed", "ak_" + id},
			{"empty", ""},
			{"bearer prefix", "Bearer " + accountantKey},
			{"unknown id", unknown},
		} {
			t.Run(tt.name, func(t *testing.T) {
				p, err := a.Authenticate(ctx, tt.key)
				if !errors.Is(err, auth.ErrUnauthorized) {
					t.Errorf("Authenticate(%q): got %+v, %v, want ErrUnauthorized", tt.key, p, err)
				}
			})
		}
	})

	t.Run("expired", func(t *testing.T) {
		expires := c.Now().Add(30 * time.Second)
		key, _ := mustMintKey(t, d, firm.ID, auth.KeySpec{ExpiresAt: &expires})
		if _, err := a.Authenticate(ctx, key); err != nil {
			t.Fatalf("Authenticate before expiry: got %v, want nil", err)
		}
		c.Advance(29 * time.Second)
		if _, err := a.Authenticate(ctx, key); err != nil {
			t.Fatalf("Authenticate 1 s before expiry: got %v, want nil", err)
		}
		c.Advance(time.Second)
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("Authenticate at expiry: got %v, want ErrUnauthorized", err)
		}
		c.Advance(time.Hour)
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("Authenticate after expiry: got %v, want ErrUnauthorized", err)
		}
	})

	// Revoked keys are refused within 2 seconds: the cache trusts a row for
	// at most 1 s.
	t.Run("revoked", func(t *testing.T) {
		key, stored := mustMintKey(t, d, firm.ID, auth.KeySpec{})
		if _, err := a.Authenticate(ctx, key); err != nil {
			t.Fatalf("Authenticate before revocation: got %v, want nil", err)
		}
		if _, err := d.RevokeAPIKey(ctx, firm.ID, stored.ID); err != nil {
			t.Fatalf("RevokeAPIKey: got %v, want nil", err)
		}
		if _, err := a.Authenticate(ctx, key); err != nil {
			t.Errorf("Authenticate right after revocation (cached): got %v, want nil", err)
		}
		c.Advance(time.Second + time.Millisecond)
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("Authenticate more than 1 s after revocation: got %v, want ErrUnauthorized", err)
		}
		// A new Authenticator, with nothing cached, refuses it at once.
		if _, err := auth.NewAuthenticator(d, c.Now).Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("Authenticate of a revoked key, uncached: got %v, want ErrUnauthorized", err)
		}
	})

	t.Run("store error", func(t *testing.T) {
		closed := mustOpenDB(t, c.Now)
		closed.Close()
		key, _ := auth.NewKey(db.NewID())
		_, err := auth.NewAuthenticator(closed, c.Now).Authenticate(ctx, key)
		if err == nil || errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("Authenticate when the store fails: got %v, want the store's error", err)
		}
	})
}

// countingKeys is the store, counting the key lookups that reach it.
type countingKeys struct {
	auth.KeyStore
	reads atomic.Int32
}

func (c *countingKeys) FindAPIKey(ctx context.Context, id string) (*db.APIKey, error) {
	c.reads.Add(1)
	return c.KeyStore.FindAPIKey(ctx, id)
}

// TestAuthenticatorUnknownKeys: an id the store does not have is remembered
// for a second, so that guessing it again reads nothing.
func TestAuthenticatorUnknownKeys(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDB(t, c.Now)
	firm := mustCreateFirm(t, d, "Firm")
	keys := &countingKeys{KeyStore: d}
	a := auth.NewAuthenticator(keys, c.Now)
	authenticate := func(t *testing.T, key string, wantReads int32) {
		t.Helper()
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("Authenticate: got %v, want ErrUnauthorized", err)
		}
		if got := keys.reads.Load(); got != wantReads {
			t.Errorf("store reads: got %d, want %d", got, wantReads)
		}
	}

	unknown, _ := auth.NewKey(db.NewID())
	t.Run("read once", func(t *testing.T) {
		authenticate(t, unknown, 1)
		c.Advance(999 * time.Millisecond)
		authenticate(t, unknown, 1)
	})
	t.Run("any secret with the unknown id", func(t *testing.T) {
		id, _, _ := auth.ParseKey(unknown)
		authenticate(t, "ak_"+id+"_"+strings.Repeat("0", 64), 1)
	})
	t.Run("another unknown id is read", func(t *testing.T) {
		other, _ := auth.NewKey(db.NewID())
		authenticate(t, other, 2)
		authenticate(t, other, 2)
	})
	t.Run("the entry expires after a second", func(t *testing.T) {
		c.Advance(time.Millisecond)
		authenticate(t, unknown, 3)
	})
	t.Run("an id longer than any key's is not looked up", func(t *testing.T) {
		authenticate(t, "ak_c"+strings.Repeat("a", 64)+"_"+strings.Repeat("0", 64), 3)
	})
	t.Run("bounded", func(t *testing.T) {
		for i := range 2*auth.MaxUnknownKeys + 1 {
			key, _ := auth.NewKey(db.NewID())
			if _, err := a.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthorized) {
				t.Fatalf("Authenticate: got %v, want ErrUnauthorized", err)
			}
			if n := a.UnknownKeys(); n > auth.MaxUnknownKeys || n == 0 {
				t.Fatalf("after %d unknown ids: %d remembered, want 1 to %d", i+1, n, auth.MaxUnknownKeys)
			}
		}
	})
	t.Run("known keys are read as before", func(t *testing.T) {
		key, _ := mustMintKey(t, d, firm.ID, auth.KeySpec{})
		reads := keys.reads.Load()
		for range 2 {
			if _, err := a.Authenticate(ctx, key); err != nil {
				t.Fatalf("Authenticate: got %v, want nil", err)
			}
		}
		if got := keys.reads.Load(); got != reads+1 {
			t.Errorf("store reads of a known key: got %d, want %d", got, reads+1)
		}
	})
}

func checkPrincipal(tb testing.TB, got *auth.Principal, want auth.Principal) {
	tb.Helper()
	if got.KeyID != want.KeyID || got.Kind != want.Kind || got.FirmID != want.FirmID || got.ClientID != want.ClientID {
		tb.Errorf("principal KeyID, Kind, FirmID, ClientID: got %v, %v, %v, %q, want %v, %v, %v, %q",
			got.KeyID, got.Kind, got.FirmID, got.ClientID, want.KeyID, want.Kind, want.FirmID, want.ClientID)
	}
	if !slices.Equal(got.Permissions, want.Permissions) {
		tb.Errorf("principal Permissions: got %v, want %v", got.Permissions, want.Permissions)
	}
	if got.RateLimitMax != want.RateLimitMax || got.RateLimitWindow != want.RateLimitWindow {
		tb.Errorf("principal rate limit: got %v per %v, want %v per %v",
			got.RateLimitMax, got.RateLimitWindow, want.RateLimitMax, want.RateLimitWindow)
	}
}

func TestMintKey(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDB(t, c.Now)
	firm := mustCreateFirm(t, d, "Firm")
	client := mustCreateClient(t, d, firm.ID, "Client")
	a := auth.NewAuthenticator(d, c.Now)

	t.Run("defaults", func(t *testing.T) {
		for _, tt := range []struct {
			kind     auth.Kind
			clientID string
		}{{auth.Accountant, ""}, {auth.Client, client.ID}} {
			t.Run(string(tt.kind), func(t *testing.T) {
				key, stored := mustMintKey(t, d, firm.ID, auth.KeySpec{ClientID: tt.clientID})
				if stored.RateLimitMax != 600 || stored.RateLimitWindowMS != 60000 {
					t.Errorf("rate limit: got %v per %v ms, want %v per %v ms", stored.RateLimitMax, stored.RateLimitWindowMS, 600, 60000)
				}
				if want := permissionNames(auth.DefaultPermissions(tt.kind)); !slices.Equal(stored.Permissions, want) {
					t.Errorf("permissions: got %v, want %v", stored.Permissions, want)
				}
				if want := string(tt.kind) + " key"; stored.Name != want {
					t.Errorf("name: got %v, want %v", stored.Name, want)
				}
				if stored.ExpiresAt != nil {
					t.Errorf("ExpiresAt: got %v, want nil", stored.ExpiresAt)
				}
				if id, _, _ := auth.ParseKey(key); id != stored.ID {
					t.Errorf("id in the key: got %v, want %v", id, stored.ID)
				}
				found, err := d.FindAPIKey(ctx, stored.ID)
				if err != nil {
					t.Fatalf("FindAPIKey: got %v, want nil", err)
				}
				if !slices.Equal(found.Permissions, stored.Permissions) || found.RateLimitMax != 600 {
					t.Errorf("stored key: got %+v, want %+v", found, stored)
				}
				p, err := a.Authenticate(ctx, key)
				if err != nil {
					t.Fatalf("Authenticate(minted key): got %v, want nil", err)
				}
				if p.KeyID != stored.ID || p.Kind != tt.kind || p.ClientID != tt.clientID {
					t.Errorf("principal: got %+v, want key %v of kind %v, client %q", p, stored.ID, tt.kind, tt.clientID)
				}
			})
		}
	})

	t.Run("keys differ", func(t *testing.T) {
		k1, s1 := mustMintKey(t, d, firm.ID, auth.KeySpec{})
		k2, s2 := mustMintKey(t, d, firm.ID, auth.KeySpec{})
		if k1 == k2 || s1.ID == s2.ID {
			t.Errorf("two minted keys: got %v (%v) and %v (%v), want different keys and ids", k1, s1.ID, k2, s2.ID)
		}
	})

	t.Run("refused specs", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			spec auth.KeySpec
		}{
			{"client key with admin permission", auth.KeySpec{ClientID: client.ID, Permissions: []string{"clients:write"}}},
			{"unknown permission", auth.KeySpec{Permissions: []string{"everything"}}},
			{"negative rate limit", auth.KeySpec{RateLimitMax: -1}},
			{"negative window", auth.KeySpec{RateLimitWindow: -time.Second}},
			{"window under 1 ms", auth.KeySpec{RateLimitWindow: time.Microsecond}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				before, err := d.ListAPIKeys(ctx, firm.ID)
				if err != nil {
					t.Fatal(err)
				}
				key, stored, err := auth.MintKey(ctx, d, firm.ID, tt.spec)
				if err == nil {
					t.Errorf("MintKey(%+v): got %q, %+v, nil, want an error", tt.spec, key, stored)
				}
				after, err := d.ListAPIKeys(ctx, firm.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(after) != len(before) {
					t.Errorf("keys after a refused MintKey: got %v, want %v", len(after), len(before))
				}
			})
		}
	})

	t.Run("client of another firm", func(t *testing.T) {
		other := mustCreateFirm(t, d, "Other Firm")
		_, _, err := auth.MintKey(ctx, d, other.ID, auth.KeySpec{ClientID: client.ID})
		if got := db.ErrorCode(err); got != db.ENOTFOUND {
			t.Errorf("MintKey for a client of another firm: got %v (code %q), want code %v", err, got, db.ENOTFOUND)
		}
	})
}

func TestLimiter(t *testing.T) {
	c := newClock()
	l := auth.NewLimiter(c.Now)
	const limit, period = 3, 10 * time.Second

	for i, want := range []int{2, 1, 0} {
		d := l.Allow("k", limit, period)
		if !d.Allowed || d.Remaining != want || d.Limit != limit {
			t.Errorf("request %d: got %+v, want allowed, Remaining %v, Limit %v", i+1, d, want, limit)
		}
		if d.Reset != period {
			t.Errorf("request %d Reset: got %v, want %v", i+1, d.Reset, period)
		}
	}
	d := l.Allow("k", limit, period)
	if d.Allowed || d.Remaining != 0 {
		t.Errorf("request 4: got %+v, want denied with Remaining 0", d)
	}

	c.Advance(4 * time.Second)
	d = l.Allow("k", limit, period)
	if d.Allowed || d.Remaining != 0 || d.Reset != 6*time.Second {
		t.Errorf("request after 4 s: got %+v, want denied, Remaining 0, Reset %v", d, 6*time.Second)
	}

	other := l.Allow("other", limit, period)
	if !other.Allowed || other.Remaining != 2 || other.Reset != period {
		t.Errorf("first request of another key: got %+v, want allowed, Remaining 2, Reset %v", other, period)
	}

	c.Advance(6*time.Second - time.Millisecond)
	d = l.Allow("k", limit, period)
	if d.Allowed || d.Reset != time.Millisecond {
		t.Errorf("request 1 ms before the window closes: got %+v, want denied, Reset 1ms", d)
	}

	c.Advance(time.Millisecond)
	for i, want := range []int{2, 1, 0} {
		d := l.Allow("k", limit, period)
		if !d.Allowed || d.Remaining != want || d.Reset != period {
			t.Errorf("request %d of the new window: got %+v, want allowed, Remaining %v, Reset %v", i+1, d, want, period)
		}
	}
	if d := l.Allow("k", limit, period); d.Allowed {
		t.Errorf("request 4 of the new window: got %+v, want denied", d)
	}

	// "other" opened its window 4 s after "k": it still has 2 left.
	other = l.Allow("other", limit, period)
	if !other.Allowed || other.Remaining != 1 || other.Reset != 4*time.Second {
		t.Errorf("second request of another key: got %+v, want allowed, Remaining 1, Reset %v", other, 4*time.Second)
	}
}

// TestLimiterSpent: Spent tells a window used up from one with room, and
// counts nothing.
func TestLimiterSpent(t *testing.T) {
	c := newClock()
	l := auth.NewLimiter(c.Now)
	const limit, period = 3, 10 * time.Second
	spent := func(t *testing.T, want bool) auth.Decision {
		t.Helper()
		d, got := l.Spent("k", limit, period)
		if got != want {
			t.Fatalf("Spent: got %v (%+v), want %v", got, d, want)
		}
		return d
	}
	spent(t, false)
	for range limit {
		spent(t, false)
		if d := l.Allow("k", limit, period); !d.Allowed {
			t.Fatalf("Allow: got %+v, want allowed: Spent counted", d)
		}
	}
	c.Advance(4 * time.Second)
	if d := spent(t, true); d.Allowed || d.Limit != limit || d.Remaining != 0 || d.Reset != 6*time.Second {
		t.Errorf("spent window: got %+v, want denied, Limit %d, Remaining 0, Reset 6s", d, limit)
	}
	c.Advance(6 * time.Second)
	spent(t, false)
}

// TestAuthenticatorKnown: Known holds for a key found before, with its
// secret, however long ago, and reads nothing.
func TestAuthenticatorKnown(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDB(t, c.Now)
	firm := mustCreateFirm(t, d, "Firm")
	keys := &countingKeys{KeyStore: d}
	a := auth.NewAuthenticator(keys, c.Now)
	key, stored := mustMintKey(t, d, firm.ID, auth.KeySpec{})
	unknown, _ := auth.NewKey(db.NewID())
	known := func(t *testing.T, key string, want bool) {
		t.Helper()
		if got := a.Known(key); got != want {
			t.Errorf("Known: got %v, want %v", got, want)
		}
	}

	known(t, key, false)
	known(t, unknown, false)
	if _, err := a.Authenticate(ctx, key); err != nil {
		t.Fatalf("Authenticate: got %v, want nil", err)
	}
	reads := keys.reads.Load()
	known(t, key, true)
	known(t, "ak_"+stored.ID+"_"+strings.Repeat("0", 64), false)
	known(t, "ak_"+stored.ID, false)
	c.Advance(time.Hour)
	known(t, key, true)
	if got := keys.reads.Load(); got != reads {
		t.Errorf("store reads of Known: got %d, want none", got-reads)
	}
}

func TestLimiterConcurrent(t *testing.T) {
	fixed := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	l := auth.NewLimiter(func() time.Time { return fixed })
	const limit, goroutines, calls = 100, 64, 10

	var allowed, denied atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			<-start
			for range calls {
				if l.Allow("k", limit, time.Minute).Allowed {
					allowed.Add(1)
				} else {
					denied.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Errorf("allowed: got %v, want %v", got, limit)
	}
	if got := denied.Load(); got != goroutines*calls-limit {
		t.Errorf("denied: got %v, want %v", got, goroutines*calls-limit)
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	fixed := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return fixed }
	d := mustOpenDB(b, now)
	firm := mustCreateFirm(b, d, "Firm")
	key, _ := mustMintKey(b, d, firm.ID, auth.KeySpec{})
	a := auth.NewAuthenticator(d, now)
	if _, err := a.Authenticate(ctx, key); err != nil {
		b.Fatalf("Authenticate: got %v, want nil", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, key); err != nil {
			b.Fatalf("Authenticate: got %v, want nil", err)
		}
	}
}

// BenchmarkAuthenticateUnknown authenticates one key whose id no key has,
// over and over: a guesser repeating an id, or a client with a deleted key.
func BenchmarkAuthenticateUnknown(b *testing.B) {
	ctx := context.Background()
	fixed := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return fixed }
	a := auth.NewAuthenticator(mustOpenDB(b, now), now)
	key, _ := auth.NewKey(db.NewID())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, key); !errors.Is(err, auth.ErrUnauthorized) {
			b.Fatalf("Authenticate: got %v, want ErrUnauthorized", err)
		}
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	fixed := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	l := auth.NewLimiter(func() time.Time { return fixed })
	b.ReportAllocs()
	for b.Loop() {
		l.Allow("k", 1<<30, time.Minute)
	}
}
