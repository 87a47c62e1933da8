package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"acctapi/db"
)

// The crash test's switches. The default run is short; the nightly run sets
// ACCTAPI_CRASH_ROUNDS=20 or more. A failing run logs its seed, which
// ACCTAPI_CRASH_SEED replays (the writes each writer sends and the moment of
// each kill; what the kill interrupts still depends on timing).
const (
	crashRoundsEnv = "ACCTAPI_CRASH_ROUNDS"
	crashSeedEnv   = "ACCTAPI_CRASH_SEED"
	crashWriters   = 6
	// crashCollectUploads bounds a writer's uploads through its collect
	// link in a round, under the link's 120 requests a minute (each round
	// starts a new server, and with it a new minute).
	crashCollectUploads = 100
)

// crashSyncs are the synchronous settings the rounds take turns with: a kill
// is no power loss, so NORMAL must lose nothing either.
var crashSyncs = []string{"FULL", "NORMAL"}

// crashTask is a task as the test expects to find it; == compares two.
type crashTask struct {
	Workspace, Parent, Title, Status string
	Text                             string
	HasText                          bool
	Due                              string // RFC 3339 in UTC, "" for none
}

// crashTaskJSON is a task as the API writes it.
type crashTaskJSON struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspaceId"`
	ParentID    *string    `json:"parentId"`
	Title       string     `json:"title"`
	Text        *string    `json:"text"`
	Status      string     `json:"status"`
	DueDate     *time.Time `json:"dueDate"`
}

func (j *crashTaskJSON) task() crashTask {
	t := crashTask{Workspace: j.WorkspaceID, Title: j.Title, Status: j.Status}
	if j.ParentID != nil {
		t.Parent = *j.ParentID
	}
	if j.Text != nil {
		t.Text, t.HasText = *j.Text, true
	}
	if j.DueDate != nil {
		t.Due = j.DueDate.UTC().Format(time.RFC3339)
	}
	return t
}

// crashFile is an uploaded file as the test expects to find it.
type crashFile struct {
	Name string
	Size int64
	Sum  [sha256.Size]byte
	// Task is the task the file was uploaded to, "" for none; the file
	// loses the link when the task is deleted.
	Task string
}

// crashFileJSON is a file record as the API writes it.
type crashFileJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Size        int64   `json:"size"`
	WorkspaceID string  `json:"workspaceId"`
	TaskID      *string `json:"taskId"`
}

// crashOp is one write a writer sends.
type crashOp struct {
	kind string // create, patch, delete, upload, or collect (an upload through a collect link)
	id   string // the task patched or deleted
	// task is the task a create sends, or the task as a patch leaves it.
	task        crashTask
	file        crashFile
	body        []byte
	contentType string
	// key is the Idempotency-Key of a create, patch or upload.
	key string
	// link is the collect link an upload through one goes to.
	link crashLink
}

// crashState is what the server acknowledged, so what it must hold: it
// carries over from round to round.
type crashState struct {
	tasks map[string]crashTask
	// owner is the writer whose tasks a task is among; the tasks found at
	// the start have none.
	owner      map[string]int
	files      map[string]crashFile
	workspaces []string
	// The collect the writers upload to, each through a link (session) of
	// its own to an item of its own, and the files each item received, in
	// the order they came.
	collectID string
	links     []crashLink
	received  map[string][]string
}

// crashLink is a writer's collect link and the item it uploads to.
type crashLink struct{ token, item string }

// subtree returns the task and its subtasks, which a delete removes together.
func subtree(tasks map[string]crashTask, id string) []string {
	gone := []string{id}
	for found := true; found; {
		found = false
		for child, t := range tasks {
			if t.Parent != "" && slices.Contains(gone, t.Parent) && !slices.Contains(gone, child) {
				gone, found = append(gone, child), true
			}
		}
	}
	return gone
}

// crashAPI calls a running server with the test's key, for the demo client.
type crashAPI struct {
	base, key, clientID string
	http                *http.Client
}

// send returns the status and body of a full answer, or the error that kept
// the request from getting one.
func (a *crashAPI) send(method, path, contentType string, body []byte) (int, []byte, error) {
	status, _, data, err := a.sendKeyed(method, path, contentType, "", body)
	return status, data, err
}

// sendKeyed is send with an Idempotency-Key when key is not "", and the
// answer's header.
func (a *crashAPI) sendKeyed(method, path, contentType, key string, body []byte) (int, http.Header, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, a.base+path, r)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("x-client-id", a.clientID)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return res.StatusCode, res.Header, data, nil
}

// must sends a request (a JSON body when body is not nil), requires the
// status and decodes the answer into out when it is not nil.
func (a *crashAPI) must(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	var raw []byte
	contentType := ""
	if body != nil {
		raw, _ = json.Marshal(body)
		contentType = "application/json"
	}
	status, answer, err := a.send(method, path, contentType, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, status, answer, want)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, answer)
		}
	}
}

// taskPage is a page of GET /v1/tasks.
type taskPage struct {
	Data       []crashTaskJSON `json:"data"`
	Pagination struct {
		Total      int     `json:"total"`
		NextCursor *string `json:"nextCursor"`
	} `json:"pagination"`
}

// allTasks lists every task of the client, page by page, and returns them
// with the total the first page reports.
func (a *crashAPI) allTasks(t *testing.T) (map[string]crashTask, int) {
	t.Helper()
	tasks := map[string]crashTask{}
	total := -1
	cursor := ""
	for {
		var page taskPage
		a.must(t, http.MethodGet, "/tasks?limit=100"+cursor, nil, http.StatusOK, &page)
		if total < 0 {
			total = page.Pagination.Total
		}
		for _, j := range page.Data {
			if _, dup := tasks[j.ID]; dup {
				t.Errorf("task %s is listed twice", j.ID)
			}
			tasks[j.ID] = j.task()
		}
		if page.Pagination.NextCursor == nil {
			return tasks, total
		}
		cursor = "&cursor=" + *page.Pagination.NextCursor
	}
}

// taskTotal is the total GET /v1/tasks reports for the filter.
func (a *crashAPI) taskTotal(t *testing.T, filter, value string) int {
	t.Helper()
	var page taskPage
	a.must(t, http.MethodGet, "/tasks?limit=1&"+filter+"="+value, nil, http.StatusOK, &page)
	return page.Pagination.Total
}

// download fetches the file's bytes through a signed link and returns their
// size and SHA-256.
func (a *crashAPI) download(t *testing.T, id string) (int64, [sha256.Size]byte) {
	t.Helper()
	var sum [sha256.Size]byte
	res, err := a.http.Get(flLink(t, a.base, a.key, a.clientID, id))
	if err != nil {
		t.Fatalf("download file %s: %v", id, err)
	}
	defer res.Body.Close()
	hash := sha256.New()
	n, err := io.Copy(hash, res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("download file %s: %d after %d bytes (%v), want 200", id, res.StatusCode, n, err)
		return n, sum
	}
	hash.Sum(sum[:0])
	return n, sum
}

// crashServer starts acctapi serve on the data dir and waits until it listens.
func crashServer(t *testing.T, bin string, store *testStore, dir, synchronous, key, clientID string) (*process, *crashAPI) {
	t.Helper()
	p := startProcessEnv(t, store.env(), bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir,
		"--synchronous", synchronous, "--log-format", "json"}, store.args()...)...)
	p.waitStderr(t, 60*time.Second, "the listening log line", func(s string) bool { return listeningAddr(s) != "" })
	api := &crashAPI{base: "http://" + listeningAddr(p.stderr.String()) + "/v1", key: key, clientID: clientID,
		http: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: crashWriters}}}
	t.Cleanup(api.http.CloseIdleConnections)
	return p, api
}

// crashWriter sends writes to its own tasks (and uploads) one at a time until
// one gets no answer, keeping what the server acknowledged.
type crashWriter struct {
	n, round   int
	rng        *rand.Rand
	api        *crashAPI
	workspaces []string
	seq        int

	own   map[string]crashTask // the writer's tasks as acknowledged
	files map[string]crashFile // acknowledged uploads
	gone  []string             // tasks acknowledged deleted, with their subtasks
	acked map[string]int       // acknowledged writes by kind
	bytes int64                // bytes of acknowledged uploads
	// pending is the write that got no answer: it may or may not have
	// happened, unless refused says it never reached the server.
	pending *crashOp
	refused bool
	// pendingApplied says the checks after the restart found pending applied.
	pendingApplied bool
	// link is the writer's collect link; collected lists its acknowledged
	// uploads through it, in order.
	link      crashLink
	collected []string
}

func (w *crashWriter) name() string {
	w.seq++
	return fmt.Sprintf("crash r%d w%d n%d", w.round, w.n, w.seq)
}

func (w *crashWriter) due() string {
	if w.rng.IntN(4) == 0 {
		return ""
	}
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(w.rng.Int64N(3*365*24*3600)) * time.Second).Format(time.RFC3339)
}

func (w *crashWriter) text() string {
	return strings.Repeat("notes of "+w.name()+". ", 1+w.rng.IntN(40))
}

// next draws the writer's next write.
func (w *crashWriter) next() *crashOp {
	ids := make([]string, 0, len(w.own))
	for id := range w.own {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a seed replays the same writes
	pick := func() string { return ids[w.rng.IntN(len(ids))] }
	r := w.rng.IntN(100)
	switch {
	case len(ids) == 0 || r < 35:
		task := crashTask{Workspace: w.workspaces[w.rng.IntN(len(w.workspaces))], Title: w.name(),
			Status: "OPEN", Text: w.text(), HasText: true, Due: w.due()}
		if len(ids) > 0 && w.rng.IntN(4) == 0 {
			task.Parent = pick()
			task.Workspace = w.own[task.Parent].Workspace
		}
		body := map[string]any{"title": task.Title, "workspaceId": task.Workspace, "text": task.Text}
		if task.Parent != "" {
			body["parentId"] = task.Parent
		}
		if task.Due != "" {
			body["dueDate"] = task.Due
		}
		raw, _ := json.Marshal(body)
		return &crashOp{kind: "create", task: task, body: raw, contentType: "application/json"}
	case r < 60:
		id := pick()
		task := w.own[id]
		body := map[string]any{}
		for len(body) == 0 {
			if w.rng.IntN(2) == 0 {
				task.Title = w.name()
				body["title"] = task.Title
			}
			if w.rng.IntN(2) == 0 {
				task.Text, task.HasText = w.text(), true
				body["text"] = task.Text
			}
			if w.rng.IntN(2) == 0 {
				task.Status = []string{"OPEN", "IN_PROGRESS", "IN_REVIEW", "ACCEPTED", "DECLINED"}[w.rng.IntN(5)]
				body["status"] = task.Status
			}
			if w.rng.IntN(2) == 0 {
				task.Due = w.due()
				body["dueDate"] = nil
				if task.Due != "" {
					body["dueDate"] = task.Due
				}
			}
		}
		raw, _ := json.Marshal(body)
		return &crashOp{kind: "patch", id: id, task: task, body: raw, contentType: "application/json"}
	case r < 72:
		return &crashOp{kind: "delete", id: pick()}
	case r < 86 || len(w.collected) >= crashCollectUploads:
		return w.upload(ids)
	default:
		return w.upload(nil)
	}
}

// upload draws an upload of random bytes: mostly small, some up to 4 MiB,
// some linked to one of the writer's tasks. With ids nil it is an upload
// through the writer's collect link, which names no workspace or task.
func (w *crashWriter) upload(ids []string) *crashOp {
	var size int
	switch r := w.rng.IntN(10); {
	case r < 6:
		size = w.rng.IntN(64 << 10)
	case r < 9:
		size = 64<<10 + w.rng.IntN(960<<10)
	default:
		size = 1<<20 + w.rng.IntN(3<<20)
	}
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], w.rng.Uint64())
	content := make([]byte, size)
	rand.NewChaCha8(seed).Read(content)
	f := crashFile{Name: strings.ReplaceAll(w.name(), " ", "-") + ".bin", Size: int64(size), Sum: sha256.Sum256(content)}
	workspace := w.workspaces[w.rng.IntN(len(w.workspaces))]
	if len(ids) > 0 && w.rng.IntN(5) < 2 {
		f.Task = ids[w.rng.IntN(len(ids))]
		workspace = w.own[f.Task].Workspace
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	kind := "collect"
	if ids != nil {
		kind = "upload"
		mw.WriteField("workspaceId", workspace)
		if f.Task != "" {
			mw.WriteField("taskId", f.Task)
		}
	}
	part, _ := mw.CreateFormFile("file", f.Name)
	part.Write(content)
	mw.Close()
	return &crashOp{kind: kind, file: f, body: body.Bytes(), contentType: mw.FormDataContentType()}
}

// route is the method, path and success status of the write.
func (op *crashOp) route() (method, path string, status int) {
	switch op.kind {
	case "patch":
		return http.MethodPatch, "/tasks/" + op.id, http.StatusOK
	case "delete":
		return http.MethodDelete, "/tasks/" + op.id, http.StatusOK
	case "upload":
		return http.MethodPost, "/files", http.StatusCreated
	case "collect":
		return http.MethodPost, "/collect-sessions/" + op.link.token + "/items/" + op.link.item + "/files", http.StatusCreated
	}
	return http.MethodPost, "/tasks", http.StatusCreated
}

// run sends writes until one gets no answer (the kill) or a wrong one.
func (w *crashWriter) run(t *testing.T) {
	for {
		op := w.next()
		op.link = w.link
		method, path, want := op.route()
		// The public collect routes take no Idempotency-Key: a link's
		// upload is retried by the person, who sees what arrived.
		if op.kind != "delete" && op.kind != "collect" {
			op.key = strings.ReplaceAll(w.name(), " ", "-")
		}
		status, _, answer, err := w.api.sendKeyed(method, path, op.contentType, op.key, op.body)
		if err != nil {
			// net/http sends a request with an Idempotency-Key again on a
			// new connection when the first breaks, so a refused
			// connection only proves that a write without a key never
			// reached the server.
			w.pending, w.refused = op, op.key == "" && errors.Is(err, syscall.ECONNREFUSED)
			return
		}
		if status != want {
			t.Errorf("writer %d: %s %s: %d %s, want %d", w.n, method, path, status, answer, want)
			return
		}
		if !w.acknowledge(t, op, answer) {
			return
		}
	}
}

// acknowledge records an answered write after checking that the answer
// holds what was sent.
func (w *crashWriter) acknowledge(t *testing.T, op *crashOp, answer []byte) bool {
	w.acked[op.kind]++
	if op.kind == "upload" || op.kind == "collect" {
		var f crashFileJSON
		if err := json.Unmarshal(answer, &f); err != nil || f.Size != op.file.Size || f.Name != op.file.Name ||
			(op.file.Task != "") != (f.TaskID != nil) {
			t.Errorf("writer %d: the %s of %s (%d bytes, task %q) answered %s (%v)", w.n, op.kind, op.file.Name, op.file.Size, op.file.Task, answer, err)
			return false
		}
		w.files[f.ID] = op.file
		w.bytes += op.file.Size
		if op.kind == "collect" {
			w.collected = append(w.collected, f.ID)
		}
		return true
	}
	var j crashTaskJSON
	if err := json.Unmarshal(answer, &j); err != nil {
		t.Errorf("writer %d: %s answered %s: %v", w.n, op.kind, answer, err)
		return false
	}
	got := j.task()
	switch op.kind {
	case "create":
		if got != op.task {
			t.Errorf("writer %d: created %+v, want %+v", w.n, got, op.task)
			return false
		}
		w.own[j.ID] = got
	case "patch":
		if got != op.task || j.ID != op.id {
			t.Errorf("writer %d: patched %s to %+v, want %+v", w.n, j.ID, got, op.task)
			return false
		}
		w.own[j.ID] = got
	case "delete":
		for _, id := range subtree(w.own, op.id) {
			delete(w.own, id)
			w.gone = append(w.gone, id)
		}
	}
	return true
}

// crashStats counts a round's writes and checks.
type crashStats struct {
	acked, inFlight, applied, refused int
	// Retries of the writes in flight: answers replayed, answers lost
	// (409), and writes run by the retry because the first never landed.
	replayed, lost, rerun int
	ackedBy               map[string]int
	uploaded, downloaded  int64
	tasks, files          int
}

// TestCrashSafety holds acctapi to its promise that nothing acknowledged is
// lost: rounds of concurrent writes against a real server, each ended by
// SIGKILL at a random moment and checked after a restart on the same data
// dir, with the expectations carried from round to round. Uploads go both
// to POST /v1/files and through collect links, each writer's to an item of
// its own, which must hold every acknowledged one and be RECEIVED.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	rounds, seed := 3, rand.Uint64()
	if v := os.Getenv(crashRoundsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a number of rounds, at least 1", crashRoundsEnv, v)
		}
		rounds = n
	}
	if v := os.Getenv(crashSeedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", crashSeedEnv, v)
		}
		seed = s
	}
	t.Logf("%d rounds, seed %d (replay: %s=%d %s=%d)", rounds, seed, crashSeedEnv, seed, crashRoundsEnv, rounds)
	bin := buildBinary(t, t.TempDir())
	forEachStore(t, func(t *testing.T, store *testStore) {
		rng := rand.New(rand.NewPCG(seed, 0))
		d := newFLDemoIn(t, store)
		// A key of its own, with room for the test's requests under the rate limit.
		key := parseKeyJSON(t, mustExecute(t, "keys", "create", "--json", "--name", "crash test",
			"--rate-limit-max", "1000000000", "--data-dir", d.dir)).str("key")
		state := &crashState{owner: map[string]int{}, received: map[string][]string{}, files: map[string]crashFile{}}
		for id, content := range d.contents(t) {
			name := flRawStrings(t, d.dbPath, `SELECT name FROM files WHERE id = ?`, id)[0]
			state.files[id] = crashFile{Name: name, Size: int64(len(content)), Sum: sha256.Sum256(content)}
		}

		var total crashStats
		for round := 1; round <= rounds; round++ {
			synchronous := crashSyncs[(round-1)%len(crashSyncs)]
			p, api := crashServer(t, bin, d.store, d.dir, synchronous, key, d.clientID)
			if round == 1 {
				// A second workspace, so that writes land in two; the tasks
				// already there are expected to stay as they are.
				var ws struct {
					ID string `json:"id"`
				}
				api.must(t, http.MethodPost, "/workspaces", map[string]string{"name": "crash test"}, http.StatusCreated, &ws)
				state.workspaces = []string{d.workspaceID, ws.ID}
				state.tasks, _ = api.allTasks(t)
				crashCollect(t, api, state)
			}

			writers := make([]*crashWriter, crashWriters)
			var wg sync.WaitGroup
			for i := range writers {
				w := &crashWriter{n: i, round: round, rng: rand.New(rand.NewPCG(seed, uint64(round)<<8|uint64(i))), api: api,
					workspaces: state.workspaces, own: map[string]crashTask{}, files: map[string]crashFile{}, acked: map[string]int{},
					link: state.links[i]}
				for id, owner := range state.owner {
					if owner == i {
						w.own[id] = state.tasks[id]
					}
				}
				writers[i] = w
				wg.Go(func() { w.run(t) })
			}
			// The kill lands anywhere in the load: in commits, uploads, fsyncs.
			delay := 100*time.Millisecond + time.Duration(rng.Int64N(int64(1400*time.Millisecond)))
			<-time.After(delay)
			if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-p.exited
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}

			stats := crashStats{ackedBy: map[string]int{}}
			var gone []string
			for _, w := range writers {
				for id, owner := range state.owner {
					if owner == w.n {
						delete(state.tasks, id)
						delete(state.owner, id)
					}
				}
				for id, task := range w.own {
					state.tasks[id], state.owner[id] = task, w.n
				}
				for id, f := range w.files {
					state.files[id] = f
				}
				state.received[w.link.item] = append(state.received[w.link.item], w.collected...)
				gone = append(gone, w.gone...)
				for kind, n := range w.acked {
					stats.ackedBy[kind] += n
					stats.acked += n
				}
				stats.uploaded += w.bytes
				switch {
				case w.pending == nil:
				case w.refused:
					stats.refused++
				default:
					stats.inFlight++
				}
			}

			p, api = crashServer(t, bin, d.store, d.dir, synchronous, key, d.clientID)
			crashCheckTasks(t, api, state, writers, gone, &stats)
			crashCheckFiles(t, d, api, state, writers, &stats)
			crashRetryPending(t, d, api, state, writers, &stats)
			crashCheckCollect(t, api, state)

			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				t.Fatalf("the server did not stop within 30 s of SIGTERM")
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("the server exited %d after SIGTERM; stderr:\n%s", code, p.stderr.String())
			}
			store, err := db.Open(d.dbPath, db.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Check(context.Background()); err != nil {
				t.Errorf("round %d: %v", round, err)
			}
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}

			t.Logf("round %d/%d (synchronous %s), killed after %v: %d writes acknowledged (%d creates, %d patches, %d deletes, %d uploads and %d through collect links, of %.1f MiB); "+
				"%d in flight at the kill, %d of them applied, %d refused; their retries: %d replayed, %d answered lost, %d run; checked %d tasks and %d files (%.1f MiB downloaded)",
				round, rounds, synchronous, delay.Round(time.Millisecond), stats.acked, stats.ackedBy["create"], stats.ackedBy["patch"],
				stats.ackedBy["delete"], stats.ackedBy["upload"], stats.ackedBy["collect"], float64(stats.uploaded)/(1<<20),
				stats.inFlight, stats.applied, stats.refused, stats.replayed, stats.lost, stats.rerun, stats.tasks, stats.files, float64(stats.downloaded)/(1<<20))
			if t.Failed() {
				t.Fatalf("round %d lost or damaged acknowledged writes; replay with %s=%d", round, crashSeedEnv, seed)
			}
			total.acked += stats.acked
			total.inFlight += stats.inFlight
			total.applied += stats.applied
		}
		t.Logf("%d rounds: %d acknowledged writes, all found whole; %d writes in flight at a kill, %d of them applied whole",
			rounds, total.acked, total.inFlight, total.applied)
	})
}

// crashCheckTasks checks the tasks of a restarted server against what was
// acknowledged, resolves each task write in flight at the kill to applied
// whole or not at all, and updates state to what it finds.
func crashCheckTasks(t *testing.T, api *crashAPI, state *crashState, writers []*crashWriter, gone []string, stats *crashStats) {
	listed, total := api.allTasks(t)
	if total != len(listed) {
		t.Errorf("GET /v1/tasks reports a total of %d, but lists %d tasks", total, len(listed))
	}
	for _, w := range writers {
		op := w.pending
		if op == nil {
			continue
		}
		applied := false
		switch op.kind {
		case "create":
			for id, task := range listed {
				if _, known := state.tasks[id]; known || task.Title != op.task.Title {
					continue
				}
				if task != op.task {
					t.Errorf("the create in flight made %+v, want %+v", task, op.task)
				}
				if applied {
					t.Errorf("the create in flight of %q made two tasks", op.task.Title)
				}
				state.tasks[id], state.owner[id], applied = task, w.n, true
			}
		case "patch":
			switch task := listed[op.id]; task {
			case state.tasks[op.id]:
			case op.task:
				state.tasks[op.id], applied = op.task, true
			default:
				t.Errorf("the patch in flight left task %s as %+v, want %+v before it or %+v after it",
					op.id, task, state.tasks[op.id], op.task)
			}
		case "delete":
			if _, ok := listed[op.id]; !ok {
				for _, id := range subtree(state.tasks, op.id) {
					delete(state.tasks, id)
					delete(state.owner, id)
					gone = append(gone, id)
				}
				applied = true
			}
		}
		w.pendingApplied = applied
		if applied {
			stats.applied++
			if w.refused {
				t.Errorf("a %s the server refused the connection for was applied", op.kind)
			}
		}
	}

	for id, want := range state.tasks {
		got, ok := listed[id]
		switch {
		case !ok:
			t.Errorf("acknowledged task %s (%q) is lost", id, want.Title)
		case got != want:
			t.Errorf("task %s is %+v, want %+v as acknowledged", id, got, want)
		}
	}
	children := map[string]int{}
	inWorkspace := map[string]int{}
	for id, task := range listed {
		if _, ok := state.tasks[id]; !ok {
			t.Errorf("task %s (%q) was neither acknowledged nor in flight", id, task.Title)
		}
		if task.Parent != "" {
			children[task.Parent]++
		}
		inWorkspace[task.Workspace]++
	}
	for _, ws := range state.workspaces {
		if n := api.taskTotal(t, "workspaceId", ws); n != inWorkspace[ws] {
			t.Errorf("workspace %s: total %d, want the %d tasks listed", ws, n, inWorkspace[ws])
		}
	}
	for parent, n := range children {
		if got := api.taskTotal(t, "parentId", parent); got != n {
			t.Errorf("task %s: total of subtasks %d, want the %d listed", parent, got, n)
		}
	}
	for _, id := range gone {
		if status, body, err := api.send(http.MethodDelete, "/tasks/"+id, "", nil); err != nil || status != http.StatusNotFound {
			t.Errorf("DELETE deleted task %s again: %d %s (%v), want 404", id, status, body, err)
		}
	}
	stats.tasks = len(listed)
}

// crashCheckFiles checks the file records, the bytes in the file store and
// the downloads of a restarted server against the acknowledged uploads,
// resolves each upload in flight at the kill, and updates state to what it
// finds. It runs after crashCheckTasks, which settles the tasks files link to.
func crashCheckFiles(t *testing.T, d *flDemo, api *crashAPI, state *crashState, writers []*crashWriter, stats *crashStats) {
	var uploads []*crashWriter
	for _, w := range writers {
		if w.pending != nil && (w.pending.kind == "upload" || w.pending.kind == "collect") {
			uploads = append(uploads, w)
		}
	}
	recorded := flRawStrings(t, d.dbPath, `SELECT id FROM files`)
	want := map[string]bool{}
	for _, id := range recorded {
		want[flStorePath(id)] = true
		if _, ok := state.files[id]; ok {
			continue
		}
		var f crashFileJSON
		api.must(t, http.MethodGet, "/files/"+id, nil, http.StatusOK, &f)
		i := slices.IndexFunc(uploads, func(w *crashWriter) bool { return w.pending.file.Name == f.Name })
		if i < 0 {
			t.Errorf("file %s (%q) was neither acknowledged nor in flight", id, f.Name)
			continue
		}
		state.files[id] = uploads[i].pending.file
		if uploads[i].pending.kind == "collect" {
			// The last upload through the writer's link, after every
			// acknowledged one.
			state.received[uploads[i].link.item] = append(state.received[uploads[i].link.item], id)
		}
		uploads[i].pendingApplied = true
		stats.applied++
		if uploads[i].refused {
			t.Errorf("an upload the server refused the connection for was recorded")
		}
		uploads = slices.Delete(uploads, i, i+1)
	}
	// Start-up removed what a kill left unrecorded: the store holds the
	// bytes of the recorded files, nothing else.
	for _, path := range d.store.files(t, d.dir) {
		if !want[path] {
			t.Errorf("the file store holds %s, which no record names", path)
		}
		delete(want, path)
	}
	for path := range want {
		t.Errorf("the file store lacks %s, which a record names", path)
	}
	for id, want := range state.files {
		var f crashFileJSON
		status, body, err := api.send(http.MethodGet, "/files/"+id, "", nil)
		if err == nil && status == http.StatusOK {
			err = json.Unmarshal(body, &f)
		}
		if err != nil || status != http.StatusOK {
			t.Errorf("acknowledged file %s (%q) is lost: %d %s (%v)", id, want.Name, status, body, err)
			continue
		}
		wantTask := want.Task
		if _, ok := state.tasks[wantTask]; !ok {
			wantTask = ""
		}
		if f.Name != want.Name || f.Size != want.Size || (f.TaskID == nil) != (wantTask == "") || f.TaskID != nil && *f.TaskID != wantTask {
			t.Errorf("file %s is %s, want %q of %d bytes in task %q", id, body, want.Name, want.Size, wantTask)
		}
		n, sum := api.download(t, id)
		if n != want.Size || sum != want.Sum {
			t.Errorf("file %s downloads as %d bytes with SHA-256 %x, want %d bytes with %x", id, n, sum, want.Size, want.Sum)
		}
		stats.downloaded += n
	}
	stats.files = len(state.files)
	if len(recorded) != len(state.files) {
		t.Errorf("%d file records, want %d", len(recorded), len(state.files))
	}
}

// crashRetryPending sends each create, patch and upload that was in flight
// at the kill again, with its Idempotency-Key, as a client whose connection
// broke would. One that was applied must not run again: its retry gets the
// recorded answer, or 409 when the kill came between the commit and the
// recording. One that was not applied runs now. Either way the server then
// holds each write once.
func crashRetryPending(t *testing.T, d *flDemo, api *crashAPI, state *crashState, writers []*crashWriter, stats *crashStats) {
	for _, w := range writers {
		op := w.pending
		if op == nil || op.key == "" {
			continue
		}
		method, path, want := op.route()
		status, header, answer, err := api.sendKeyed(method, path, op.contentType, op.key, op.body)
		if err != nil {
			t.Errorf("retry of the %s in flight: %v", op.kind, err)
			continue
		}
		replayed := header.Get("Idempotent-Replayed") == "true"
		switch {
		case w.pendingApplied && status == http.StatusConflict && bytes.Contains(answer, []byte(`"idempotency_answer_lost"`)):
			stats.lost++
			continue
		case status != want:
			t.Errorf("retry of the %s in flight (applied: %v): %d %s, want %d", op.kind, w.pendingApplied, status, answer, want)
			continue
		case replayed != w.pendingApplied:
			t.Errorf("retry of the %s in flight (applied: %v) answered with Idempotent-Replayed %v: %s", op.kind, w.pendingApplied, replayed, answer)
			continue
		case replayed:
			stats.replayed++
		default:
			stats.rerun++
		}
		var j crashTaskJSON
		var f crashFileJSON
		if op.kind == "upload" {
			err = json.Unmarshal(answer, &f)
		} else {
			err = json.Unmarshal(answer, &j)
		}
		if err != nil {
			t.Errorf("retry of the %s in flight answered %s: %v", op.kind, answer, err)
			continue
		}
		switch op.kind {
		case "create":
			if got, known := state.tasks[j.ID]; j.task() != op.task || replayed && (!known || got != op.task) {
				t.Errorf("retry of the create in flight answered %s, want %+v", answer, op.task)
			}
			state.tasks[j.ID], state.owner[j.ID] = op.task, w.n
		case "patch":
			if j.ID != op.id || j.task() != op.task {
				t.Errorf("retry of the patch in flight answered %s, want %s as %+v", answer, op.id, op.task)
			}
			state.tasks[op.id] = op.task
		case "upload":
			if _, known := state.files[f.ID]; f.Name != op.file.Name || replayed != known {
				t.Errorf("retry of the upload in flight answered %s, want %q (recorded before: %v)", answer, op.file.Name, known)
			}
			state.files[f.ID] = op.file
		}
	}
	if listed, _ := api.allTasks(t); len(listed) != len(state.tasks) {
		t.Errorf("after the retries the server lists %d tasks, want %d: a retry ran twice", len(listed), len(state.tasks))
	}
	if recorded := flRawStrings(t, d.dbPath, `SELECT id FROM files`); len(recorded) != len(state.files) {
		t.Errorf("after the retries there are %d file records, want %d: a retry ran twice", len(recorded), len(state.files))
	}
}

// crashCollectJSON is a collect as the API writes it.
type crashCollectJSON struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Items  []struct {
		ID      string   `json:"id"`
		Status  string   `json:"status"`
		FileIDs []string `json:"fileIds"`
	} `json:"items"`
}

// crashCollect makes the collect the writers upload to: an item and a link
// (a session) for each writer.
func crashCollect(t *testing.T, api *crashAPI, state *crashState) {
	t.Helper()
	items := make([]map[string]any, crashWriters)
	for i := range items {
		items[i] = map[string]any{"title": fmt.Sprintf("documents of writer %d", i)}
	}
	var c crashCollectJSON
	api.must(t, http.MethodPost, "/collects", map[string]any{"workspaceId": state.workspaces[0], "title": "crash test",
		"items": items}, http.StatusCreated, &c)
	state.collectID = c.ID
	for i := range crashWriters {
		var link struct {
			Token string `json:"token"`
		}
		api.must(t, http.MethodPost, "/collects/"+c.ID+"/sessions", map[string]any{"label": fmt.Sprintf("writer %d", i)},
			http.StatusCreated, &link)
		state.links = append(state.links, crashLink{token: link.Token, item: c.Items[i].ID})
	}
}

// crashCheckCollect checks, after crashCheckFiles has settled the uploads in
// flight, that every item holds the files that came through its link, in
// order, and is RECEIVED once it holds one; and that the uploader's view
// through a link shows them too.
func crashCheckCollect(t *testing.T, api *crashAPI, state *crashState) {
	t.Helper()
	var c crashCollectJSON
	api.must(t, http.MethodGet, "/collects/"+state.collectID, nil, http.StatusOK, &c)
	if c.Status != "OPEN" || len(c.Items) != len(state.links) {
		t.Fatalf("the crash test's collect: got status %s with %d items, want OPEN with %d", c.Status, len(c.Items), len(state.links))
	}
	for i, it := range c.Items {
		want := state.received[it.ID]
		wantStatus := "PENDING"
		if len(want) > 0 {
			wantStatus = "RECEIVED"
		}
		if it.ID != state.links[i].item || it.Status != wantStatus || !slices.Equal(it.FileIDs, want) && len(it.FileIDs)+len(want) > 0 {
			t.Errorf("collect item %d: got %s %s with files %v, want %s with the uploads acknowledged through its link, %v", i, it.ID, it.Status, it.FileIDs, wantStatus, want)
		}
	}
	status, body, err := api.send(http.MethodGet, "/collect-sessions/"+state.links[0].token, "", nil)
	var view struct {
		Collect struct {
			Items []struct {
				Status string `json:"status"`
				Files  []struct {
					ID string `json:"id"`
				} `json:"files"`
			} `json:"items"`
		} `json:"collect"`
	}
	if err == nil {
		err = json.Unmarshal(body, &view)
	}
	if err != nil || status != http.StatusOK || len(view.Collect.Items) != len(c.Items) {
		t.Fatalf("the uploader's view through a link: %d %s (%v)", status, body, err)
	}
	for i, it := range view.Collect.Items {
		if it.Status != c.Items[i].Status || len(it.Files) != len(c.Items[i].FileIDs) {
			t.Errorf("the uploader's view of item %d: %s with %d files, want %s with %d", i, it.Status, len(it.Files), c.Items[i].Status, len(c.Items[i].FileIDs))
		}
	}
}
