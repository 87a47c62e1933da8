// Command bench is acctapi's load benchmark. It seeds a data dir (or reuses
// one), starts `acctapi serve` on it, runs wrk with the Lua scenarios in
// scenarios/ at each connection count, and prints a Markdown table of
// throughput, latency, errors and the server's peak memory.
//
// Run it with bench/run, which installs wrk first; bench/README.md explains
// the flags and how to read the table.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

//go:embed scenarios/*.lua
var scripts embed.FS

const (
	// pageLimit is the API's largest page: the list scenarios read full pages.
	pageLimit = 100
	// deepPage is the page the deep scenarios read, found by walking the
	// list from page 1: keyset pagination should make it as fast as page 1.
	deepPage = 10_000
	// sampleSize is how many task ids the patch scenarios choose from under
	// each synchronous setting.
	sampleSize = 10_000
	// seedFile, in the data dir, keeps seed's output: the keys and ids a
	// later run on the same data dir needs.
	seedFile = "bench-seed.json"
)

// errRunsFailed says that the table is complete but some run had errors.
var errRunsFailed = errors.New("some runs had errors")

func main() {
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	// Ctrl-C or SIGTERM ends the current wrk run; the deferred stops still
	// run, so the server is not left behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts); err != nil {
		if ctx.Err() != nil {
			err = errors.New("interrupted")
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

// options are the command line, checked.
type options struct {
	data      string
	tasks     int
	duration  time.Duration
	conns     []int
	scenarios []scenario
	syncs     []string
	bin       string
	out       string
	// baseline also runs the bare server of bench/baseline, beside acctapi.
	baseline bool
	// baselineSync, when set, also runs a second bare server under this
	// synchronous setting whatever acctapi's, for the ratio of acctapi under
	// FULL to the bare driver under NORMAL.
	baselineSync string
	// compare is a second acctapi binary run beside the first, on
	// compareData (a copy of the data dir when its schema differs).
	compare, compareData string
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	var conns, names, syncs, baselineSync string
	fs.StringVar(&o.data, "data", "", "data dir: reused if it holds a database, else seeded (default $TMPDIR/acctapi-bench-<tasks>)")
	fs.IntVar(&o.tasks, "tasks", 1_000_000, "tasks of the big client, when seeding")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of each wrk run, in whole seconds")
	fs.StringVar(&conns, "conns", "1,32", "connection counts, comma-separated")
	fs.StringVar(&names, "scenarios", strings.Join(scenarioNames(), ","), "scenarios, comma-separated")
	fs.StringVar(&syncs, "sync", "NORMAL,FULL", "SQLite synchronous settings: reads run under the first, writes under each")
	fs.StringVar(&o.bin, "bin", "", "prebuilt acctapi binary (default: build one)")
	fs.StringVar(&o.out, "out", "", "also write the results as JSON to this file")
	fs.BoolVar(&o.baseline, "baseline", false, "also run the bare httprouter + SQLite server of bench/baseline on list, list-deep and create, and print acctapi's ratio to it")
	fs.StringVar(&baselineSync, "baseline-sync", "", "with -baseline, also run a second bare server under this synchronous setting at every setting of -sync, and print acctapi's ratio to it too")
	fs.StringVar(&o.compare, "compare", "", "a second acctapi binary to run beside the first, alternating, and print the ratio of the first to it")
	fs.StringVar(&o.compareData, "compare-data", "", "the data dir of -compare (default: -data); a copy of -data for a binary with another schema")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.tasks < 1 {
		return nil, errors.New("-tasks must be at least 1")
	}
	// wrk takes whole seconds.
	if o.duration < time.Second || o.duration%time.Second != 0 {
		return nil, fmt.Errorf("-duration %s: give whole seconds, at least 1s", o.duration)
	}
	if o.data == "" {
		o.data = filepath.Join(os.TempDir(), fmt.Sprintf("acctapi-bench-%d", o.tasks))
	}
	if o.compareData == "" {
		o.compareData = o.data
	}
	var err error
	if o.conns, err = parseConns(conns); err != nil {
		return nil, err
	}
	if o.scenarios, err = pickScenarios(names); err != nil {
		return nil, err
	}
	if o.syncs, err = parseSyncs(syncs); err != nil {
		return nil, err
	}
	if baselineSync != "" {
		if !o.baseline {
			return nil, errors.New("-baseline-sync needs -baseline")
		}
		fixed, err := parseSyncs(baselineSync)
		if err != nil || len(fixed) != 1 {
			return nil, fmt.Errorf("-baseline-sync: %q is not one of NORMAL, FULL or EXTRA", baselineSync)
		}
		o.baselineSync = fixed[0]
	}
	return &o, nil
}

func parseConns(s string) ([]int, error) {
	var conns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-conns: %q is not a connection count", f)
		}
		conns = append(conns, n)
	}
	return conns, nil
}

func parseSyncs(s string) ([]string, error) {
	var syncs []string
	for _, f := range strings.Split(s, ",") {
		v := strings.ToUpper(strings.TrimSpace(f))
		if !slices.Contains([]string{"NORMAL", "FULL", "EXTRA"}, v) {
			return nil, fmt.Errorf("-sync: %q is not NORMAL, FULL or EXTRA", f)
		}
		syncs = append(syncs, v)
	}
	return syncs, nil
}

// bench is one run of the benchmark: what it prepared and what it measured.
type bench struct {
	opts *options
	work string // temp dir: binary, scripts, data files, server logs
	bin  string
	seed *seedInfo
	fix  *fixture
	// targets are the servers measured, acctapi first; srvs holds each
	// one's running process, in the same order.
	targets []target
	srvs    []*server
	results []result
}

// target is one server the scenarios run against.
type target struct {
	name string
	// command returns the command line that serves data dir on addr.
	command func(addr, mode string) []string
	// baselineOnly marks the bare server, which answers only the scenarios
	// with a baseline.
	baselineOnly bool
	// sync, when set, is the synchronous setting the server runs under at
	// every setting of -sync.
	sync string
}

// mode is the synchronous setting the target runs under when the others run
// under setting.
func (t target) mode(setting string) string { return cmp.Or(t.sync, setting) }

func acctapiTarget(name, bin, dataDir string) target {
	return target{name: name, command: func(addr, mode string) []string {
		return []string{bin, "serve", "--data-dir", dataDir, "--addr", addr, "--synchronous", mode}
	}}
}

func run(ctx context.Context, opts *options) error {
	work, err := os.MkdirTemp("", "acctapi-bench-run-")
	if err != nil {
		return err
	}
	b := &bench{opts: opts, work: work}
	err = b.measure(ctx)
	if len(b.results) > 0 {
		fmt.Println()
		printTable(os.Stdout, b.results)
		printRatios(os.Stdout, b.results)
		printServerErrors(os.Stdout, b.results)
	}
	if opts.out != "" && len(b.results) > 0 {
		err = errors.Join(err, writeJSON(opts.out, b))
	}
	if err != nil {
		// Keep the logs: they hold what the server answered.
		fmt.Fprintf(os.Stderr, "bench: server logs and scripts kept in %s\n", work)
		return err
	}
	return os.RemoveAll(work)
}

// measure does the runs, a server start per synchronous setting: reads
// under the first setting only, since the setting does not change them.
func (b *bench) measure(ctx context.Context) error {
	if err := b.build(ctx); err != nil {
		return err
	}
	seed, err := loadOrSeed(ctx, b.bin, b.opts.data, b.opts.tasks)
	if err != nil {
		return err
	}
	b.seed = seed
	if err := b.writeScripts(); err != nil {
		return err
	}
	b.targets = []target{acctapiTarget("acctapi", b.bin, b.opts.data)}
	if b.opts.compare != "" {
		b.targets = append(b.targets, acctapiTarget("compare", b.opts.compare, b.opts.compareData))
	}
	if b.opts.baseline {
		bin := filepath.Join(b.work, "baseline")
		if err := goBuild(ctx, bin, "acctapi/bench/baseline"); err != nil {
			return err
		}
		command := func(addr, mode string) []string {
			return []string{bin, "-data-dir", b.opts.data, "-addr", addr, "-synchronous", mode}
		}
		b.targets = append(b.targets, target{name: "baseline", baselineOnly: true, command: command})
		if s := b.opts.baselineSync; s != "" {
			b.targets = append(b.targets, target{name: "baseline-" + s, baselineOnly: true, command: command, sync: s})
		}
	}
	defer b.stopServer() // on failure; success stops it below, to see its error
	for i := range b.opts.syncs {
		var todo []scenario
		for _, sc := range b.opts.scenarios {
			if i == 0 || sc.write {
				todo = append(todo, sc)
			}
		}
		if len(todo) == 0 {
			continue
		}
		if err := b.measureUnder(ctx, i, todo); err != nil {
			return err
		}
	}
	if err := b.stopServer(); err != nil {
		return err
	}
	for _, r := range b.results {
		if r.Errors.total() > 0 {
			return errRunsFailed
		}
	}
	return nil
}

// measureUnder starts the server with one synchronous setting, the
// setting-th of -sync, and runs the scenarios at each connection count.
func (b *bench) measureUnder(ctx context.Context, setting int, todo []scenario) error {
	if err := b.stopServer(); err != nil {
		return err
	}
	mode := b.opts.syncs[setting]
	for _, t := range b.targets {
		log := filepath.Join(b.work, fmt.Sprintf("%s-%d-%s.log", t.name, setting+1, t.mode(mode)))
		srv, err := startServer(ctx, t.command, t.mode(mode), log)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		b.srvs = append(b.srvs, srv)
	}
	if b.fix == nil {
		var err error
		if b.fix, err = prepare(ctx, b.srvs[0].url, b.seed, b.opts.scenarios, len(b.opts.syncs)); err != nil {
			return err
		}
	}
	// The servers take turns at each scenario and connection count, so that
	// a change in the machine's load falls on both.
	for _, sc := range todo {
		for _, conns := range b.opts.conns {
			for i, t := range b.targets {
				if t.baselineOnly && !sc.baseline {
					continue
				}
				res, err := b.runOne(ctx, i, sc, setting, conns)
				if err != nil {
					return fmt.Errorf("%s: %s, %s, %s: %w", t.name, sc.name, mode, connections(conns), err)
				}
				b.results = append(b.results, res)
			}
		}
	}
	return nil
}

func (b *bench) stopServer() error {
	var errs []error
	for _, srv := range b.srvs {
		errs = append(errs, srv.stop())
	}
	b.srvs = nil
	return errors.Join(errs...)
}

// build uses -bin, or builds the module's binary into the work dir so that
// the benchmark measures the code as it is checked out.
func (b *bench) build(ctx context.Context) error {
	if b.opts.bin != "" {
		b.bin = b.opts.bin
		return nil
	}
	b.bin = filepath.Join(b.work, "acctapi")
	return goBuild(ctx, b.bin, "acctapi")
}

func goBuild(ctx context.Context, out, pkg string) error {
	fmt.Fprintln(os.Stderr, "building", pkg)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (run bench from the repository, as bench/run does): %w", pkg, err)
	}
	return nil
}

// writeScripts puts common.lua in front of each scenario script: wrk takes
// one script, and every scenario needs the shared done().
func (b *bench) writeScripts() error {
	common, err := scripts.ReadFile("scenarios/common.lua")
	if err != nil {
		return err
	}
	for _, sc := range b.opts.scenarios {
		own, err := scripts.ReadFile("scenarios/" + sc.script)
		if err != nil {
			return err
		}
		script := slices.Concat(common, []byte("\n"), own)
		if err := os.WriteFile(b.scriptPath(sc), script, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) scriptPath(sc scenario) string {
	return filepath.Join(b.work, strings.TrimSuffix(sc.script, ".lua")+".run.lua")
}

// runOne runs wrk once against the target-th server and reads the server's
// peak memory around it.
func (b *bench) runOne(ctx context.Context, target int, sc scenario, setting, conns int) (result, error) {
	mode := b.targets[target].mode(b.opts.syncs[setting])
	srv := b.srvs[target]
	res := result{Server: b.targets[target].name, Scenario: sc.name, Synchronous: mode, Connections: conns}
	if err := srv.alive(); err != nil {
		return res, err
	}
	data := filepath.Join(b.work, fmt.Sprintf("%s-%s-%s-c%d.data", res.Server, sc.name, mode, conns))
	p := sc.params(b.fix.under(setting))
	// The tag makes created titles unique across runs on the same data dir.
	p.add("tag", fmt.Sprintf("%s %s c%d", time.Now().UTC().Format("20060102T150405"), mode, conns))
	if err := os.WriteFile(data, []byte(p.String()), 0o600); err != nil {
		return res, err
	}
	if err := resetPeakRSS(srv.pid()); err != nil {
		return res, err
	}
	logStart, err := fileSize(srv.log)
	if err != nil {
		return res, err
	}
	sum, err := runWrk(ctx, b.scriptPath(sc), srv.url, data, conns, b.opts.duration)
	if err != nil {
		return res, err
	}
	if res.PeakRSSKiB, err = peakRSS(srv.pid()); err != nil {
		return res, err
	}
	res.fill(sum)
	if sum.Errors.Status > 0 {
		if res.ServerErrors, err = serverErrors(srv.log, logStart); err != nil {
			return res, err
		}
	}
	fmt.Fprintf(os.Stderr, "%-8s %-20s %-6s %3d conns  %8.0f req/s  p99 %s  errors %d\n",
		res.Server, sc.name, mode, conns, res.RequestsPerSecond, formatMs(res.P99Ms), res.Errors.total())
	return res, nil
}

// seedInfo is the part of `acctapi seed --json` the scenarios need.
type seedInfo struct {
	AccountantKey string `json:"accountantKey"`
	ClientKey     string `json:"clientKey"`
	Clients       []struct {
		ID           string   `json:"id"`
		Tasks        int      `json:"tasks"`
		WorkspaceIDs []string `json:"workspaceIds"`
	} `json:"clients"`
}

// loadOrSeed reuses a data dir that holds a database, since seeding a
// million tasks takes most of a minute, and seeds it otherwise.
func loadOrSeed(ctx context.Context, bin, dir string, tasks int) (*seedInfo, error) {
	reused := exists(filepath.Join(dir, "acctapi.db"))
	var out []byte
	var err error
	if reused {
		out, err = os.ReadFile(filepath.Join(dir, seedFile))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s holds a database but not %s, which has its keys: seed a new data dir,"+
				" or write `acctapi seed --json`'s output there", dir, seedFile)
		}
	} else {
		out, err = seed(ctx, bin, dir, tasks)
	}
	if err != nil {
		return nil, err
	}
	var info seedInfo
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("%s: %w", seedFile, err)
	}
	if len(info.Clients) == 0 || len(info.Clients[0].WorkspaceIDs) == 0 || info.ClientKey == "" || info.AccountantKey == "" {
		return nil, fmt.Errorf("%s lacks the keys, the first client or its workspaces", filepath.Join(dir, seedFile))
	}
	if reused {
		fmt.Fprintf(os.Stderr, "reusing %s, seeded with %d tasks in the big client (-tasks applies only when seeding)\n",
			dir, info.Clients[0].Tasks)
	}
	return &info, nil
}

// seed runs `acctapi seed` and keeps its output in the data dir. The file
// holds keys, so only its owner may read it.
func seed(ctx context.Context, bin, dir string, tasks int) ([]byte, error) {
	fmt.Fprintf(os.Stderr, "seeding %s with %d tasks (about 42 s a million)\n", dir, tasks)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "seed", "--data-dir", dir, "--json", "--tasks", strconv.Itoa(tasks))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("acctapi seed: %w", err)
	}
	return out, os.WriteFile(filepath.Join(dir, seedFile), out, 0o600)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// server is a running `acctapi serve`.
type server struct {
	cmd     *exec.Cmd
	url     string
	log     string
	exited  chan struct{} // closed when the process has exited
	waitErr error         // how it exited, set before exited closes
}

// startServer starts the server command makes on a free loopback port, its
// output going to logPath, and waits until it answers /v1/health.
func startServer(ctx context.Context, command func(addr, mode string) []string, mode, logPath string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child keeps its own descriptor
	args := command(addr, mode)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A process group of its own: Ctrl-C in the terminal reaches bench and
	// wrk, and bench stops the server with SIGTERM like an operator would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, url: "http://" + addr, log: logPath, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	fmt.Fprintf(os.Stderr, "serving on %s with synchronous=%s (log: %s)\n", addr, mode, logPath)
	if err := s.waitHealthy(ctx); err != nil {
		return nil, errors.Join(err, s.stop())
	}
	return s, nil
}

// freeAddr asks the kernel for a free loopback port. Another process could
// take it before the server listens; on a test machine it does not.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (s *server) waitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.url + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("the server exited at start (%v): %s", s.waitErr, tail(s.log))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the server did not answer /v1/health within a minute: %s", tail(s.log))
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// alive says why the server is gone, if it is.
func (s *server) alive() error {
	select {
	case <-s.exited:
		return fmt.Errorf("the server exited (%v): %s", s.waitErr, tail(s.log))
	default:
		return nil
	}
}

// stop sends SIGTERM, lets in-flight requests finish (serve's default
// --shutdown-timeout is 15 s), and kills the server if it takes longer.
func (s *server) stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-s.exited:
		if s.waitErr != nil {
			return fmt.Errorf("the server stopped with %v: %s", s.waitErr, tail(s.log))
		}
		return nil
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		return errors.New("the server did not stop within 30 s of SIGTERM, and was killed")
	}
}

// tail returns the end of a log, for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// resetPeakRSS resets the process's VmHWM to its current RSS (proc(5),
// clear_refs "5"), so that the next reading is the peak of one run.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// peakRSS reads VmHWM, the peak resident set size, in KiB.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// scenario is one kind of load: a script in scenarios/ and the data it reads.
type scenario struct {
	name   string
	script string
	// write marks scenarios that change data: they run under every
	// synchronous setting, since that setting decides what a commit costs.
	write bool
	// walks names the list prepare must walk first: for its deep page or,
	// for "list", its sample of task ids.
	walks string
	// params returns the lines of the script's data file.
	params func(*fixture) params
	// baseline marks the scenarios bench/baseline answers.
	baseline bool
}

// scenarios lists every scenario in the order they run.
var scenarios = []scenario{
	{name: "me", script: "get.lua", params: func(f *fixture) params {
		return getParams("/v1/me", f.seed.AccountantKey, "")
	}},
	{name: "list", script: "get.lua", baseline: true, params: firstPage("list")},
	{name: "list-deep", script: "get.lua", walks: "list", baseline: true, params: deepPageOf("list")},
	{name: "list-workspace", script: "get.lua", params: firstPage("list-workspace")},
	{name: "list-workspace-deep", script: "get.lua", walks: "list-workspace", params: deepPageOf("list-workspace")},
	{name: "list-title", script: "get.lua", params: firstPage("list-title")},
	{name: "list-title-deep", script: "get.lua", walks: "list-title", params: deepPageOf("list-title")},
	{name: "create", script: "create.lua", write: true, baseline: true, params: writeParams},
	{name: "patch", script: "patch.lua", write: true, walks: "list", params: writeParams},
	{name: "mixed", script: "mixed.lua", write: true, walks: "list", params: func(f *fixture) params {
		p := writeParams(f)
		p.add("accountant_key", f.seed.AccountantKey)
		p.add("list_path", f.lists["list"].path)
		p.add("deep_path", f.lists["list"].deepPath())
		return p
	}},
}

func scenarioNames() []string {
	var names []string
	for _, sc := range scenarios {
		names = append(names, sc.name)
	}
	return names
}

// pickScenarios keeps the scenarios named, in the order of scenarios.
func pickScenarios(s string) ([]scenario, error) {
	names := strings.Split(s, ",")
	for i, name := range names {
		names[i] = strings.TrimSpace(name)
		if !slices.Contains(scenarioNames(), names[i]) {
			return nil, fmt.Errorf("-scenarios: no scenario %q (there are %s)", name, strings.Join(scenarioNames(), ", "))
		}
	}
	var picked []scenario
	for _, sc := range scenarios {
		if slices.Contains(names, sc.name) {
			picked = append(picked, sc)
		}
	}
	return picked, nil
}

// params are the lines of a data file, "name value", which common.lua's
// params() reads; a name that repeats makes a list.
type params []string

func (p *params) add(name string, values ...string) {
	for _, v := range values {
		*p = append(*p, name+" "+v)
	}
}

func (p params) String() string { return strings.Join(p, "\n") + "\n" }

func getParams(path, key, client string) params {
	var p params
	p.add("path", path)
	p.add("key", key)
	if client != "" {
		p.add("client", client)
	}
	return p
}

func firstPage(list string) func(*fixture) params {
	return func(f *fixture) params {
		return getParams(f.lists[list].path, f.seed.ClientKey, f.seed.Clients[0].ID)
	}
}

func deepPageOf(list string) func(*fixture) params {
	return func(f *fixture) params {
		return getParams(f.lists[list].deepPath(), f.seed.ClientKey, f.seed.Clients[0].ID)
	}
}

// writeParams serve create, patch and mixed: the big client, its
// workspaces and the sample of its tasks.
func writeParams(f *fixture) params {
	var p params
	p.add("key", f.seed.ClientKey)
	p.add("client", f.seed.Clients[0].ID)
	p.add("workspace", f.seed.Clients[0].WorkspaceIDs...)
	p.add("task", f.tasks...)
	return p
}

// fixture is what the scenarios need from the running server: the lists
// with their deep pages, and samples of task ids.
type fixture struct {
	seed  *seedInfo
	lists map[string]*list
	// samples holds a separate sample of tasks for each synchronous setting,
	// in the order of -sync: patching a task again is cheaper than patching
	// it the first time (its index entries have already moved to the recent
	// end), so a setting that patched the tasks of the one before would look
	// faster than it is.
	samples [][]string
	// tasks is the sample of the setting the scenarios run under.
	tasks []string
}

// under returns the fixture as the scenarios see it under the setting-th
// synchronous setting.
func (f *fixture) under(setting int) *fixture {
	g := *f
	g.tasks = f.samples[setting]
	return &g
}

// list is one of the task lists the list scenarios read.
type list struct {
	name  string
	path  string // page 1
	total int
	// page is the deepest full page up to deepPage, and cursor the cursor
	// that reads it ("" for page 1).
	page   int
	cursor string
}

func (l *list) deepPath() string {
	if l.cursor == "" {
		return l.path
	}
	return l.path + "&cursor=" + l.cursor
}

// prepare walks the big client's lists to find their deep pages, and
// samples task ids on the way. The walks run side by side: each takes
// 10,000 requests on a big dataset.
func prepare(ctx context.Context, baseURL string, seed *seedInfo, picked []scenario, settings int) (*fixture, error) {
	page1 := "/v1/tasks?limit=" + strconv.Itoa(pageLimit)
	f := &fixture{seed: seed, lists: map[string]*list{
		"list":           {name: "list", path: page1},
		"list-workspace": {name: "list-workspace", path: page1 + "&workspaceId=" + seed.Clients[0].WorkspaceIDs[0]},
		"list-title":     {name: "list-title", path: page1 + "&sort=title&order=asc"},
	}}
	c := &apiClient{base: baseURL, key: seed.ClientKey, client: seed.Clients[0].ID, http: &http.Client{Timeout: 30 * time.Second}}
	sample := &reservoir{size: sampleSize * settings}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, l := range f.lists {
		if !needsWalk(l.name, picked) {
			continue
		}
		seen := func(string) {}
		if l.name == "list" {
			seen = sample.add // one goroutine walks "list": no lock needed
		}
		wg.Go(func() {
			if err := walk(ctx, c, l, seen); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if needsWalk("list", picked) && len(sample.ids) == 0 {
		return nil, errors.New("the big client has no tasks to patch")
	}
	f.samples = split(sample.ids, settings)
	return f, nil
}

// split deals the ids out in equal parts, or gives each part all of them
// when there are too few to go round.
func split(ids []string, parts int) [][]string {
	// The reservoir keeps ids in the order of the list where it had no
	// reason to move them: shuffle, so that each part is a random sample.
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	n := len(ids) / parts
	out := make([][]string, parts)
	for i := range out {
		if n == 0 {
			out[i] = ids
		} else {
			out[i] = ids[i*n : (i+1)*n]
		}
	}
	return out
}

func needsWalk(name string, picked []scenario) bool {
	return slices.ContainsFunc(picked, func(sc scenario) bool { return sc.walks == name })
}

// walk follows nextCursor from page 1 up to deepPage, remembering the
// deepest full page, and passes every task id to seen.
func walk(ctx context.Context, c *apiClient, l *list, seen func(string)) error {
	start := time.Now()
	l.page = 1
	cursor := ""
	for page := 1; page <= deepPage; page++ {
		p, err := c.tasks(ctx, l.path, cursor)
		if err != nil {
			return fmt.Errorf("walking %s, page %d: %w", l.name, page, err)
		}
		if page == 1 {
			l.total = p.Pagination.Total
		}
		for _, t := range p.Data {
			seen(t.ID)
		}
		if len(p.Data) == pageLimit {
			l.page, l.cursor = page, cursor
		}
		if p.Pagination.NextCursor == nil {
			break
		}
		cursor = *p.Pagination.NextCursor
	}
	note := ""
	if l.page < deepPage {
		note = fmt.Sprintf(" (the list has fewer than %d full pages)", deepPage)
	}
	fmt.Fprintf(os.Stderr, "%s-deep reads page %d%s; %d tasks, walked in %.1f s\n",
		l.name, l.page, note, l.total, time.Since(start).Seconds())
	return nil
}

// apiClient calls the task list as the big client.
type apiClient struct {
	base, key, client string
	http              *http.Client
}

// taskPage is the part of a GET /v1/tasks answer a walk reads.
type taskPage struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	Pagination struct {
		Total      int     `json:"total"`
		NextCursor *string `json:"nextCursor"`
	} `json:"pagination"`
}

func (c *apiClient) tasks(ctx context.Context, path, cursor string) (*taskPage, error) {
	if cursor != "" {
		path += "&cursor=" + cursor
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("x-client-id", c.client)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	var p taskPage
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return &p, nil
}

// reservoir keeps a uniform sample of the ids it is given (reservoir
// sampling), so that patches spread over the whole list, not its first pages.
type reservoir struct {
	size int
	seen int
	ids  []string
}

func (r *reservoir) add(id string) {
	r.seen++
	if len(r.ids) < r.size {
		r.ids = append(r.ids, id)
	} else if i := rand.IntN(r.seen); i < r.size {
		r.ids[i] = id
	}
}

// wrkSummary is the line of JSON common.lua's done() prints.
type wrkSummary struct {
	Requests   int64     `json:"requests"`
	DurationUS int64     `json:"duration_us"`
	Errors     wrkErrors `json:"errors"`
	P50US      int64     `json:"p50_us"`
	P99US      int64     `json:"p99_us"`
}

// wrkErrors are wrk's error counts: socket errors, and Status, the answers
// with a status of 400 or more.
type wrkErrors struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Status  int64 `json:"status"`
	Timeout int64 `json:"timeout"`
}

func (e wrkErrors) total() int64 { return e.Connect + e.Read + e.Write + e.Status + e.Timeout }

// runWrk runs one wrk and returns what done() printed. One thread drives one
// connection; more connections share two threads, one per core of the
// machine the benchmark was written for.
func runWrk(ctx context.Context, script, url, data string, conns int, d time.Duration) (*wrkSummary, error) {
	threads := 2
	if conns == 1 {
		threads = 1
	}
	cmd := exec.CommandContext(ctx, "wrk", "-t"+strconv.Itoa(threads), "-c"+strconv.Itoa(conns),
		"-d", fmt.Sprintf("%ds", int(d.Seconds())), "--latency", "--timeout", "5s",
		"-s", script, url, "--", data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// wrk reports a script that fails to load on stderr, then runs anyway.
	if err != nil || stderr.Len() > 0 {
		return nil, fmt.Errorf("wrk: %v: %s%s", err, stderr.Bytes(), stdout.Bytes())
	}
	return parseSummary(stdout.Bytes())
}

// parseSummary finds done()'s line among wrk's own report.
func parseSummary(out []byte) (*wrkSummary, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range slices.Backward(lines) {
		if strings.HasPrefix(line, "{") {
			var s wrkSummary
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				return nil, fmt.Errorf("wrk's summary %q: %w", line, err)
			}
			return &s, nil
		}
	}
	return nil, fmt.Errorf("wrk printed no summary:\n%s", out)
}

// serverErrors counts what the server logged after offset: the answers wrk
// counted as errors by status and route, and errors logged on their own.
func serverErrors(logPath string, offset int64) (map[string]int, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Level, Msg, Method, Route, Error string
			Status                           int
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch {
		// 499 is a request wrk dropped at the end of its run: never answered.
		case line.Msg == "request" && line.Status >= 400 && line.Status != 499:
			counts[fmt.Sprintf("%d %s %s", line.Status, line.Method, line.Route)]++
		case line.Msg != "request" && line.Level == "ERROR":
			counts[line.Msg+": "+line.Error]++
		}
	}
	return counts, sc.Err()
}

// result is one row of the table.
type result struct {
	Server            string         `json:"server"`
	Scenario          string         `json:"scenario"`
	Synchronous       string         `json:"synchronous"`
	Connections       int            `json:"connections"`
	Requests          int64          `json:"requests"`
	Seconds           float64        `json:"seconds"`
	RequestsPerSecond float64        `json:"requestsPerSecond"`
	P50Ms             float64        `json:"p50Ms"`
	P99Ms             float64        `json:"p99Ms"`
	Errors            wrkErrors      `json:"errors"`
	PeakRSSKiB        int64          `json:"peakRssKiB"`
	ServerErrors      map[string]int `json:"serverErrors,omitempty"`
}

func (r *result) fill(s *wrkSummary) {
	r.Requests = s.Requests
	r.Seconds = float64(s.DurationUS) / 1e6
	if r.Seconds > 0 {
		r.RequestsPerSecond = float64(s.Requests) / r.Seconds
	}
	r.P50Ms = float64(s.P50US) / 1000
	r.P99Ms = float64(s.P99US) / 1000
	r.Errors = s.Errors
}

// printTable prints a row per run; a server column when the run measured
// more than one server.
func printTable(w io.Writer, results []result) {
	servers := false
	for _, r := range results {
		servers = servers || r.Server != results[0].Server
	}
	rows := [][]string{{"scenario", "synchronous", "connections", "requests/s", "p50", "p99", "errors", "server peak RSS (MiB)"}}
	for _, r := range results {
		rows = append(rows, []string{r.Scenario, r.Synchronous, strconv.Itoa(r.Connections),
			strconv.FormatFloat(r.RequestsPerSecond, 'f', 0, 64), formatMs(r.P50Ms), formatMs(r.P99Ms),
			formatErrors(r.Errors), strconv.FormatFloat(float64(r.PeakRSSKiB)/1024, 'f', 0, 64)})
	}
	if servers {
		rows[0] = append([]string{"server"}, rows[0]...)
		for i, r := range results {
			rows[i+1] = append([]string{r.Server}, rows[i+1]...)
		}
	}
	printMarkdown(w, rows, len(rows[0])-6)
}

// printRatios prints, for each run of a server other than the first, the
// first server's requests a second in the same scenario, just before, divided
// by that server's.
// The two may run under different synchronous settings (-baseline-sync).
func printRatios(w io.Writer, results []result) {
	type cell struct {
		scenario string
		conns    int
	}
	first := map[cell]result{}
	rows := [][]string{{"scenario", "connections", "server", "synchronous", "requests/s", "against", "synchronous", "requests/s", "ratio"}}
	for _, r := range results {
		c := cell{r.Scenario, r.Connections}
		if r.Server == results[0].Server {
			// Each later server is compared with the first's run just before it.
			first[c] = r
			continue
		}
		a, ok := first[c]
		if !ok {
			continue
		}
		ratio := "-"
		if r.RequestsPerSecond > 0 {
			ratio = strconv.FormatFloat(a.RequestsPerSecond/r.RequestsPerSecond, 'f', 2, 64) + "x"
		}
		rows = append(rows, []string{r.Scenario, strconv.Itoa(r.Connections),
			a.Server, a.Synchronous, strconv.FormatFloat(a.RequestsPerSecond, 'f', 0, 64),
			r.Server, r.Synchronous, strconv.FormatFloat(r.RequestsPerSecond, 'f', 0, 64), ratio})
	}
	if len(rows) == 1 {
		return
	}
	fmt.Fprintln(w)
	printMarkdown(w, rows, 1)
}

// printMarkdown prints rows as a Markdown table, the first row its header:
// the first text columns left-aligned, the rest (numbers) right-aligned.
func printMarkdown(w io.Writer, rows [][]string, text int) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	// Text columns left, numbers right: Markdown's alignment row says which.
	printRow := func(cells []string) {
		for i, cell := range cells {
			if i < text {
				fmt.Fprintf(w, "| %-*s ", widths[i], cell)
			} else {
				fmt.Fprintf(w, "| %*s ", widths[i], cell)
			}
		}
		fmt.Fprintln(w, "|")
	}
	printRow(rows[0])
	align := make([]string, len(widths))
	for i, n := range widths {
		if i < text {
			align[i] = strings.Repeat("-", n)
		} else {
			align[i] = strings.Repeat("-", n-1) + ":"
		}
	}
	printRow(align)
	for _, row := range rows[1:] {
		printRow(row)
	}
}

// formatMs keeps about three significant digits.
func formatMs(ms float64) string {
	switch {
	case ms < 1:
		return strconv.FormatFloat(ms, 'f', 3, 64) + " ms"
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	}
}

func connections(n int) string {
	if n == 1 {
		return "1 connection"
	}
	return strconv.Itoa(n) + " connections"
}

// formatErrors gives the total, and its parts when there are any.
func formatErrors(e wrkErrors) string {
	if e.total() == 0 {
		return "0"
	}
	var parts []string
	for _, p := range []struct {
		name string
		n    int64
	}{{"status", e.Status}, {"timeout", e.Timeout}, {"connect", e.Connect}, {"read", e.Read}, {"write", e.Write}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", p.name, p.n))
		}
	}
	return fmt.Sprintf("%d (%s)", e.total(), strings.Join(parts, ", "))
}

// printServerErrors lists, under the table, what the server answered when
// wrk counted error statuses.
func printServerErrors(w io.Writer, results []result) {
	for _, r := range results {
		if len(r.ServerErrors) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s, %s, %s: the server log says\n", r.Scenario, r.Synchronous, connections(r.Connections))
		keys := make([]string, 0, len(r.ServerErrors))
		for k := range r.ServerErrors {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "  %6d × %s\n", r.ServerErrors[k], k)
		}
	}
}

// writeJSON writes the results with what they were measured on.
func writeJSON(path string, b *bench) error {
	report := struct {
		Time     time.Time      `json:"time"`
		DataDir  string         `json:"dataDir"`
		Tasks    int            `json:"tasks"`
		Duration string         `json:"duration"`
		Deep     map[string]int `json:"deepPages,omitempty"`
		Results  []result       `json:"results"`
	}{Time: time.Now().UTC(), DataDir: b.opts.data, Tasks: b.seed.Clients[0].Tasks,
		Duration: b.opts.duration.String(), Results: b.results}
	if b.fix != nil {
		report.Deep = map[string]int{}
		for name, l := range b.fix.lists {
			if l.page > 0 {
				report.Deep[name+"-deep"] = l.page
			}
		}
	}
	out, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}
