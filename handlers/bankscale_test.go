package handlers

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acctapi/banking"
	"acctapi/bankstatement"
	"acctapi/db"
	"acctapi/document"
)

// TestBankImportAtScale imports a statement of 100,000 entries through the
// API and matches it against 10,000 documents, while another client writes
// every 10 ms; it reports the time of each, the process's peak RSS from
// the import on, and the longest wait of the other client's writes. It
// takes minutes: ACCTAPI_BANK_SCALE=1 runs it.
//
//	ACCTAPI_BANK_SCALE=1 go test -run TestBankImportAtScale -v -timeout 30m ./handlers
func TestBankImportAtScale(t *testing.T) {
	if os.Getenv("ACCTAPI_BANK_SCALE") == "" {
		t.Skip("ACCTAPI_BANK_SCALE=1 runs it")
	}
	const entries, documents = 100_000, 10_000
	api := newTestAPI(t)
	ctx := context.Background()
	ws := api.mustCreateWorkspace(api.client.ID, "Invoices")

	start := time.Now()
	scaleDocuments(t, api, ws, documents)
	worker := banking.New(banking.Options{Store: api.store})
	drain := func() {
		for {
			n, err := worker.RunDue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	drain()
	t.Logf("%d documents stored and read in %v", documents, time.Since(start).Round(time.Millisecond))

	data := scaleStatement(entries, documents)
	otherWS := api.mustCreateWorkspace(api.otherClient.ID, "Other")
	stop := make(chan struct{})
	var longest, longestImport time.Duration
	var writes int
	var importing atomic.Bool
	importing.Store(true)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			begin := time.Now()
			if _, err := api.store.CreateTask(ctx, api.otherClient.ID, db.TaskCreate{WorkspaceID: otherWS, Title: "concurrent"}); err != nil {
				t.Error(err)
				return
			}
			if importing.Load() {
				longestImport = max(longestImport, time.Since(begin))
			}
			longest = max(longest, time.Since(begin))
			writes++
		}
	})
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("peak RSS not reset: %v", err)
	}
	start = time.Now()
	res := api.bkImport(t, api.accountantKey, api.client.ID, "", data)
	if res.status != 201 {
		t.Fatalf("import: got %d %.300s", res.status, res.body)
	}
	imported := time.Since(start)
	importing.Store(false)
	start = time.Now()
	drain()
	matched := time.Since(start)
	close(stop)
	wg.Wait()
	var n int
	for _, s := range api.sqlColumn(t, `SELECT count(*) FROM bank_transactions WHERE status = 'matched'`) {
		fmt.Sscan(s, &n)
	}
	t.Logf("%d entries (%d bytes) imported in %v, matched in %v: %d matched; peak RSS %s; %d concurrent writes, the longest %v (%v while importing)",
		entries, len(data), imported.Round(time.Millisecond), matched.Round(time.Millisecond), n, peakRSS(), writes, longest.Round(time.Millisecond), longestImport.Round(time.Millisecond))
	if n < documents*9/10 {
		t.Errorf("got %d transactions matched, want at least %d", n, documents*9/10)
	}
}

// scaleDocuments stores n invoices of the client, read as the analysis
// records them: invoice i is RE-<i> of 10.00 + i cents.
func scaleDocuments(t *testing.T, api *testAPI, ws string, n int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := api.store.CreateFile(ctx, api.client.ID, db.FileCreate{ID: db.NewID(), WorkspaceID: ws,
					Name: fmt.Sprintf("RE-%06d.pdf", i), MimeType: "application/pdf", Size: 9, SHA256: make([]byte, 32)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	kind := "invoice"
	for {
		jobs, err := api.store.ClaimAnalyses(ctx, db.LaneFast, 64)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return
		}
		for _, j := range jobs {
			wg.Go(func() {
				var i int
				fmt.Sscanf(j.Name, "RE-%06d.pdf", &i)
				fields := db.DocumentFields{Values: map[string]string{document.DocumentNumber: fmt.Sprintf("RE-%06d", i),
					document.IssueDate: "2026-03-01", document.Currency: "EUR", document.TotalAmount: fmt.Sprintf("%d.%02d", 10+i/100, i%100),
					document.IssuerName: fmt.Sprintf("Lieferant %d GmbH", i)}}
				if _, _, err := api.store.FinishAnalysis(ctx, j, db.AnalysisResult{Status: db.AnalysisDone, Kind: &kind, Fields: &fields}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
}

// scaleStatement is an MT940 statement of n entries: the first docs pay
// the invoices of scaleDocuments by their numbers, the rest are card
// payments of other amounts.
func scaleStatement(n, docs int) []byte {
	var b strings.Builder
	b.WriteString(":20:STARTUMS\n:25:" + bkIBAN + "\n:28C:00001/001\n:60F:C260301EUR0,00\n")
	sum := int64(0)
	for i := range n {
		day := fmt.Sprintf("26%02d%02d", 3+i%9, 1+i%28)
		if i < docs {
			day = fmt.Sprintf("2603%02d", 2+i%28)
			cents := int64(1000 + i)
			sum -= cents
			fmt.Fprintf(&b, ":61:%s%sD%d,%02dNTRFNONREF//P%07d\n:86:106?00SEPA?20RE-%06d?32Lieferant %d GmbH\n",
				day, day[2:], cents/100, cents%100, i, i, i)
			continue
		}
		cents := int64(5 + i%777)
		sum -= cents
		fmt.Fprintf(&b, ":61:%s%sD%d,%02dNMSCNONREF//C%07d\n:86:106?00KARTE?20Kartenzahlung %d?32Laden %d\n",
			day, day[2:], cents/100, cents%100, i, i, i%500)
	}
	mark := "C"
	if sum < 0 {
		mark, sum = "D", -sum
	}
	fmt.Fprintf(&b, ":62F:%s261231EUR%d,%02d\n-\n", mark, sum/100, sum%100)
	return []byte(b.String())
}

// peakRSS is the process's peak resident set since it was last reset.
func peakRSS() string {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(status)) {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.Join(strings.Fields(line)[1:], " ")
		}
	}
	return "unknown"
}

// TestBankImportMemory imports 8 statements of 20 MiB at once through the
// API and reports the process's peak RSS; ACCTAPI_BANK_SCALE=1 runs it.
//
//	ACCTAPI_BANK_SCALE=1 go test -run TestBankImportMemory -v -timeout 30m ./handlers
func TestBankImportMemory(t *testing.T) {
	if os.Getenv("ACCTAPI_BANK_SCALE") == "" {
		t.Skip("ACCTAPI_BANK_SCALE=1 runs it")
	}
	api := newTestAPI(t)
	ibans := []string{"DE89370400440532013000", "DE02120300000000202051", "DE75512108001245126199", "DE12500105170648489890",
		"DE02500105170137075030", "DE02100500000054540402", "DE02300209000106531065", "DE02200505501015871393"}
	files := make([][]byte, len(ibans))
	for i, iban := range ibans {
		files[i] = scaleFile(iban, bankstatement.MaxSize)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("peak RSS not reset: %v", err)
	}
	t.Logf("RSS before: %s", peakRSS())
	start := time.Now()
	var wg sync.WaitGroup
	for i := range files {
		wg.Go(func() {
			res := api.bkImport(t, api.accountantKey, api.client.ID, "", files[i])
			if res.status != 201 {
				t.Errorf("import %d: got %d %.300s", i, res.status, res.body)
			}
		})
	}
	wg.Wait()
	t.Logf("8 imports of %d bytes each in %v; peak RSS %s", len(files[0]), time.Since(start).Round(time.Millisecond), peakRSS())
}

// scaleFile is an MT940 statement of the account of at most size bytes
// and at most bankstatement.MaxEntries entries, each with a long remittance.
func scaleFile(iban string, size int) []byte {
	var b strings.Builder
	b.WriteString(":20:STARTUMS\n:25:" + iban + "\n:28C:00001/001\n:60F:C260301EUR0,00\n")
	sum := int64(0)
	for i := 0; i < bankstatement.MaxEntries && b.Len() < size-300; i++ {
		cents := int64(5 + i%777)
		sum -= cents
		fmt.Fprintf(&b, ":61:2603%02d03%02dD%d,%02dNMSCNONREF//C%07d\n:86:106?00KARTE?20Kartenzahlung %07d Filiale?21Hauptbahnhof Hamburg Gleis?2212 Danke fuer Ihren Einkauf?32Laden %d\n",
			1+i%28, 1+i%28, cents/100, cents%100, i, i, i%500)
	}
	fmt.Fprintf(&b, ":62F:D260331EUR%d,%02d\n-\n", -sum/100, -sum%100)
	return []byte(b.String())
}
