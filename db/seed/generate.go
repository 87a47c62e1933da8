package seed

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"acctapi/db"
)

// Spec sizes the dataset Generate makes.
type Spec struct {
	// Clients is the number of clients; the first is the big one.
	Clients int
	// Tasks is the number of tasks of the first client; OtherTasks that of
	// each other client.
	Tasks, OtherTasks int
	// Workspaces is the number of workspaces of each client. The first holds
	// 60% of its client's tasks (a long-running engagement), the others share
	// the rest.
	Workspaces int
	// ClientUsers is the number of users of each client; AccountantUsers
	// that of the firm.
	ClientUsers, AccountantUsers int
	// Files is the number of documents of the first client, already read:
	// records, texts and search index, without bytes.
	Files int
}

// Check reports a spec Generate cannot fill.
func (s Spec) Check() error {
	if s.Clients < 1 || s.Workspaces < 1 || s.Tasks < 0 || s.OtherTasks < 0 || s.ClientUsers < 0 || s.AccountantUsers < 0 || s.Files < 0 {
		return fmt.Errorf("a dataset needs at least one client, one workspace a client and no negative counts")
	}
	return nil
}

// Seeded names what Generate made.
type Seeded struct {
	Clients []SeededClient
}

// SeededClient is one generated client.
type SeededClient struct {
	ID, Name   string
	Tasks      int
	Workspaces []string // the first holds the most tasks
}

// seedBatch is the number of tasks a seed statement inserts: big enough that
// statement overhead vanishes, small enough to bound the sorter's memory.
const seedBatch = 250_000

// Generate fills the firm of the database at path with a generated dataset:
// clients with users, workspaces (with the client's users and the firm's
// accountant users as members), folders, labels and tasks with mixed
// statuses, due dates, texts and subtasks, created over the two years before
// now. It is for evaluating and measuring acctapi at scale, on a database no
// server has open: it writes without a journal, and a failure leaves a
// database to throw away.
//
// The tasks' indexes and triggers are dropped for the load and made again
// after it (one sort per index instead of a million random inserts into
// each), and the counters the triggers keep are then counted once.
func Generate(ctx context.Context, path, firmID string, spec Spec, now time.Time) (*Seeded, error) {
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	conn, err := sql.Open("sqlite", db.FileURI(path)+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)"+
		"&_pragma=foreign_keys(1)&_pragma=cache_size(-65536)&_pragma=temp_store(MEMORY)&_pragma=threads(2)")
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	schema, err := dropTaskSchema(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	// The run's tag: base-36 digits of the time, as in the store's ids.
	tag := strconv.FormatInt(now.UnixNano(), 36)
	s := &seeder{tx: tx, firmID: firmID, spec: spec, now: now.Unix(), tag: tag[len(tag)-8:]}
	seeded, err := s.run(ctx)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("seed: remake %.60s: %w", stmt, err)
		}
	}
	if err := recountTasks(ctx, tx); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA journal_mode = WAL`); err != nil {
		return nil, err
	}
	return seeded, nil
}

// dropTaskSchema drops the indexes and triggers of the tasks table and
// returns the statements that make them again.
func dropTaskSchema(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT type, name, sql FROM sqlite_schema
		WHERE type IN ('index', 'trigger') AND tbl_name = 'tasks' AND sql IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	var drops, creates []string
	for rows.Next() {
		var kind, name, stmt string
		if err := rows.Scan(&kind, &name, &stmt); err != nil {
			rows.Close()
			return nil, err
		}
		drops = append(drops, "DROP "+strings.ToUpper(kind)+" "+name)
		creates = append(creates, stmt)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, stmt := range drops {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return nil, err
		}
	}
	return creates, nil
}

// recountTasks sets task_counts from the tasks, as the triggers would have
// kept them: per client, per workspace ('w:') and per parent task ('p:').
func recountTasks(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM task_counts;
		INSERT INTO task_counts (client_id, scope, n)
		SELECT client_id, '', count(*) FROM tasks GROUP BY client_id
		UNION ALL
		SELECT client_id, 'w:' || workspace_id, count(*) FROM tasks GROUP BY client_id, workspace_id
		UNION ALL
		SELECT client_id, 'p:' || parent_id, count(*) FROM tasks WHERE parent_id IS NOT NULL GROUP BY client_id, parent_id`)
	return err
}

// seeder generates the rows. Ids are cuid-shaped: "c", a tag of this run (so
// that two runs never collide), a digit naming the kind of record and a
// 15-digit number; they sort by creation as real ids do.
type seeder struct {
	tx     *sql.Tx
	firmID string
	spec   Spec
	now    int64
	tag    string
}

const (
	seedClientKind     = "1"
	seedWorkspaceKind  = "2"
	seedUserKind       = "3"
	seedTaskKind       = "4"
	seedFolderKind     = "5"
	seedLabelKind      = "6"
	seedTwoYears       = 2 * 365 * 86400
	seedWorkspaceNames = `'Annual accounts', 'Payroll', 'VAT returns', 'Bookkeeping', 'Tax return', 'Audit'`
)

func (s *seeder) id(kind string, n int) string { return fmt.Sprintf("c%s%s%015d", s.tag, kind, n) }

// idExpr is the SQL of s.id for a numeric expression.
func (s *seeder) idExpr(kind, n string) string {
	return fmt.Sprintf("printf('c%s%s%%015d', %s)", s.tag, kind, n)
}

func (s *seeder) exec(ctx context.Context, query string, args ...any) error {
	if _, err := s.tx.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("%.70s: %w", strings.Join(strings.Fields(query), " "), err)
	}
	return nil
}

func (s *seeder) run(ctx context.Context) (*Seeded, error) {
	seeded := &Seeded{}
	start := s.now - seedTwoYears
	firstName := []string{"Anna", "Jonas", "Leonie", "Mehmet", "Sofia", "Lukas", "Marie", "Paul", "Zoë", "Élodie"}
	lastName := []string{"Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Novák", "Kowalska"}
	business := []string{"Bäckerei", "Autohaus", "Praxis", "Ingenieurbüro", "Weinhandel", "Zimmerei", "Café", "Verlag"}
	suffix := []string{"GmbH", "KG", "e.K.", "GmbH & Co. KG", "UG"}

	users := 0
	for c := range s.spec.Clients {
		name := fmt.Sprintf("%s %s %s", business[c%len(business)], lastName[c/len(business)%len(lastName)], suffix[c%len(suffix)])
		if c >= len(business)*len(lastName) {
			name += fmt.Sprintf(" %d", c)
		}
		client := SeededClient{ID: s.id(seedClientKind, c), Name: name, Tasks: s.spec.OtherTasks}
		if c == 0 {
			client.Tasks = s.spec.Tasks
		}
		created := start + int64(c)
		if err := s.exec(ctx, `INSERT INTO clients (id, firm_id, name, slug, type, legal_name, address_line1,
				address_city, address_postal_code, address_country_code, created_at, updated_at)
				VALUES (?, ?, ?, ?, 'legal_person', ?, ?, 'Berlin', ?, 'DE', ?, ?)`,
			client.ID, s.firmID, name, db.Slugify(name), name, fmt.Sprintf("Hauptstraße %d", 1+c%200),
			fmt.Sprintf("%05d", 10115+c%4000), created, created); err != nil {
			return nil, err
		}
		for w := range s.spec.Workspaces {
			client.Workspaces = append(client.Workspaces, s.id(seedWorkspaceKind, c*s.spec.Workspaces+w))
		}
		for u := range s.spec.ClientUsers {
			first, last := firstName[(c+u)%len(firstName)], lastName[(c*7+u)%len(lastName)]
			role := "user"
			if u == 0 {
				role = "admin"
			}
			if err := s.exec(ctx, `INSERT INTO users (id, firm_id, client_id, email, first_name, last_name,
					client_role, invited_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				s.id(seedUserKind, users), s.firmID, client.ID, fmt.Sprintf("user%d@client%d.example.com", u, c),
				first, last, role, created, created, created); err != nil {
				return nil, err
			}
			users++
		}
		seeded.Clients = append(seeded.Clients, client)
	}
	for a := range s.spec.AccountantUsers {
		role := "user"
		if a == 0 {
			role = "admin"
		}
		if err := s.exec(ctx, `INSERT INTO users (id, firm_id, email, first_name, last_name, role_id,
				invited_at, created_at, updated_at)
				SELECT ?, ?, ?, ?, ?, id, ?, ?, ? FROM roles WHERE firm_id = ? AND name = ?`,
			s.id(seedUserKind, users+a), s.firmID, fmt.Sprintf("accountant%d@firm.example.com", a),
			firstName[a%len(firstName)], lastName[(a+3)%len(lastName)], start, start, start, s.firmID, role); err != nil {
			return nil, err
		}
	}
	if err := s.workspaces(ctx, start); err != nil {
		return nil, err
	}
	if err := s.tasks(ctx, start); err != nil {
		return nil, err
	}
	if err := s.files(ctx, start); err != nil {
		return nil, err
	}
	return seeded, nil
}

// workspaces makes every client's workspaces with three folders (one nested)
// and three labels each, and makes the client's users and the firm's
// accountant users members of the client's first workspace.
func (s *seeder) workspaces(ctx context.Context, start int64) error {
	w := s.spec.Workspaces
	series := func(count int) string {
		return fmt.Sprintf(`WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k + 1 < %d) `, count)
	}
	client := s.idExpr(seedClientKind, fmt.Sprintf("k / %d", w))
	workspace := s.idExpr(seedWorkspaceKind, "k")
	statements := []string{
		`INSERT INTO workspaces (id, client_id, name, created_at, updated_at) ` + series(s.spec.Clients*w) +
			`SELECT ` + workspace + `, ` + client + `,
				json_extract(json_array(` + seedWorkspaceNames + `), '$[' || (k % 6) || ']') || ' ' || (2026 - k % ` + fmt.Sprint(w) + ` / 6),
				?1 + k, ?1 + k FROM k`,
		`INSERT INTO folders (id, client_id, workspace_id, parent_id, name, created_at, updated_at) ` + series(s.spec.Clients*w*3) +
			`SELECT ` + s.idExpr(seedFolderKind, "k") + `, ` + s.idExpr(seedClientKind, fmt.Sprintf("k / 3 / %d", w)) + `, ` +
			s.idExpr(seedWorkspaceKind, "k / 3") + `,
				CASE k % 3 WHEN 2 THEN ` + s.idExpr(seedFolderKind, "k - 1") + ` END,
				json_extract(json_array('Belege', 'Verträge', 'Rechnungen 2026'), '$[' || (k % 3) || ']'),
				?1 + k, ?1 + k FROM k`,
		`INSERT INTO labels (id, client_id, workspace_id, name, created_at, updated_at) ` + series(s.spec.Clients*w*3) +
			`SELECT ` + s.idExpr(seedLabelKind, "k") + `, ` + s.idExpr(seedClientKind, fmt.Sprintf("k / 3 / %d", w)) + `, ` +
			s.idExpr(seedWorkspaceKind, "k / 3") + `,
				json_extract(json_array('urgent', 'scanned', 'signed'), '$[' || (k % 3) || ']'),
				?1 + k, ?1 + k FROM k`,
	}
	for _, stmt := range statements {
		if err := s.exec(ctx, stmt, start); err != nil {
			return err
		}
	}
	for c := range s.spec.Clients {
		if err := s.exec(ctx, `INSERT INTO workspace_members (workspace_id, user_id, created_at, updated_at)
				SELECT ?1, id, ?2, ?2 FROM users WHERE client_id = ?3 OR (firm_id = ?4 AND client_id IS NULL)`,
			s.id(seedWorkspaceKind, c*w), start, s.id(seedClientKind, c), s.firmID); err != nil {
			return err
		}
	}
	return nil
}

// tasks inserts every client's tasks in batches, numbered n overall and l
// within the client. A task's workspace is the first for 60% (l % 10 < 6),
// else one of the others by l / 10; a task l is in the workspace of
// l - 10 * (workspaces - 1) * j, which is how 20% of them get a parent made
// before them. h1..h4 are hashes of n that spread statuses, titles, texts,
// due dates and creators.
func (s *seeder) tasks(ctx context.Context, start int64) error {
	w := s.spec.Workspaces
	step := 10 * max(w-1, 1)
	total := s.spec.Tasks + (s.spec.Clients-1)*s.spec.OtherTasks
	first, other := s.spec.Tasks, max(s.spec.OtherTasks, 1)
	// A third of the tasks were made by a user of the client, the rest
	// through the API.
	creator := "NULL, 'API'"
	if s.spec.ClientUsers > 0 {
		creator = fmt.Sprintf("CASE WHEN h2 %% 3 = 0 THEN %s END, CASE WHEN h2 %% 3 = 0 THEN 'USER' ELSE 'API' END",
			s.idExpr(seedUserKind, fmt.Sprintf("c * %d + h1 %% %d", s.spec.ClientUsers, s.spec.ClientUsers)))
	}
	query := fmt.Sprintf(`INSERT INTO tasks (id, client_id, workspace_id, parent_id, title, text, status, due_date,
			created_by_id, actor_type, destination_folder_id, created_at, updated_at)
		WITH RECURSIVE seq(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?2),
		t AS (SELECT n,
			CASE WHEN n < %[1]d THEN 0 ELSE 1 + (n - %[1]d) / %[2]d END AS c,
			CASE WHEN n < %[1]d THEN n ELSE (n - %[1]d) %% %[2]d END AS l,
			CASE WHEN n < %[1]d THEN %[1]d ELSE %[2]d END AS size,
			(n * 2654435761 + 12345) %% 1000003 AS h1,
			(n * 2246822519 + 777) %% 999983 AS h2,
			(n * 3266489917 + 4242) %% 1000033 AS h3,
			(n * 668265263 + 99) %% 999979 AS h4
			FROM seq),
		p AS (SELECT *, c * %[3]d + CASE WHEN %[3]d = 1 OR l %% 10 < 6 THEN 0 ELSE 1 + (l / 10) %% (%[3]d - 1) END AS w,
			?3 + l * %[4]d / size AS created FROM t)
		SELECT %[5]s, %[6]s, %[7]s,
			CASE WHEN h1 %% 5 = 0 AND l >= %[8]d * (1 + h2 %% 5) THEN %[9]s END,
			json_extract(json_array('Upload', 'Review', 'Sign', 'Send', 'Check', 'Book', 'Answer', 'Prepare'), '$[' || (h2 %% 8) || ']')
				|| ' ' ||
				json_extract(json_array('bank statements', 'payroll', 'VAT return', 'invoices', 'receipts', 'annual accounts',
					'fixed assets', 'travel expenses', 'Grundsteuer', 'Lohnsteuer'), '$[' || (h3 %% 10) || ']')
				|| ' ' || (1 + h4 %% 12) || '/' || (2024 + h1 %% 3),
			CASE WHEN h3 %% 10 < 3 THEN 'Please use the folder of the month. Questions: reply here.' END,
			h4 %% 5,
			CASE WHEN h3 %% 10 >= 3 THEN created + 86400 * (1 + h1 %% 90) END,
			%[10]s,
			CASE WHEN h4 %% 7 = 0 THEN %[11]s END,
			created,
			min(?4, created + h4 %% (30 * 86400))
		FROM p`,
		first, other, w, seedTwoYears,
		s.idExpr(seedTaskKind, "n"), s.idExpr(seedClientKind, "c"), s.idExpr(seedWorkspaceKind, "w"),
		step, s.idExpr(seedTaskKind, fmt.Sprintf("n - %d * (1 + h2 %% 5)", step)),
		creator, s.idExpr(seedFolderKind, "w * 3 + h1 % 3"))
	for from := 0; from < total; from += seedBatch {
		if err := s.exec(ctx, query, from, min(from+seedBatch, total), start, s.now); err != nil {
			return err
		}
	}
	return nil
}
