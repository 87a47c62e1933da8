package handlers

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/testprog"
)

// A longer run: go test -race -run TestTenantIsolation ./handlers -iso.steps=20000 [-iso.seed=N]
var (
	isoSeed  = flag.Uint64("iso.seed", 0, "seed of TestTenantIsolation; 0 picks one, which the test logs")
	isoSteps = flag.Int("iso.steps", 1000, "number of random steps of TestTenantIsolation")
)

// Tokens the oracle follows: record ids (cuids, sent in any case), the
// marker strings every name, title, email, file and webhook URL of the test
// holds, and webhook signing secrets (random, so they are tokens too).
var (
	isoIDPattern     = regexp.MustCompile(`(?i)\bc[0-9a-z]{24}\b`)
	isoMarkerPattern = regexp.MustCompile(`\bmk[0-9a-z]{10}\b`)
	isoSecretPattern = regexp.MustCompile(`whsec_[A-Za-z0-9+/]{43}=`)
	// A collect link's token, as the answer that made it shows it.
	isoCollectTokenPattern = regexp.MustCompile(`"token":"[A-Za-z0-9_-]{43}"|/collect/[A-Za-z0-9_-]{43}`)
)

const isoAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// isoKey is an API key of the test, with the tenant it belongs to.
type isoKey struct {
	name   string
	secret string
	firmID string
	client string // set for a client key
}

// isoRoute is how a route is reached: it decides whose data an answer may show.
type isoRoute int

const (
	isoPublic   isoRoute = iota // no key: health, openapi.json
	isoDownload                 // a signed link is the credential
	isoKeyed                    // a key, no client: /me and the admin area
	isoClient                   // a key and the client in x-client-id
	isoCollect                  // a collect link's token is the credential
)

// isoReq is one request of a step.
type isoReq struct {
	op          string
	route       isoRoute
	method      string
	path        string // with the query
	key         *isoKey
	clientID    string
	body        []byte
	contentType string
	signedFile  string // the file a download link was signed for
	// bucketURL is the bucket's pre-signed GET a download step sends, when
	// the files are in a bucket: path is then empty.
	bucketURL string
	token     *isoToken
}

// isoToken is a collect link a step was given, with its client and collect.
type isoToken struct{ token, client, collect string }

func (r *isoReq) String() string {
	key := "none"
	if r.key != nil {
		key = r.key.name
	}
	return fmt.Sprintf("%s: %s %s (key %s, x-client-id %q) %s", r.op, r.method, r.path, key, r.clientID, r.body)
}

// text is everything the request names: its tokens are the caller's own.
func (r *isoReq) text() string {
	return r.path + " " + r.clientID + " " + string(r.body)
}

// isWrite says whether the request may change data when it succeeds. Opening
// a collect link records its use.
func (r *isoReq) isWrite() bool { return r.method != http.MethodGet || r.route == isoCollect }

// isoRow is a row of the database, or a file of the file store, with the
// tenant that owns it.
type isoRow struct {
	// owner is a client id, "firm:<id>", "global" or "orphan", or for the
	// webhook tables, which only the firm's accountant keys may see,
	// "webhooks:" and the client id or "firm:<id>" of the change an event
	// and its deliveries are about ("webhooks:firm:<id>" for a subscription).
	owner   string
	kind    string // the kind of record the row's key is the id of; "" when it is no id
	key     string
	parent  string // the firm of a client; the workspace of a task, folder, label or file; the subscription of a delivery
	email   string // for users
	content string
}

// isoSnapshot is every row of every table and every stored file.
type isoSnapshot struct {
	rows  []isoRow
	byKey map[string]isoRow
	files []string // the file store's listing
}

// isoTables reads each table with its rows' owner label, key, kind, parent
// and email ahead of the row itself; rows come in the order they were made.
var isoTables = []struct{ name, head, from, order string }{
	{"firms", `'firm:' || t.id, t.id, 'firm', '', ''`, `firms t`, `t.rowid`},
	{"clients", `t.id, t.id, 'client', t.firm_id, ''`, `clients t`, `t.rowid`},
	{"api_keys", `coalesce(t.client_id, 'firm:' || t.firm_id), t.id, 'key', '', ''`, `api_keys t`, `t.rowid`},
	{"users", `coalesce(t.client_id, 'firm:' || t.firm_id), t.id,
		CASE WHEN t.client_id IS NULL THEN 'accountantUser' ELSE 'clientUser' END, '', t.email`, `users t`, `t.rowid`},
	{"roles", `'firm:' || t.firm_id, t.id, 'role', '', ''`, `roles t`, `t.rowid`},
	{"workspaces", `t.client_id, t.id, 'workspace', '', ''`, `workspaces t`, `t.rowid`},
	{"tasks", `t.client_id, t.id, 'task', t.workspace_id, ''`, `tasks t`, `t.rowid`},
	{"task_tombstones", `t.client_id, t.id, '', '', ''`, `task_tombstones t`, `t.deleted_at, t.id`},
	{"task_counts", `t.client_id, t.client_id || ' ' || t.scope, '', '', ''`, `task_counts t`, `t.client_id, t.scope`},
	{"folders", `t.client_id, t.id, 'folder', t.workspace_id, ''`, `folders t`, `t.rowid`},
	{"labels", `t.client_id, t.id, 'label', t.workspace_id, ''`, `labels t`, `t.rowid`},
	{"files", `t.client_id, t.id, 'file', t.workspace_id, ''`, `files t`, `t.rowid`},
	{"workspace_members", `coalesce(w.client_id, 'orphan'), t.workspace_id || ' ' || t.user_id, '', '', ''`,
		`workspace_members t LEFT JOIN workspaces w ON w.id = t.workspace_id`, `t.workspace_id, t.user_id`},
	{"file_labels", `coalesce(f.client_id, 'orphan'), t.file_id || ' ' || t.label_id, '', '', ''`,
		`file_labels t LEFT JOIN files f ON f.id = t.file_id`, `t.file_id, t.label_id`},
	{"task_asset_files", `coalesce(k.client_id, 'orphan'), t.task_id || ' ' || t.file_id, '', '', ''`,
		`task_asset_files t LEFT JOIN tasks k ON k.id = t.task_id`, `t.task_id, t.file_id`},
	{"settings", `'global', t.name, '', '', ''`, `settings t`, `t.name`},
	{"collects", `t.client_id, t.id, 'collect', t.workspace_id, ''`, `collects t`, `t.rowid`},
	{"collect_items", `t.client_id, t.id, 'collectItem', t.collect_id, ''`, `collect_items t`, `t.rowid`},
	{"collect_item_files", `t.client_id, t.seq, '', '', ''`, `collect_item_files t`, `t.seq`},
	{"collect_sessions", `t.client_id, t.id, 'collectSession', t.collect_id, ''`, `collect_sessions t`, `t.rowid`},
	{"bank_accounts", `t.client_id, t.id, 'bankAccount', '', ''`, `bank_accounts t`, `t.rowid`},
	{"bank_statements", `t.client_id, t.id, 'bankStatement', t.account_id, ''`, `bank_statements t`, `t.rowid`},
	{"bank_transactions", `t.client_id, t.id, 'transaction', t.account_id, ''`, `bank_transactions t`, `t.rowid`},
	{"bank_transaction_matches", `t.client_id, t.transaction_id || ' ' || t.file_id, '', '', ''`,
		`bank_transaction_matches t`, `t.transaction_id, t.file_id`},
	{"bank_jobs", `t.client_id, t.target || ' ' || t.target_id, '', '', ''`, `bank_jobs t`, `t.target, t.target_id`},
	{"webhooks", `'webhooks:firm:' || t.firm_id, t.id, 'webhook', '', ''`, `webhooks t`, `t.rowid`},
	// The payload as text, so that its tokens can be checked.
	{"webhook_events", `'webhooks:' || coalesce(t.client_id, 'firm:' || t.firm_id), t.id, 'event', '', ''`,
		`(SELECT seq, id, firm_id, client_id, type, CAST(payload AS TEXT) AS payload, created_at FROM webhook_events) t`, `t.seq`},
	{"webhook_deliveries", `coalesce('webhooks:' || coalesce(e.client_id, 'firm:' || e.firm_id), 'orphan'), t.id, 'delivery', t.webhook_id, ''`,
		`webhook_deliveries t LEFT JOIN webhook_events e ON e.seq = t.event_seq`, `t.rowid`},
	{"webhook_attempts", `coalesce('webhooks:' || coalesce(e.client_id, 'firm:' || e.firm_id), 'orphan'), t.delivery_id || ' ' || t.n, '', '', ''`,
		`webhook_attempts t LEFT JOIN webhook_deliveries d ON d.id = t.delivery_id LEFT JOIN webhook_events e ON e.seq = d.event_seq`,
		`t.delivery_id, t.n`},
}

// isoCrossReferences finds rows that refer to another tenant's records, and
// deliveries a subscription should not have got: of another firm's or
// another client's events, or (made since the subscription last changed)
// of an event type it does not list or while it is disabled.
const isoCrossReferences = `
	SELECT 'task ' || t.id || ' in workspace ' || w.id FROM tasks t JOIN workspaces w ON w.id = t.workspace_id WHERE w.client_id <> t.client_id
	UNION ALL SELECT 'task ' || t.id || ' under task ' || p.id FROM tasks t JOIN tasks p ON p.id = t.parent_id WHERE p.client_id <> t.client_id
	UNION ALL SELECT 'task ' || t.id || ' to folder ' || f.id FROM tasks t JOIN folders f ON f.id = t.destination_folder_id WHERE f.client_id <> t.client_id
	UNION ALL SELECT 'folder ' || f.id || ' in workspace ' || w.id FROM folders f JOIN workspaces w ON w.id = f.workspace_id WHERE w.client_id <> f.client_id
	UNION ALL SELECT 'folder ' || f.id || ' in folder ' || p.id FROM folders f JOIN folders p ON p.id = f.parent_id WHERE p.client_id <> f.client_id
	UNION ALL SELECT 'label ' || l.id || ' in workspace ' || w.id FROM labels l JOIN workspaces w ON w.id = l.workspace_id WHERE w.client_id <> l.client_id
	UNION ALL SELECT 'file ' || f.id || ' in workspace ' || w.id FROM files f JOIN workspaces w ON w.id = f.workspace_id WHERE w.client_id <> f.client_id
	UNION ALL SELECT 'file ' || f.id || ' of task ' || t.id FROM files f JOIN tasks t ON t.id = f.task_id WHERE t.client_id <> f.client_id
	UNION ALL SELECT 'file ' || f.id || ' in folder ' || d.id FROM files f JOIN folders d ON d.id = f.folder_id WHERE d.client_id <> f.client_id
	UNION ALL SELECT 'file ' || f.id || ' labelled ' || l.id FROM file_labels x JOIN files f ON f.id = x.file_id JOIN labels l ON l.id = x.label_id WHERE l.client_id <> f.client_id
	UNION ALL SELECT 'task ' || t.id || ' with asset ' || f.id FROM task_asset_files x JOIN tasks t ON t.id = x.task_id JOIN files f ON f.id = x.file_id WHERE f.client_id <> t.client_id
	UNION ALL SELECT 'member ' || u.id || ' of workspace ' || w.id FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
		JOIN clients c ON c.id = w.client_id JOIN users u ON u.id = m.user_id
		WHERE NOT (u.client_id IS w.client_id OR (u.client_id IS NULL AND u.firm_id = c.firm_id))
	UNION ALL SELECT 'collect ' || c.id || ' in workspace ' || w.id FROM collects c JOIN workspaces w ON w.id = c.workspace_id WHERE w.client_id <> c.client_id
	UNION ALL SELECT 'collect ' || c.id || ' of task ' || t.id FROM collects c JOIN tasks t ON t.id = c.task_id WHERE t.client_id <> c.client_id
	UNION ALL SELECT 'item ' || i.id || ' of collect ' || c.id FROM collect_items i JOIN collects c ON c.id = i.collect_id WHERE c.client_id <> i.client_id
	UNION ALL SELECT 'item ' || i.id || ' to folder ' || f.id FROM collect_items i JOIN collects c ON c.id = i.collect_id
		JOIN folders f ON f.id = i.folder_id WHERE f.client_id <> i.client_id OR f.workspace_id <> c.workspace_id
	UNION ALL SELECT 'item file ' || x.seq FROM collect_item_files x JOIN collect_items i ON i.id = x.item_id JOIN files f ON f.id = x.file_id
		JOIN collects c ON c.id = x.collect_id WHERE i.collect_id <> x.collect_id OR i.client_id <> x.client_id
		OR f.client_id <> x.client_id OR c.client_id <> x.client_id OR f.workspace_id <> c.workspace_id
	UNION ALL SELECT 'session ' || s.id || ' of collect ' || c.id FROM collect_sessions s JOIN collects c ON c.id = s.collect_id WHERE c.client_id <> s.client_id
	UNION ALL SELECT 'statement ' || s.id || ' of account ' || a.id FROM bank_statements s JOIN bank_accounts a ON a.id = s.account_id WHERE a.client_id <> s.client_id
	UNION ALL SELECT 'statement ' || s.id || ' of file ' || f.id FROM bank_statements s JOIN files f ON f.id = s.file_id WHERE f.client_id <> s.client_id
	UNION ALL SELECT 'transaction ' || t.id || ' of statement ' || s.id FROM bank_transactions t JOIN bank_statements s ON s.id = t.statement_id
		WHERE s.client_id <> t.client_id OR s.account_id <> t.account_id
	UNION ALL SELECT 'match of transaction ' || m.transaction_id || ' to file ' || m.file_id FROM bank_transaction_matches m
		JOIN bank_transactions t ON t.id = m.transaction_id JOIN files f ON f.id = m.file_id WHERE t.client_id <> m.client_id OR f.client_id <> m.client_id
	UNION ALL SELECT 'item ' || i.id || ' for transaction ' || t.id FROM collect_items i JOIN bank_transactions t ON t.id = i.transaction_id WHERE t.client_id <> i.client_id
	UNION ALL SELECT 'user ' || u.id || ' of client ' || c.id FROM users u JOIN clients c ON c.id = u.client_id WHERE c.firm_id <> u.firm_id
	UNION ALL SELECT 'user ' || u.id || ' with role ' || r.id FROM users u JOIN roles r ON r.id = u.role_id WHERE r.firm_id <> u.firm_id
	UNION ALL SELECT 'key ' || k.id || ' of client ' || c.id FROM api_keys k JOIN clients c ON c.id = k.client_id WHERE c.firm_id <> k.firm_id
	UNION ALL SELECT 'webhook ' || h.id || ' for client ' || c.id FROM webhooks h JOIN clients c ON c.id = h.client_id WHERE c.firm_id <> h.firm_id
	UNION ALL SELECT 'event ' || e.id || ' of client ' || c.id FROM webhook_events e JOIN clients c ON c.id = e.client_id WHERE c.firm_id <> e.firm_id
	UNION ALL SELECT 'delivery ' || d.id || ' of event ' || e.id || ' (' || e.type || ' of firm ' || e.firm_id || ', client ' || coalesce(e.client_id, 'none') ||
		') to webhook ' || h.id || ' (' || h.status || ' of firm ' || h.firm_id || ', client ' || coalesce(h.client_id, 'any') || ', ' || h.events || ')'
		FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq JOIN webhooks h ON h.id = d.webhook_id
		WHERE h.firm_id <> e.firm_id OR d.created_at >= h.updated_at AND (h.client_id IS NOT NULL AND h.client_id IS NOT e.client_id
			OR h.status = 'disabled' OR NOT EXISTS (SELECT 1 FROM json_each(h.events) WHERE value IN ('*', e.type)))`

// isoRegistry is what the oracle knows: who owns each token, and the ids
// of each kind in the order they were made (so that a seed replays).
type isoRegistry struct {
	owners map[string]map[string]bool
	kinds  map[string][]string
	emails []string
	firmOf map[string]string // owner label → firm id
	// parentOf maps a client to its firm, a task, folder, label or file to
	// its workspace, and a delivery to its subscription.
	parentOf map[string]string
	live     map[string]bool // the ids of the records that exist now
	// scanned holds the owner and content of each row whose markers and
	// secrets were learnt: a row that did not change has nothing new.
	scanned map[string]bool
}

func (r *isoRegistry) add(token, owner string) bool {
	if r.owners[token] == nil {
		r.owners[token] = map[string]bool{}
	}
	isNew := len(r.owners[token]) == 0
	r.owners[token][owner] = true
	return isNew
}

// update learns the ids, markers and secrets of the rows: a row's own id and
// every marker and secret in it belong to the row's owner. Ids the row refers
// to are not learnt from it, so that a stored cross-tenant reference cannot
// hide a leak; nor is anything learnt from an event's payload, which copies
// other rows (checkEvents checks it).
func (r *isoRegistry) update(s *isoSnapshot) {
	r.live = map[string]bool{}
	for _, row := range s.rows {
		if tenant, ok := strings.CutPrefix(row.owner, "webhooks:"); ok {
			r.firmOf[row.owner] = r.firmOf[tenant]
		}
		if row.kind != "" {
			r.live[row.key] = true
		}
		if row.kind == "firm" {
			r.firmOf[row.owner] = row.key
		}
		if row.kind == "client" {
			r.firmOf[row.key] = row.parent
		}
		if row.kind != "" && row.parent != "" {
			r.parentOf[row.key] = row.parent
		}
		if row.kind != "" && r.add(row.key, row.owner) {
			r.kinds[row.kind] = append(r.kinds[row.kind], row.key)
		}
		if row.email != "" && !slices.Contains(r.emails, row.email) {
			r.emails = append(r.emails, row.email)
		}
		if row.kind == "event" || r.scanned[row.owner+" "+row.content] {
			continue
		}
		r.scanned[row.owner+" "+row.content] = true
		for _, m := range isoMarkerPattern.FindAllString(row.content, -1) {
			r.add(m, row.owner)
		}
		if row.kind == "webhook" {
			for _, secret := range isoSecretPattern.FindAllString(row.content, -1) {
				r.add(strings.ToLower(secret), row.owner)
			}
		}
	}
}

// visibleTo says whether any owner of the token passes visible.
func (r *isoRegistry) visibleTo(token string, visible func(string) bool) bool {
	for owner := range r.owners[token] {
		if visible(owner) {
			return true
		}
	}
	return false
}

// tokens returns the known tokens in text, lower-cased, each with the text
// it was found as.
func (r *isoRegistry) tokens(text string) map[string]string {
	found := map[string]string{}
	for _, re := range []*regexp.Regexp{isoIDPattern, isoMarkerPattern, isoSecretPattern} {
		for _, raw := range re.FindAllString(text, -1) {
			if t := strings.ToLower(raw); r.owners[t] != nil {
				found[t] = raw
			}
		}
	}
	return found
}

// isoSuite runs the random steps.
type isoSuite struct {
	t       *testing.T
	api     *testAPI
	conn    *sql.Conn
	version int64 // the database's data_version at the last snapshot
	rng     *rand.Rand
	seed    uint64
	reg     *isoRegistry
	keys    []*isoKey
	links   []isoLink
	tokens  []*isoToken
	history []string

	// The snapshot's queries, one per table, and the cross-references',
	// prepared once on conn: parsing them costs more than running them.
	tableQueries []*sql.Stmt
	crossRefs    *sql.Stmt
}

// isoLink is a download link a step was given: acctapi's expiry and
// signature, or the bucket's whole pre-signed GET.
type isoLink struct{ file, expires, signature, bucketURL string }

// TestTenantIsolation sends random requests of every route, with keys of
// every kind, the x-client-id of every tenant and ids of every tenant, and
// checks each step against an oracle that knows who owns every id, marker
// string and webhook secret: no answer shows what its key may not see, an
// answer about another tenant's record is the answer about a missing one, no
// step changes a row or file that its request may not change (the webhook
// events and deliveries a change writes included), and an event holds only
// its tenant's data and goes only to the subscriptions of its firm, and of
// its client, that ask for it.
func TestTenantIsolation(t *testing.T) {
	testprog.SkipShort(t, "a walk of 1,000 random requests on both file stores")
	forEachStore(t, func(t *testing.T, store testStore) {
		seed := *isoSeed
		if seed == 0 {
			seed = rand.Uint64()
		}
		t.Logf("seed %d, %d steps (rerun with -iso.seed=%d -iso.steps=%d)", seed, *isoSteps, seed, *isoSteps)
		api := newFileTestAPI(t, store)
		pool, err := sql.Open("sqlite", "file:"+api.store.Path()+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pool.Close() })
		// One connection throughout: PRAGMA data_version tells it whether
		// another connection has written since it last asked.
		conn, err := pool.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		s := &isoSuite{t: t, api: api, conn: conn, seed: seed,
			rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
			reg: &isoRegistry{owners: map[string]map[string]bool{}, kinds: map[string][]string{},
				firmOf: map[string]string{}, parentOf: map[string]string{}, scanned: map[string]bool{}}}
		s.prepare()
		s.setUp()
		before := s.snapshot()
		s.reg.update(before)
		s.checkCrossReferences()
		s.checkEvents("set-up", nil, before)
		for i := range *isoSteps {
			// A second between steps, so that a write that slipped through
			// also shows in an updated_at.
			api.clock.Advance(time.Second)
			before = s.step(i, before)
		}
	})
}

// fail stops the test with the seed and the steps that led to the failure.
func (s *isoSuite) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d: %s\nlast steps:\n%s", s.seed, fmt.Sprintf(format, args...), strings.Join(s.history, "\n"))
}

func (s *isoSuite) marker() string {
	b := []byte("mk")
	for range 10 {
		b = append(b, isoAlphabet[s.rng.IntN(len(isoAlphabet))])
	}
	return string(b)
}

// freshID is a well-formed id that names nothing.
func (s *isoSuite) freshID() string {
	b := []byte("c")
	for range 24 {
		b = append(b, isoAlphabet[s.rng.IntN(len(isoAlphabet))])
	}
	return string(b)
}

// ---- set-up ------------------------------------------------------------------

// setUp gives firm A clients A1 and A2, firm B client B1, keys of every
// kind, to each firm webhook subscriptions (for every client and for one),
// and to each tenant users, workspaces, members, tasks with subtasks,
// folders, labels and files, all through the API but the custom roles,
// which only the CLI makes. The subscriptions come first, so that the rest
// makes events and deliveries.
func (s *isoSuite) setUp() {
	api := s.api
	firmA, firmB := api.firm.ID, api.other.firm.ID
	a1, a2, b1 := api.client.ID, api.otherClient.ID, api.other.client.ID
	var readOnly []string
	for _, p := range auth.PermissionsFor(auth.Accountant) {
		if strings.HasSuffix(string(p), ":read") {
			readOnly = append(readOnly, string(p))
		}
	}
	mint := func(name, firmID string, spec auth.KeySpec) *isoKey {
		spec.RateLimitMax = 1 << 30 // the clock stands still within a step: no step may meet the limit
		k := &isoKey{name: name, secret: api.mustMintKey(firmID, spec), firmID: firmID, client: spec.ClientID}
		s.keys = append(s.keys, k)
		return k
	}
	keyA := mint("A accountant", firmA, auth.KeySpec{})
	mint("A read-only accountant", firmA, auth.KeySpec{Permissions: readOnly})
	keyA1 := mint("A1 client", firmA, auth.KeySpec{ClientID: a1})
	keyA2 := mint("A2 client", firmA, auth.KeySpec{ClientID: a2})
	keyB := mint("B accountant", firmB, auth.KeySpec{})
	keyB1 := mint("B1 client", firmB, auth.KeySpec{ClientID: b1})

	for _, h := range []struct {
		key    *isoKey
		client string
		events []string
	}{
		{keyA, "", []string{db.AllEvents}}, {keyA, a1, []string{db.AllEvents}},
		{keyA, a2, []string{db.EventTaskCreated, db.EventTaskUpdated, db.EventFileCreated}},
		{keyB, "", []string{db.AllEvents}}, {keyB, b1, []string{db.AllEvents}},
	} {
		body := map[string]any{"url": "https://hooks-" + s.marker() + ".example.com/x", "events": h.events,
			"description": "Webhook " + s.marker()}
		if h.client != "" {
			body["clientId"] = h.client
		}
		s.must(http.StatusCreated, h.key, "", "POST", "/v1/webhooks", body)
	}

	accountants := map[string]string{}
	for _, f := range []struct {
		id  string
		key *isoKey
	}{{firmA, keyA}, {firmB, keyB}} {
		role, err := api.store.CreateRole(context.Background(), f.id, "Role "+s.marker())
		if err != nil {
			s.t.Fatal(err)
		}
		for _, r := range []string{role.ID, "user"} {
			m := s.marker()
			u := s.must(http.StatusCreated, f.key, "", "POST", "/v1/admin/users",
				map[string]any{"email": m + "@example.com", "role": r, "firstName": "First " + m, "lastName": "Last " + m})
			accountants[f.id] = u["id"].(string)
		}
	}

	for _, c := range []struct {
		id, firm           string
		firmKey, clientKey *isoKey
	}{{a1, firmA, keyA, keyA1}, {a2, firmA, keyA, keyA2}, {b1, firmB, keyB, keyB1}} {
		m := s.marker()
		s.must(http.StatusOK, c.firmKey, "", "PATCH", "/v1/admin/clients/"+c.id,
			map[string]any{"name": "Client " + m, "legalName": "Legal " + m, "customId": m})
		k, id := c.clientKey, c.id
		post := func(path string, body map[string]any) string {
			return s.must(http.StatusCreated, k, id, "POST", path, body)["id"].(string)
		}
		ws0 := post("/v1/workspaces", map[string]any{"name": "Workspace " + s.marker()})
		ws1 := post("/v1/workspaces", map[string]any{"name": "Workspace " + s.marker()})
		m = s.marker()
		post("/v1/users", map[string]any{"email": m + "@example.com", "role": "admin", "firstName": "First " + m,
			"lastName": "Last " + m, "workspaceIds": []string{ws0}})
		user := post("/v1/users", map[string]any{"email": s.marker() + "@example.com", "role": "user"})
		s.must(http.StatusCreated, k, id, "POST", "/v1/workspaces/"+ws1+"/members", map[string]any{"userId": user})
		s.must(http.StatusCreated, c.firmKey, id, "POST", "/v1/workspaces/"+ws1+"/members", map[string]any{"userId": accountants[c.firm]})
		folder := post("/v1/workspaces/"+ws0+"/folders", map[string]any{"name": "Folder " + s.marker()})
		subfolder := post("/v1/workspaces/"+ws0+"/folders", map[string]any{"name": "Folder " + s.marker(), "parentId": folder})
		label0 := post("/v1/workspaces/"+ws0+"/labels", map[string]any{"name": "Label " + s.marker()})
		label1 := post("/v1/workspaces/"+ws0+"/labels", map[string]any{"name": "Label " + s.marker()})
		task := post("/v1/tasks", map[string]any{"title": "Task " + s.marker(), "workspaceId": ws0, "text": "Text " + s.marker()})
		post("/v1/tasks", map[string]any{"title": "Task " + s.marker(), "workspaceId": ws0, "parentId": task})
		k = c.firmKey
		post("/v1/tasks", map[string]any{"title": "Task " + s.marker(), "workspaceId": ws1})
		file := s.mustUpload(k, id, flField("workspaceId", ws0), flField("taskId", task), flField("folderId", folder),
			flField("labelIds", label0+","+label1))
		s.mustUpload(k, id, flField("workspaceId", ws1))
		s.must(http.StatusOK, k, id, "PATCH", "/v1/tasks/"+task,
			map[string]any{"destinationFolderId": subfolder, "assetFileIds": []string{file}})
		s.must(http.StatusOK, c.clientKey, id, "GET", "/v1/files/"+file+"/content", nil)
		collect := s.must(http.StatusCreated, c.clientKey, id, "POST", "/v1/collects", map[string]any{
			"workspaceId": ws0, "taskId": task, "title": "Collect " + s.marker(), "message": "Message " + s.marker(),
			"items": []any{map[string]any{"title": "Item " + s.marker(), "folderId": folder}, map[string]any{"title": "Item " + s.marker(), "required": false}}})
		s.must(http.StatusCreated, c.firmKey, id, "POST", "/v1/collects/"+collect["id"].(string)+"/sessions", map[string]any{"label": "Label " + s.marker()})
		tok := s.tokens[len(s.tokens)-1]
		item := collect["items"].([]any)[0].(map[string]any)["id"].(string)
		req := &isoReq{op: "set-up", method: "POST", path: "/v1/collect-sessions/" + tok.token + "/items/" + item + "/files"}
		s.uploadBody(req)
		s.mustStatus(req, http.StatusCreated)
		statement := bkMT940(bkIBAN, "100.00",
			bkEntry{date: "2026-03-12", amount: "-49.99", ref: s.marker(), name: "Payee " + s.marker(), text: s.marker()})
		req = &isoReq{op: "set-up", method: "POST", path: "/v1/bank-statements", key: c.clientKey, clientID: id, route: isoClient,
			body: flBody(s.t, flFilePart("statement "+s.marker()+".sta", "", statement)), contentType: flMultipart}
		s.mustStatus(req, http.StatusCreated)
	}
}

// must sends a set-up request and requires the status.
func (s *isoSuite) must(status int, key *isoKey, clientID, method, path string, body any) map[string]any {
	s.t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			s.t.Fatal(err)
		}
	}
	req := &isoReq{op: "set-up", method: method, path: path, key: key, clientID: clientID, body: raw}
	return s.mustStatus(req, status)
}

// mustUpload uploads a file of the tenant with the form fields.
func (s *isoSuite) mustUpload(key *isoKey, clientID string, fields ...flPart) string {
	s.t.Helper()
	req := &isoReq{op: "set-up", method: "POST", path: "/v1/files", key: key, clientID: clientID}
	s.uploadBody(req, fields...)
	return s.mustStatus(req, http.StatusCreated)["id"].(string)
}

func (s *isoSuite) mustStatus(req *isoReq, status int) map[string]any {
	s.t.Helper()
	res := s.send(req)
	if res.status != status {
		s.t.Fatalf("set-up %s: got %d %s, want %d", req, res.status, res.body, status)
	}
	var out map[string]any
	res.decode(s.t, &out)
	s.noteLink(req, res)
	s.noteToken(req, res)
	return out
}

// uploadBody makes req a multipart upload of a file whose name and bytes
// hold a new marker.
func (s *isoSuite) uploadBody(req *isoReq, fields ...flPart) {
	m := s.marker()
	parts := append(fields, flFilePart("File "+m+".txt", "text/plain", []byte("isolation test file "+m+"\n")))
	req.body, req.contentType = flBody(s.t, parts...), flMultipart
}

func (s *isoSuite) send(req *isoReq) *response {
	s.t.Helper()
	if req.bucketURL != "" {
		return s.api.flDownload(s.t, req.bucketURL, nil)
	}
	r := request{method: req.method, path: req.path, clientID: req.clientID}
	if req.key != nil {
		r.key = req.key.secret
	}
	if req.body != nil {
		r.body = req.body
	}
	if req.contentType != "" {
		r.header = http.Header{"Content-Type": {req.contentType}}
	}
	return s.api.do(r)
}

// noteLink keeps the download link an answer gave, for download steps.
func (s *isoSuite) noteLink(req *isoReq, res *response) {
	if res.status != http.StatusOK || !strings.HasSuffix(strings.SplitN(req.path, "?", 2)[0], "/content") {
		return
	}
	var body struct{ URL string }
	res.decode(s.t, &body)
	u, err := url.Parse(body.URL)
	if err != nil {
		s.fail("link %q: %v", body.URL, err)
	}
	if s.api.s3 != nil {
		s.links = append(s.links, isoLink{file: path.Base(u.Path), bucketURL: body.URL})
	} else {
		file := path.Base(path.Dir(u.Path))
		s.links = append(s.links, isoLink{file: file, expires: u.Query().Get("expires"), signature: u.Query().Get("signature")})
	}
	if len(s.links) > 50 {
		s.links = s.links[1:]
	}
}

// noteToken keeps the collect link an answer gave, for the public collect
// steps.
func (s *isoSuite) noteToken(req *isoReq, res *response) {
	path := strings.SplitN(req.path, "?", 2)[0]
	if res.status != http.StatusCreated || !strings.HasPrefix(path, "/v1/collects/") || !strings.HasSuffix(path, "/sessions") {
		return
	}
	var body struct{ Token, CollectID string }
	res.decode(s.t, &body)
	s.tokens = append(s.tokens, &isoToken{token: body.Token, client: strings.ToLower(req.clientID), collect: body.CollectID})
}

// checkTokens fails on an answer that shows a collect link's token given
// before: a token is shown once, when it is made.
func (s *isoSuite) checkTokens(req *isoReq, res *response) {
	for _, tok := range s.tokens {
		if strings.Contains(string(res.body), tok.token) {
			s.fail("%s answered %d with the token of a link of %s:\n%s", req, res.status, tok.client, res.body)
		}
	}
}

// ---- snapshots -----------------------------------------------------------------

// prepare prepares the queries of the snapshot and the cross-references.
func (s *isoSuite) prepare() {
	s.t.Helper()
	prepare := func(query string) *sql.Stmt {
		stmt, err := s.conn.PrepareContext(context.Background(), query)
		if err != nil {
			s.t.Fatalf("prepare %s: %v", query, err)
		}
		s.t.Cleanup(func() { stmt.Close() })
		return stmt
	}
	for _, tb := range isoTables {
		s.tableQueries = append(s.tableQueries, prepare(`SELECT `+tb.head+`, t.* FROM `+tb.from+` ORDER BY `+tb.order))
	}
	s.crossRefs = prepare(isoCrossReferences)
}

// snapshot reads every row of every table and every stored file.
func (s *isoSuite) snapshot() *isoSnapshot {
	s.t.Helper()
	snap := &isoSnapshot{byKey: map[string]isoRow{}, files: s.api.flStoredFiles(s.t)}
	if err := s.conn.QueryRowContext(context.Background(), `PRAGMA data_version`).Scan(&s.version); err != nil {
		s.t.Fatal(err)
	}
	add := func(table string, row isoRow) {
		snap.rows = append(snap.rows, row)
		snap.byKey[table+" "+row.key] = row
	}
	for i, tb := range isoTables {
		rows, err := s.tableQueries[i].QueryContext(context.Background())
		if err != nil {
			s.t.Fatalf("read %s: %v", tb.name, err)
		}
		columns, _ := rows.Columns()
		values := make([]any, len(columns))
		dest := make([]any, len(columns))
		for i := range values {
			dest[i] = &values[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				s.t.Fatalf("read %s: %v", tb.name, err)
			}
			var content strings.Builder
			for i, v := range values[5:] {
				if b, ok := v.([]byte); ok {
					v = hex.EncodeToString(b)
				}
				fmt.Fprintf(&content, "%s=%v ", columns[5+i], v)
			}
			str := func(v any) string { return fmt.Sprint(v) }
			add(tb.name, isoRow{owner: str(values[0]), key: str(values[1]), kind: str(values[2]),
				parent: str(values[3]), email: str(values[4]), content: content.String()})
		}
		if err := rows.Err(); err != nil {
			s.t.Fatalf("read %s: %v", tb.name, err)
		}
		rows.Close()
	}
	for _, p := range snap.files {
		if strings.HasPrefix(p, "tmp/") || strings.Contains(p, "uploads/") {
			continue // an upload in flight, or one whose clean-up follows its answer
		}
		content := s.api.flStoredBytes(s.t, path.Base(p))
		owner := "orphan"
		if f, ok := snap.byKey["files "+path.Base(p)]; ok {
			owner = f.owner
		}
		add("store", isoRow{owner: owner, key: p, content: string(content)})
	}
	return snap
}

// changed says whether the database or the file store may differ from the
// snapshot: a step that wrote nothing needs no new one.
func (s *isoSuite) changed(before *isoSnapshot) bool {
	s.t.Helper()
	var version int64
	if err := s.conn.QueryRowContext(context.Background(), `PRAGMA data_version`).Scan(&version); err != nil {
		s.t.Fatal(err)
	}
	return version != s.version || !slices.Equal(s.api.flStoredFiles(s.t), before.files)
}

func (s *isoSuite) checkCrossReferences() {
	s.t.Helper()
	rows, err := s.crossRefs.QueryContext(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			s.t.Fatal(err)
		}
		found = append(found, v)
	}
	if err := rows.Err(); err != nil {
		s.t.Fatal(err)
	}
	if len(found) > 0 {
		s.fail("records refer to another tenant's: %v", found)
	}
}

// ---- steps -----------------------------------------------------------------------

// step sends one random request and checks its answer and the database.
func (s *isoSuite) step(i int, before *isoSnapshot) *isoSnapshot {
	s.t.Helper()
	req := s.next()
	visible, mayName, writable := s.scope(req)
	res := s.send(req)
	s.history = append(s.history, fmt.Sprintf("%d: %s -> %d %.300s", i, req, res.status, res.body))
	if len(s.history) > 8 {
		s.history = s.history[1:]
	}
	s.checkAnswer(req, res, visible)
	s.checkTokens(req, res)
	succeeded := res.status < 300

	// The same request with each other tenant's token in it replaced by
	// one that names nothing must get the same answer.
	twin, subs := s.twin(req, mayName, req.isWrite() && res.status < 300)
	if len(subs) > 0 {
		twinRes := s.send(twin)
		s.checkAnswer(twin, twinRes, visible)
		succeeded = succeeded || twinRes.status < 300
		got, want := s.normalize(res, subs, 0), s.normalize(twinRes, subs, 1)
		if got != want {
			s.fail("step %d: an answer about another tenant's record differs from the one about a missing record:\n"+
				"request %s\n got %s\nwant %s (request %s)", i, req, got, want, twin)
		}
	}
	s.noteLink(req, res)
	s.noteToken(req, res)

	if !s.changed(before) {
		return before
	}
	after := s.snapshot()
	s.reg.update(after)
	for _, change := range isoChanges(before, after) {
		// A link that reached its collect records its use, whatever the answer.
		used := req.route == isoCollect && strings.HasPrefix(change.before, "collect_sessions ") && writable(change.owner)
		if !used && (!req.isWrite() || !succeeded || !writable(change.owner)) {
			s.fail("step %d: %s (answered %d) changed a row of %s:\n before %s\n  after %s",
				i, req, res.status, change.owner, change.before, change.after)
		}
	}
	s.checkCrossReferences()
	s.checkEvents(fmt.Sprintf("step %d: %s", i, req), before, after)
	return after
}

// checkEvents fails on an event made since before (nil: any event) whose
// payload holds a token its tenant may not see: an event of a client may
// hold that client's and its firm's tokens, an event of the firm only the
// firm's. The subscriptions that get it are the cross-references' concern.
func (s *isoSuite) checkEvents(what string, before, after *isoSnapshot) {
	s.t.Helper()
	for _, row := range after.rows {
		if row.kind != "event" {
			continue
		}
		if before != nil {
			if _, old := before.byKey["webhook_events "+row.key]; old {
				continue
			}
		}
		tenant := strings.TrimPrefix(row.owner, "webhooks:")
		firm := "firm:" + s.reg.firmOf[tenant]
		mayHold := func(owner string) bool { return owner == tenant || owner == firm || owner == row.owner }
		for token := range s.reg.tokens(row.content) {
			if !s.reg.visibleTo(token, mayHold) {
				s.fail("%s: event %s of %s holds %s of %v:\n%s",
					what, row.key, tenant, token, slices.Sorted(maps.Keys(s.reg.owners[token])), row.content)
			}
		}
	}
}

// twin is the request with each token of another tenant replaced by a new
// one of the same form, which names nothing; the substitutions are nil when
// it names none. The request's new markers are replaced too, and after a
// write that succeeded all its markers, so that the twin of a create makes
// a record with names and emails of its own.
func (s *isoSuite) twin(req *isoReq, mayName func(string) bool, wrote bool) (*isoReq, [][2]string) {
	tokens := s.reg.tokens(req.text())
	var foreign, fresh []string
	for token := range tokens {
		if !mayName(token) {
			foreign = append(foreign, token)
		}
	}
	if len(foreign) == 0 {
		return nil, nil
	}
	for _, m := range isoMarkerPattern.FindAllString(req.text(), -1) {
		if (wrote || s.reg.owners[m] == nil) && !slices.Contains(foreign, m) && !slices.Contains(fresh, m) {
			fresh = append(fresh, m)
		}
	}
	slices.Sort(foreign) // map order would break replay
	twin := *req
	var subs [][2]string
	for _, token := range foreign {
		raw := tokens[token]
		sub := s.freshID()
		if isoMarkerPattern.MatchString(token) {
			sub = s.marker()
		}
		if raw != token {
			sub = strings.ToUpper(sub)
		}
		subs = append(subs, [2]string{raw, sub})
	}
	for _, m := range fresh {
		subs = append(subs, [2]string{m, s.marker()})
	}
	for _, sub := range subs {
		twin.path = strings.ReplaceAll(twin.path, sub[0], sub[1])
		twin.clientID = strings.ReplaceAll(twin.clientID, sub[0], sub[1])
		twin.body = []byte(strings.ReplaceAll(string(twin.body), sub[0], sub[1]))
	}
	return &twin, subs
}

// checkAnswer fails on a 500 and on any token of a tenant the request may
// not see that the request did not name itself.
func (s *isoSuite) checkAnswer(req *isoReq, res *response, visible func(string) bool) {
	s.t.Helper()
	if res.status >= 500 {
		s.fail("%s answered %d %s", req, res.status, res.body)
	}
	var text strings.Builder
	text.Write(res.body)
	for name, values := range res.header {
		if name != "X-Request-Id" {
			text.WriteString(" " + strings.Join(values, " "))
		}
	}
	sent := s.reg.tokens(req.text())
	for token := range s.reg.tokens(text.String()) {
		if _, ok := sent[token]; !ok && !s.reg.visibleTo(token, visible) {
			s.fail("%s answered %d with %s of %v, which it may not see:\n%s",
				req, res.status, token, slices.Sorted(maps.Keys(s.reg.owners[token])), res.body)
		}
	}
}

// normalize is an answer as compared with its twin's: each substituted
// token, as sent and lower-cased, becomes a placeholder, and so does each
// id the oracle did not know before the step (records the step made), and
// each secret it did not know (of a subscription the step made or rotated).
func (s *isoSuite) normalize(res *response, subs [][2]string, side int) string {
	body := string(res.body)
	for i, sub := range subs {
		placeholder := fmt.Sprintf("<ref %d>", i)
		body = strings.ReplaceAll(body, sub[side], placeholder)
		body = strings.ReplaceAll(body, strings.ToLower(sub[side]), placeholder)
	}
	body = isoIDPattern.ReplaceAllStringFunc(body, func(id string) string {
		if s.reg.owners[strings.ToLower(id)] != nil {
			return id
		}
		return "<new>"
	})
	body = isoSecretPattern.ReplaceAllStringFunc(body, func(secret string) string {
		if s.reg.owners[strings.ToLower(secret)] != nil {
			return secret
		}
		return "<new secret>"
	})
	body = isoCollectTokenPattern.ReplaceAllString(body, "<new token>")
	return fmt.Sprintf("%d %s %s", res.status, res.header.Get("Content-Type"), body)
}

type isoChange struct{ owner, before, after string }

// isoChanges lists the rows that differ, each with the owner of its before
// and of its after state.
func isoChanges(before, after *isoSnapshot) []isoChange {
	var out []isoChange
	for key, b := range before.byKey {
		a, ok := after.byKey[key]
		switch {
		case !ok:
			out = append(out, isoChange{b.owner, key + " " + b.content, "(gone)"})
		case a.content != b.content || a.owner != b.owner:
			out = append(out, isoChange{b.owner, key + " " + b.content, a.content},
				isoChange{a.owner, key + " " + b.content, a.content})
		}
	}
	for key, a := range after.byKey {
		if _, ok := before.byKey[key]; !ok {
			out = append(out, isoChange{a.owner, "(none)", key + " " + a.content})
		}
	}
	return out
}

// scope says, for a request, whose tokens its answer may show, which tokens
// it may name (the others are replaced in its twin), and whose rows it may
// change if it succeeds.
func (s *isoSuite) scope(req *isoReq) (visible, mayName, writable func(string) bool) {
	none := func(string) bool { return false }
	if req.route == isoCollect {
		// A link reaches its client's records, and changes them by its use.
		if req.token == nil {
			return none, none, none
		}
		client, firm := req.token.client, "firm:"+s.reg.firmOf[req.token.client]
		visible = func(owner string) bool { return owner == client || owner == firm }
		writable = func(owner string) bool { return owner == client || owner == "webhooks:"+client }
		mayName = func(token string) bool { return s.reg.visibleTo(token, visible) }
		return visible, mayName, writable
	}
	if req.route == isoPublic || req.route == isoDownload {
		visible = none
		if req.signedFile != "" {
			visible = func(owner string) bool { return s.reg.owners[req.signedFile][owner] }
		}
		mayName = func(token string) bool { return req.route == isoPublic || token == req.signedFile }
		return visible, mayName, none
	}
	k := req.key
	firm := func(owner string) bool { return s.reg.firmOf[owner] == k.firmID }
	visible, writable = firm, firm
	if k.client != "" {
		visible = func(owner string) bool { return owner == k.client || owner == "firm:"+k.firmID }
		writable = none
	}
	if req.route == isoClient {
		writable = none
		header := strings.ToLower(req.clientID)
		if header == k.client || k.client == "" && s.reg.firmOf[header] == k.firmID {
			visible = func(owner string) bool { return owner == header || owner == "firm:"+k.firmID }
			// The events of its changes, and their deliveries, are its too.
			writable = func(owner string) bool { return owner == header || owner == "webhooks:"+header }
		}
	}
	mayName = func(token string) bool { return s.reg.visibleTo(token, visible) }
	return visible, mayName, writable
}

// ---- random requests ------------------------------------------------------------

// isoCtx is what an operation builds its request from.
type isoCtx struct {
	s   *isoSuite
	req *isoReq
	own func(owner string) bool // the tenant ids are mostly drawn from
	// A clean request names only records of its own tenant that exist, in
	// one workspace (or of one subscription), so that steps also succeed
	// and change data; the others draw each id now and then from another
	// tenant, another kind or none.
	clean bool
	// parent is the workspace or the subscription the request's own records
	// are drawn from, if it has one.
	parent string
}

// inParent are the kinds of record that are in a workspace or, for
// deliveries, of a subscription.
var inParent = []string{"task", "folder", "label", "file", "delivery"}

// ownIDs are the ids of the kinds of records of the tenant that exist, in
// the request's workspace or of its subscription if it has one.
func (c *isoCtx) ownIDs(kinds ...string) []string {
	var ids []string
	for _, kind := range kinds {
		for _, id := range c.s.reg.kinds[kind] {
			if c.s.reg.live[id] && c.s.reg.visibleTo(id, c.own) &&
				(c.parent == "" || !slices.Contains(inParent, kind) || c.s.reg.parentOf[id] == c.parent) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// id draws an id of one of the kinds: the tenant's own, or for a request
// that is not clean, now and then any tenant's (sometimes one in the
// request's workspace or of its subscription, which may be another
// tenant's), any kind's or none's; each sometimes in capitals.
func (c *isoCtx) id(kinds ...string) string {
	s := c.s
	var pool []string
	switch n := s.rng.IntN(20); {
	case c.clean || n < 12:
		pool = c.ownIDs(kinds...)
	case n < 15:
		for _, kind := range kinds {
			pool = append(pool, s.reg.kinds[kind]...)
		}
	case n < 17:
		// Mostly a record of the request's workspace or subscription: with
		// another tenant's parent, a handler that checks that the record is
		// the parent's but not whose the parent is lets the pair through.
		for _, kind := range kinds {
			for _, id := range s.reg.kinds[kind] {
				if c.parent == "" || !slices.Contains(inParent, kind) || s.reg.parentOf[id] == c.parent {
					pool = append(pool, id)
				}
			}
		}
	case n < 18:
		for _, ids := range s.reg.kinds {
			pool = append(pool, ids...)
		}
		slices.Sort(pool) // map order would break replay
	}
	id := s.freshID()
	if len(pool) > 0 {
		id = pool[s.rng.IntN(len(pool))]
	}
	if s.rng.IntN(10) == 0 {
		id = strings.ToUpper(id)
	}
	return id
}

// ids draws up to three ids.
func (c *isoCtx) ids(kinds ...string) []string {
	out := []string{}
	for range c.s.rng.IntN(4) {
		if id := c.id(kinds...); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// optional draws an id for an optional field, or says to leave the field
// out, as it does when the tenant has no fitting record.
func (c *isoCtx) optional(kinds ...string) (string, bool) {
	if !c.maybe() || len(c.ownIDs(kinds...)) == 0 {
		return "", false
	}
	return c.id(kinds...), true
}

// workspace draws a workspace id, and makes it the one the request's other
// own records are drawn from.
func (c *isoCtx) workspace() string {
	id := c.id("workspace")
	c.parent = strings.ToLower(id)
	return id
}

// webhook draws a subscription id, and makes it the one the request's
// deliveries are drawn from.
func (c *isoCtx) webhook() string {
	id := c.id("webhook")
	c.parent = strings.ToLower(id)
	return id
}

// task draws a task id, and makes its workspace the one the request's other
// own records are drawn from.
func (c *isoCtx) task() string {
	id := c.id("task")
	c.parent = c.s.reg.parentOf[strings.ToLower(id)]
	return id
}

func (c *isoCtx) maybe() bool { return c.s.rng.IntN(2) == 0 }

func (c *isoCtx) name(prefix string) string { return prefix + " " + c.s.marker() }

// email is a new address, or one a user of any tenant has.
func (c *isoCtx) email() string {
	s := c.s
	if len(s.reg.emails) > 0 && s.rng.IntN(3) == 0 {
		return s.reg.emails[s.rng.IntN(len(s.reg.emails))]
	}
	return s.marker() + "@example.com"
}

// query is a list query: page size, sort and a cursor drawn from kinds.
func (c *isoCtx) query(q url.Values, sorts []string, kinds ...string) string {
	if c.maybe() {
		q.Set("limit", fmt.Sprint(1+c.s.rng.IntN(3)))
	}
	if c.maybe() {
		q.Set("sort", sorts[c.s.rng.IntN(len(sorts))])
		q.Set("order", []string{"asc", "desc"}[c.s.rng.IntN(2)])
	}
	if c.s.rng.IntN(3) == 0 {
		q.Set("cursor", c.id(kinds...))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

func (c *isoCtx) json(method, path string, body map[string]any) {
	c.req.method, c.req.path = method, path
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			c.s.t.Fatal(err)
		}
		c.req.body = raw
	}
}

// isoOps are the operations of the route table, with how often each is drawn.
var isoOps = []struct {
	name   string
	route  isoRoute
	weight int
	build  func(c *isoCtx)
}{
	{"health", isoPublic, 1, func(c *isoCtx) { c.json("GET", "/v1/health", nil) }},
	{"openapi", isoPublic, 1, func(c *isoCtx) { c.json("GET", "/v1/openapi.json", nil) }},
	{"me", isoKeyed, 2, func(c *isoCtx) { c.json("GET", "/v1/me", nil) }},
	{"list tasks", isoClient, 5, func(c *isoCtx) {
		q := url.Values{}
		if c.maybe() {
			q.Set("workspaceId", c.id("workspace"))
		}
		if c.maybe() {
			q.Set("parentId", c.id("task"))
		}
		c.json("GET", "/v1/tasks"+c.query(q, []string{"createdAt", "updatedAt", "dueDate", "status", "title"}, "task"), nil)
	}},
	{"create task", isoClient, 5, func(c *isoCtx) {
		body := map[string]any{"title": c.name("Task"), "workspaceId": c.workspace()}
		if id, ok := c.optional("task"); ok {
			body["parentId"] = id
		}
		if c.maybe() {
			body["text"], body["dueDate"] = c.name("Text"), "2027-01-02T03:04:05Z"
		}
		c.json("POST", "/v1/tasks", body)
	}},
	{"patch task", isoClient, 5, func(c *isoCtx) {
		task := c.task()
		body := map[string]any{}
		if c.maybe() {
			body["title"] = c.name("Task")
		}
		if c.maybe() {
			body["status"] = db.TaskStatuses[c.s.rng.IntN(len(db.TaskStatuses))]
		}
		if id, ok := c.optional("folder"); ok {
			body["destinationFolderId"] = id
		}
		if c.maybe() {
			body["assetFileIds"] = c.ids("file")
		}
		if id, ok := c.optional("task"); ok {
			body["parentId"] = id
		}
		if c.s.rng.IntN(5) == 0 {
			body["parentId"], body["destinationFolderId"] = nil, nil
		}
		c.json("PATCH", "/v1/tasks/"+task, body)
	}},
	{"delete task", isoClient, 2, func(c *isoCtx) { c.json("DELETE", "/v1/tasks/"+c.id("task"), nil) }},
	{"list workspaces", isoClient, 3, func(c *isoCtx) {
		c.json("GET", "/v1/workspaces"+c.query(url.Values{}, []string{"createdAt"}, "workspace"), nil)
	}},
	{"create workspace", isoClient, 2, func(c *isoCtx) {
		c.json("POST", "/v1/workspaces", map[string]any{"name": c.name("Workspace")})
	}},
	{"rename workspace", isoClient, 3, func(c *isoCtx) {
		c.json("PATCH", "/v1/workspaces/"+c.id("workspace"), map[string]any{"name": c.name("Workspace")})
	}},
	{"list members", isoClient, 3, func(c *isoCtx) { c.json("GET", "/v1/workspaces/"+c.id("workspace")+"/members", nil) }},
	{"add member", isoClient, 4, func(c *isoCtx) {
		c.json("POST", "/v1/workspaces/"+c.id("workspace")+"/members", map[string]any{"userId": c.id("clientUser", "accountantUser")})
	}},
	{"remove member", isoClient, 3, func(c *isoCtx) {
		c.json("DELETE", "/v1/workspaces/"+c.id("workspace")+"/members", map[string]any{"userId": c.id("clientUser", "accountantUser")})
	}},
	{"list folders", isoClient, 3, func(c *isoCtx) {
		c.json("GET", "/v1/workspaces/"+c.workspace()+"/folders"+c.query(url.Values{}, []string{"createdAt", "name"}, "folder"), nil)
	}},
	{"create folder", isoClient, 3, func(c *isoCtx) {
		ws, body := c.workspace(), map[string]any{"name": c.name("Folder")}
		if id, ok := c.optional("folder"); ok {
			body["parentId"] = id
		}
		c.json("POST", "/v1/workspaces/"+ws+"/folders", body)
	}},
	{"list labels", isoClient, 3, func(c *isoCtx) {
		c.json("GET", "/v1/workspaces/"+c.workspace()+"/labels"+c.query(url.Values{}, []string{"createdAt", "name"}, "label"), nil)
	}},
	{"create label", isoClient, 3, func(c *isoCtx) {
		c.json("POST", "/v1/workspaces/"+c.id("workspace")+"/labels", map[string]any{"name": c.name("Label")})
	}},
	{"upload file", isoClient, 4, func(c *isoCtx) {
		fields := []flPart{flField("workspaceId", c.workspace())}
		if id, ok := c.optional("task"); ok {
			fields = append(fields, flField("taskId", id))
		}
		if id, ok := c.optional("folder"); ok {
			fields = append(fields, flField("folderId", id))
		}
		if labels := c.ids("label"); len(labels) > 0 {
			fields = append(fields, flField("labelIds", strings.Join(labels, ",")))
		}
		c.req.method, c.req.path = "POST", "/v1/files"
		c.s.uploadBody(c.req, fields...)
	}},
	{"get file", isoClient, 4, func(c *isoCtx) { c.json("GET", "/v1/files/"+c.id("file"), nil) }},
	{"file link", isoClient, 4, func(c *isoCtx) { c.json("GET", "/v1/files/"+c.id("file")+"/content", nil) }},
	{"download", isoDownload, 4, func(c *isoCtx) {
		s := c.s
		link := isoLink{file: "", expires: "4102444800", signature: hex.EncodeToString([]byte(s.marker() + s.marker() + "........"))}
		if len(s.links) > 0 && s.rng.IntN(8) > 0 {
			link = s.links[s.rng.IntN(len(s.links))]
		}
		c.req.signedFile = link.file
		if link.bucketURL != "" {
			// The bucket checks its own signatures (TestFileTenantIsolation
			// changes them): the step fetches a link as given.
			c.req.method, c.req.bucketURL = "GET", link.bucketURL
			return
		}
		file := link.file
		if file == "" || c.maybe() {
			file = c.id("file")
		}
		c.json("GET", "/v1/files/"+file+"/download?"+url.Values{"expires": {link.expires}, "signature": {link.signature}}.Encode(), nil)
	}},
	{"invite user", isoClient, 3, func(c *isoCtx) {
		body := map[string]any{"email": c.email(), "role": []string{"admin", "user"}[c.s.rng.IntN(2)]}
		if c.maybe() {
			body["workspaceIds"] = c.ids("workspace")
		}
		if c.maybe() {
			body["firstName"], body["lastName"] = c.name("First"), c.name("Last")
		}
		c.json("POST", "/v1/users", body)
	}},
	{"patch user", isoClient, 3, func(c *isoCtx) {
		c.json("PATCH", "/v1/users/"+c.id("clientUser", "accountantUser"), map[string]any{"role": []string{"admin", "user"}[c.s.rng.IntN(2)]})
	}},
	{"create client", isoKeyed, 1, func(c *isoCtx) {
		c.json("POST", "/v1/admin/clients", map[string]any{"name": c.name("Client"), "type": "legal_person", "customId": c.s.marker()})
	}},
	{"list clients", isoKeyed, 3, func(c *isoCtx) {
		c.json("GET", "/v1/admin/clients"+c.query(url.Values{}, []string{"createdAt", "updatedAt", "name"}, "client"), nil)
	}},
	{"get client", isoKeyed, 3, func(c *isoCtx) { c.json("GET", "/v1/admin/clients/"+c.id("client"), nil) }},
	{"patch client", isoKeyed, 3, func(c *isoCtx) {
		body := map[string]any{"legalName": c.name("Legal")}
		if c.maybe() {
			body["name"] = c.name("Client")
		}
		c.json("PATCH", "/v1/admin/clients/"+c.id("client"), body)
	}},
	{"list accountant users", isoKeyed, 3, func(c *isoCtx) {
		c.json("GET", "/v1/admin/users"+c.query(url.Values{}, []string{"createdAt", "email", "firstName"}, "accountantUser"), nil)
	}},
	{"invite accountant user", isoKeyed, 2, func(c *isoCtx) {
		c.json("POST", "/v1/admin/users", map[string]any{"email": c.email(), "role": c.role(), "firstName": c.name("First")})
	}},
	{"get accountant user", isoKeyed, 3, func(c *isoCtx) { c.json("GET", "/v1/admin/users/"+c.id("accountantUser", "clientUser"), nil) }},
	{"patch accountant user", isoKeyed, 3, func(c *isoCtx) {
		c.json("PATCH", "/v1/admin/users/"+c.id("accountantUser", "clientUser"), map[string]any{"role": c.role()})
	}},
	{"create webhook", isoKeyed, 2, func(c *isoCtx) {
		body := map[string]any{"url": c.webhookURL(), "events": c.events()}
		if id, ok := c.optional("client"); ok {
			body["clientId"] = id
		}
		if c.maybe() {
			body["description"] = c.name("Webhook")
		}
		c.json("POST", "/v1/webhooks", body)
	}},
	{"list webhooks", isoKeyed, 2, func(c *isoCtx) {
		c.json("GET", "/v1/webhooks"+c.query(url.Values{}, []string{"createdAt", "updatedAt"}, "webhook"), nil)
	}},
	{"get webhook", isoKeyed, 2, func(c *isoCtx) { c.json("GET", "/v1/webhooks/"+c.id("webhook"), nil) }},
	{"patch webhook", isoKeyed, 3, func(c *isoCtx) {
		hook, body := c.id("webhook"), map[string]any{}
		if c.maybe() {
			body["url"] = c.webhookURL()
		}
		if c.maybe() {
			body["events"] = c.events()
		}
		if id, ok := c.optional("client"); ok {
			body["clientId"] = id
		} else if c.s.rng.IntN(4) == 0 {
			body["clientId"] = nil
		}
		if c.maybe() {
			body["description"] = c.name("Webhook")
		}
		if c.maybe() {
			body["enabled"] = c.s.rng.IntN(3) > 0
		}
		c.json("PATCH", "/v1/webhooks/"+hook, body)
	}},
	{"delete webhook", isoKeyed, 1, func(c *isoCtx) {
		// No x-client-id, which the route ignores: its twin would repeat a
		// delete that succeeded, and get 404.
		c.req.clientID = ""
		c.json("DELETE", "/v1/webhooks/"+c.id("webhook"), nil)
	}},
	{"rotate webhook secret", isoKeyed, 2, func(c *isoCtx) { c.json("POST", "/v1/webhooks/"+c.id("webhook")+"/rotate-secret", nil) }},
	{"list deliveries", isoKeyed, 3, func(c *isoCtx) {
		c.json("GET", "/v1/webhooks/"+c.webhook()+"/deliveries"+c.query(url.Values{}, []string{"createdAt"}, "delivery"), nil)
	}},
	{"retry delivery", isoKeyed, 2, func(c *isoCtx) {
		hook := c.webhook()
		c.json("POST", "/v1/webhooks/"+hook+"/deliveries/"+c.id("delivery")+"/retry", nil)
	}},
	{"list collects", isoClient, 3, func(c *isoCtx) {
		q := url.Values{}
		if c.maybe() {
			q.Set("workspaceId", c.id("workspace"))
		}
		if c.maybe() {
			q.Set("taskId", c.id("task"))
		}
		if c.s.rng.IntN(4) == 0 {
			q.Set("status", []string{"OPEN", "SUBMITTED", "CLOSED", "CANCELLED"}[c.s.rng.IntN(4)])
		}
		c.json("GET", "/v1/collects"+c.query(q, db.CollectSorts, "collect"), nil)
	}},
	{"create collect", isoClient, 3, func(c *isoCtx) {
		body := map[string]any{"workspaceId": c.workspace(), "title": c.name("Collect")}
		if id, ok := c.optional("task"); ok {
			body["taskId"] = id
		}
		if c.maybe() {
			body["message"], body["dueDate"] = c.name("Message"), "2027-01-02T03:04:05Z"
		}
		var items []any
		for range 1 + c.s.rng.IntN(3) {
			item := map[string]any{"title": c.name("Item"), "required": c.maybe()}
			if id, ok := c.optional("folder"); ok {
				item["folderId"] = id
			}
			items = append(items, item)
		}
		body["items"] = items
		c.json("POST", "/v1/collects", body)
	}},
	{"get collect", isoClient, 3, func(c *isoCtx) { c.json("GET", "/v1/collects/"+c.id("collect"), nil) }},
	{"collect missing receipts", isoClient, 2, func(c *isoCtx) {
		body := map[string]any{"workspaceId": c.workspace(), "title": c.name("Collect")}
		if c.maybe() {
			body["transactionIds"] = append(c.ids("transaction"), c.id("transaction"))
		} else {
			body["fromTransactions"] = map[string]any{"accountId": c.id("bankAccount"), "bookingDateFrom": "2026-03-01", "bookingDateTo": "2026-03-31"}
		}
		c.json("POST", "/v1/collects", body)
	}},
	{"import statement", isoClient, 3, func(c *isoCtx) {
		var fields []flPart
		if c.maybe() {
			fields = append(fields, flField("workspaceId", c.workspace()))
		}
		iban := []string{bkIBAN, "DE02120300000000202051"}[c.s.rng.IntN(2)]
		statement := bkMT940(iban, "100.00",
			bkEntry{date: "2026-03-12", amount: "-49.99", ref: c.s.marker(), name: c.name("Payee"), text: c.s.marker()},
			bkEntry{date: "2026-03-13", amount: "-49.99", name: c.name("Payee"), text: c.s.marker()})
		c.req.method, c.req.path = "POST", "/v1/bank-statements"
		c.req.body, c.req.contentType = flBody(c.s.t, append(fields, flFilePart("statement "+c.s.marker()+".sta", "", statement))...), flMultipart
	}},
	{"list statements", isoClient, 2, func(c *isoCtx) {
		q := url.Values{}
		if c.maybe() {
			q.Set("accountId", c.id("bankAccount"))
		}
		c.json("GET", "/v1/bank-statements"+c.query(q, []string{"createdAt"}, "bankStatement"), nil)
	}},
	{"get statement", isoClient, 2, func(c *isoCtx) { c.json("GET", "/v1/bank-statements/"+c.id("bankStatement"), nil) }},
	{"list accounts", isoClient, 2, func(c *isoCtx) {
		c.json("GET", "/v1/bank-accounts"+c.query(url.Values{}, []string{"createdAt"}, "bankAccount"), nil)
	}},
	{"get account", isoClient, 2, func(c *isoCtx) { c.json("GET", "/v1/bank-accounts/"+c.id("bankAccount"), nil) }},
	{"list transactions", isoClient, 3, func(c *isoCtx) {
		q := url.Values{}
		if c.maybe() {
			q.Set("accountId", c.id("bankAccount"))
		}
		if c.maybe() {
			q.Set("statementId", c.id("bankStatement"))
		}
		if c.maybe() {
			q.Set("fileId", c.id("file"))
		}
		if c.maybe() {
			q.Set("q", "Payee")
		}
		c.json("GET", "/v1/transactions"+c.query(q, []string{"bookingDate", "amount"}, "transaction"), nil)
	}},
	{"get transaction", isoClient, 2, func(c *isoCtx) { c.json("GET", "/v1/transactions/"+c.id("transaction"), nil) }},
	{"patch transaction", isoClient, 3, func(c *isoCtx) {
		body := map[string]any{}
		if c.maybe() {
			body["fileIds"] = c.ids("file")
		}
		if c.maybe() {
			body["ignored"] = c.maybe()
		}
		if c.maybe() {
			body["note"] = c.name("Note")
		}
		c.json("PATCH", "/v1/transactions/"+c.id("transaction"), body)
	}},
	{"patch collect", isoClient, 3, func(c *isoCtx) {
		body := map[string]any{}
		if c.maybe() {
			body["title"] = c.name("Collect")
		}
		if c.maybe() {
			body["message"] = c.name("Message")
		}
		if c.s.rng.IntN(3) == 0 {
			body["status"] = []string{"OPEN", "CLOSED", "CANCELLED"}[c.s.rng.IntN(3)]
		}
		c.json("PATCH", "/v1/collects/"+c.id("collect"), body)
	}},
	{"delete collect", isoClient, 1, func(c *isoCtx) { c.json("DELETE", "/v1/collects/"+c.id("collect"), nil) }},
	{"add collect item", isoClient, 2, func(c *isoCtx) {
		collect, body := c.collect(), map[string]any{"title": c.name("Item")}
		if id, ok := c.optional("folder"); ok {
			body["folderId"] = id
		}
		c.json("POST", "/v1/collects/"+collect+"/items", body)
	}},
	{"patch collect item", isoClient, 3, func(c *isoCtx) {
		collect := c.collect()
		item, body := c.inCollect("collectItem", collect), map[string]any{}
		switch c.s.rng.IntN(3) {
		case 0:
			body["status"], body["rejectionReason"] = "REJECTED", c.name("Reason")
		case 1:
			body["title"] = c.name("Item")
		default:
			if id, ok := c.optional("folder"); ok {
				body["folderId"] = id
			} else {
				body["folderId"] = nil
			}
		}
		c.json("PATCH", "/v1/collects/"+collect+"/items/"+item, body)
	}},
	{"create collect session", isoClient, 2, func(c *isoCtx) {
		c.json("POST", "/v1/collects/"+c.collect()+"/sessions", map[string]any{"label": c.name("Label")})
	}},
	{"list collect sessions", isoClient, 2, func(c *isoCtx) {
		c.json("GET", "/v1/collects/"+c.collect()+"/sessions"+c.query(url.Values{}, []string{"createdAt"}, "collectSession"), nil)
	}},
	{"revoke collect session", isoClient, 1, func(c *isoCtx) {
		collect := c.collect()
		c.json("DELETE", "/v1/collects/"+collect+"/sessions/"+c.inCollect("collectSession", collect), nil)
	}},
	{"open collect link", isoCollect, 3, func(c *isoCtx) { c.json("GET", "/v1/collect-sessions/"+c.token(), nil) }},
	{"upload through a collect link", isoCollect, 3, func(c *isoCtx) {
		token := c.token()
		collect := ""
		if c.req.token != nil {
			collect = c.req.token.collect
		}
		c.req.method, c.req.path = "POST", "/v1/collect-sessions/"+token+"/items/"+c.inCollect("collectItem", collect)+"/files"
		c.s.uploadBody(c.req)
	}},
	{"submit through a collect link", isoCollect, 2, func(c *isoCtx) { c.json("POST", "/v1/collect-sessions/"+c.token()+"/submit", nil) }},
}

// collect draws a collect id, and makes its workspace the one the request's
// other own records are drawn from.
func (c *isoCtx) collect() string {
	id := c.id("collect")
	c.parent = c.s.reg.parentOf[strings.ToLower(id)]
	return id
}

// inCollect draws an id of the kind (collectItem or collectSession): of the
// collect when the request is clean and the collect has one, else as id does.
func (c *isoCtx) inCollect(kind, collect string) string {
	if c.clean || c.s.rng.IntN(3) > 0 {
		var pool []string
		for _, id := range c.s.reg.kinds[kind] {
			if c.s.reg.live[id] && c.s.reg.parentOf[id] == strings.ToLower(collect) {
				pool = append(pool, id)
			}
		}
		if len(pool) > 0 {
			return pool[c.s.rng.IntN(len(pool))]
		}
	}
	return c.id(kind)
}

// token draws a collect link given earlier, or now and then a token that was
// never given, and makes it the request's credential.
func (c *isoCtx) token() string {
	s := c.s
	if len(s.tokens) == 0 || s.rng.IntN(8) == 0 {
		b := make([]byte, 43)
		for i := range b {
			b[i] = isoAlphabet[s.rng.IntN(len(isoAlphabet))]
		}
		return string(b)
	}
	c.req.token = s.tokens[s.rng.IntN(len(s.tokens))]
	return c.req.token.token
}

// webhookURL is a subscription URL whose host holds a new marker.
func (c *isoCtx) webhookURL() string { return "https://hooks-" + c.s.marker() + ".example.com/x" }

// events is a subscription's events list: all of them, or up to three types.
func (c *isoCtx) events() []string {
	if c.s.rng.IntN(3) == 0 {
		return []string{db.AllEvents}
	}
	var types []string
	for range 1 + c.s.rng.IntN(3) {
		types = append(types, db.EventTypes[c.s.rng.IntN(len(db.EventTypes))])
	}
	return types
}

// role is a built-in role's name or a role id.
func (c *isoCtx) role() string {
	if c.s.rng.IntN(3) == 0 {
		return []string{"admin", "user"}[c.s.rng.IntN(2)]
	}
	return c.id("role")
}

// next draws an operation, a key, an x-client-id and the ids the request names.
func (s *isoSuite) next() *isoReq {
	total := 0
	for _, op := range isoOps {
		total += op.weight
	}
	n := s.rng.IntN(total)
	i := 0
	for ; n >= isoOps[i].weight; i++ {
		n -= isoOps[i].weight
	}
	op := isoOps[i]
	req := &isoReq{op: op.name, route: op.route}
	c := &isoCtx{s: s, req: req, own: func(string) bool { return false }, clean: s.rng.IntN(5) < 2}
	if op.route == isoKeyed || op.route == isoClient {
		keys := s.keys
		if op.route == isoKeyed && s.rng.IntN(4) > 0 {
			// Client keys only ever get 403 in the admin area.
			keys = slices.DeleteFunc(slices.Clone(keys), func(k *isoKey) bool { return k.client != "" })
		}
		req.key = keys[s.rng.IntN(len(keys))]
		req.clientID = s.clientHeader(req.key, op.route == isoKeyed, c.clean)
		k, header := req.key, strings.ToLower(req.clientID)
		c.own = func(owner string) bool { return s.reg.firmOf[owner] == k.firmID }
		if op.route == isoClient {
			c.own = func(owner string) bool { return owner == header || owner == "firm:"+k.firmID }
		}
	}
	op.build(c)
	return req
}

// clientHeader draws the x-client-id of a request: mostly a client the key
// reaches, else any tenant's client, one that does not exist, or none (the
// admin area ignores it, and mostly gets none). A clean request's is one the
// key reaches.
func (s *isoSuite) clientHeader(k *isoKey, admin, clean bool) string {
	n := s.rng.IntN(20)
	if admin && (clean || n < 16) {
		return ""
	}
	if clean {
		n = 0
	}
	clients := s.reg.kinds["client"]
	switch {
	case n < 15:
		if k.client != "" {
			return k.client
		}
		var own []string
		for _, id := range clients {
			if s.reg.firmOf[id] == k.firmID {
				own = append(own, id)
			}
		}
		return own[s.rng.IntN(len(own))]
	case n < 18:
		return clients[s.rng.IntN(len(clients))]
	case n < 19:
		return s.freshID()
	}
	return ""
}
