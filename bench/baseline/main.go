// Command baseline is the bare server bench/run measures acctapi against:
// httprouter and modernc.org/sqlite through database/sql, over the database
// acctapi seeded, with no authentication, validation, rate limits, request
// log or webhook events. It answers the two routes the ratio is taken on,
// GET /v1/tasks (a keyset page in createdAt order, newest first, with its
// total) and POST /v1/tasks, with the same JSON as acctapi, so that the
// ratio shows what acctapi's own layers cost over the driver and router.
//
// bench/run -baseline builds and starts it; it is not part of acctapi.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/julienschmidt/httprouter"
	_ "modernc.org/sqlite"
)

const columns = `id, workspace_id, parent_id, title, text, status, due_date, created_by_id, actor_type,
	destination_folder_id, created_at, updated_at`

// The plainest fast SQL for each answer: the page walks the client's
// createdAt index from the cursor's key, and the total is the one counter
// row acctapi keeps for the client.
const (
	firstPage = `SELECT ` + columns + ` FROM tasks WHERE client_id = ?
		ORDER BY created_at DESC, id DESC LIMIT ?`
	nextPage = `SELECT ` + columns + ` FROM tasks WHERE client_id = ?
		AND (created_at, id) <= (SELECT created_at, id FROM tasks WHERE client_id = ? AND id = ?)
		ORDER BY created_at DESC, id DESC LIMIT ?`
	total      = `SELECT n FROM task_counts WHERE client_id = ? AND scope = ''`
	insertTask = `INSERT INTO tasks (id, client_id, workspace_id, title, status, due_date, actor_type, created_at, updated_at)
		VALUES (?, ?, ?, ?, 0, ?, 'API', ?, ?)`
)

var statuses = []string{"OPEN", "IN_PROGRESS", "IN_REVIEW", "ACCEPTED", "DECLINED"}

type task struct {
	ID                  string  `json:"id"`
	Title               string  `json:"title"`
	Text                *string `json:"text"`
	Status              string  `json:"status"`
	DueDate             *string `json:"dueDate"`
	WorkspaceID         string  `json:"workspaceId"`
	CreatedByID         *string `json:"createdById"`
	ActorType           string  `json:"actorType"`
	ParentID            *string `json:"parentId"`
	DestinationFolderID *string `json:"destinationFolderId"`
	CreatedAt           string  `json:"createdAt"`
	UpdatedAt           string  `json:"updatedAt"`
}

type page struct {
	Data       []task `json:"data"`
	Pagination struct {
		Limit          int     `json:"limit"`
		Total          int     `json:"total"`
		NextCursor     *string `json:"nextCursor"`
		PreviousCursor *string `json:"previousCursor"`
	} `json:"pagination"`
}

type server struct {
	read, write *sql.DB
	list, next  *sql.Stmt
	count       *sql.Stmt
	insert      *sql.Stmt
}

func main() {
	dataDir := flag.String("data-dir", "", "data dir of a database acctapi seeded")
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	synchronous := flag.String("synchronous", "FULL", "SQLite synchronous pragma")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("-data-dir is required")
	}
	s, err := open(filepath.Join(*dataDir, "acctapi.db"), *synchronous)
	if err != nil {
		log.Fatal(err)
	}
	router := httprouter.New()
	router.GET("/v1/health", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.WriteHeader(http.StatusOK)
	})
	router.GET("/v1/tasks", s.listTasks)
	router.POST("/v1/tasks", s.createTask)
	srv := &http.Server{Addr: *addr, Handler: router}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	s.read.Close()
	s.write.Close()
}

// open makes a read pool of the size acctapi uses and one write connection,
// with the pragmas acctapi sets.
func open(path, synchronous string) (*server, error) {
	uri := func(readOnly bool) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous("+synchronous+")")
		if readOnly {
			q.Add("_pragma", "query_only(1)")
		}
		return "file:" + path + "?" + q.Encode()
	}
	write, err := sql.Open("sqlite", uri(false))
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	read, err := sql.Open("sqlite", uri(true))
	if err != nil {
		return nil, err
	}
	readers := max(4, 2*runtime.NumCPU())
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	s := &server{read: read, write: write}
	for _, p := range []struct {
		db    *sql.DB
		stmt  **sql.Stmt
		query string
	}{{read, &s.list, firstPage}, {read, &s.next, nextPage}, {read, &s.count, total}, {write, &s.insert, insertTask}} {
		if *p.stmt, err = p.db.Prepare(p.query); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	return s, nil
}

func (s *server) listTasks(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	ctx := r.Context()
	client := r.Header.Get("x-client-id")
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil {
		limit = 20
	}
	var rows *sql.Rows
	if cursor := r.URL.Query().Get("cursor"); cursor != "" {
		rows, err = s.next.QueryContext(ctx, client, client, cursor, limit+1)
	} else {
		rows, err = s.list.QueryContext(ctx, client, limit+1)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	p := page{Data: make([]task, 0, limit)}
	p.Pagination.Limit = limit
	for rows.Next() {
		var t task
		var status int
		var due sql.NullInt64
		var created, updated int64
		if err := rows.Scan(&t.ID, &t.WorkspaceID, &t.ParentID, &t.Title, &t.Text, &status, &due,
			&t.CreatedByID, &t.ActorType, &t.DestinationFolderID, &created, &updated); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if len(p.Data) == limit {
			p.Pagination.NextCursor = &t.ID
			break
		}
		t.Status = statuses[status]
		if due.Valid {
			d := timestamp(due.Int64)
			t.DueDate = &d
		}
		t.CreatedAt, t.UpdatedAt = timestamp(created), timestamp(updated)
		p.Data = append(p.Data, t)
	}
	if err := rows.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rows.Close()
	if err := s.count.QueryRowContext(ctx, client).Scan(&p.Pagination.Total); err != nil && !errors.Is(err, sql.ErrNoRows) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *server) createTask(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var in struct {
		Title       string     `json:"title"`
		WorkspaceID string     `json:"workspaceId"`
		DueDate     *time.Time `json:"dueDate"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now().Unix()
	t := task{ID: newID(), Title: in.Title, Status: statuses[0], WorkspaceID: in.WorkspaceID, ActorType: "API",
		CreatedAt: timestamp(now), UpdatedAt: timestamp(now)}
	var due *int64
	if in.DueDate != nil {
		d := in.DueDate.Unix()
		due = &d
		ts := timestamp(d)
		t.DueDate = &ts
	}
	if _, err := s.insert.ExecContext(r.Context(), t.ID, r.Header.Get("x-client-id"), t.WorkspaceID, t.Title,
		due, now, now); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusCreated, t)
}

func timestamp(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// newID returns an id in acctapi's form, so that new ids land at the same
// end of the primary key: "c", 8 base-36 digits of the millisecond clock and
// 16 random ones.
func newID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 25)
	rand.Read(b[9:])
	for i := 9; i < len(b); i++ {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	ts := strconv.FormatInt(time.Now().UnixMilli(), 36)
	copy(b[1:9], fmt.Sprintf("%08s", ts[max(0, len(ts)-8):]))
	b[0] = 'c'
	return string(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
