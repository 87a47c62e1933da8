package handlers

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"acctapi/db"
	"acctapi/testprog"
)

// chromiumPath is the browser the page tests drive. Without one they skip,
// saying how to install it, but in CI (CI=true) they fail.
func chromiumPath(t *testing.T, what string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium: install it (apt-get install chromium) to test " + what + " in a browser"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// screenshotDir is where the page tests write their screenshots: the
// test's temp dir, or ACCTAPI_SCREENSHOT_DIR to keep them after the test.
func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("ACCTAPI_SCREENSHOT_DIR"); dir != "" {
		return dir
	}
	return t.TempDir()
}

// browserTab is a tab of headless Chromium with what it asked for and
// what it logged.
type browserTab struct {
	ctx       context.Context
	mu        sync.Mutex
	requested []string
	logged    []string
}

// openTab opens a tab in the browser of allocCtx, with scripts disabled
// unless script, asking for the languages acceptLanguage names (when not
// "", instead of the browser's own).
func openTab(t *testing.T, allocCtx context.Context, script bool, acceptLanguage string) *browserTab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	tab := &browserTab{}
	// Listen opens the tab: its context must have no deadline.
	err := chromedp.Listen(ctx, func(ev any) {
		tab.mu.Lock()
		defer tab.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			tab.requested = append(tab.requested, e.Request.URL)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				tab.logged = append(tab.logged, string(e.Entry.Source)+": "+e.Entry.Text)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(stop)
	tab.ctx = run
	if _, err := chromedp.Call(run, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(run, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if acceptLanguage != "" {
		if _, err := chromedp.Call(run, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
			Headers: network.Headers{"Accept-Language": acceptLanguage}}); err != nil {
			t.Fatal(err)
		}
	}
	if !script {
		if _, err := chromedp.Call(run, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
	}
	return tab
}

// navigate opens path on the server and checks the status of the answer.
func (tab *browserTab) navigate(t *testing.T, server, path string, status int64) {
	t.Helper()
	res, err := chromedp.Run(tab.ctx, chromedp.NavigateResponse(server+path))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != status {
		t.Fatalf("GET %s: got %d, want %d", path, res.Status, status)
	}
}

// do runs actions, failing the test on an error.
func (tab *browserTab) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tab.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// text is the text of the first element sel selects.
func (tab *browserTab) text(t *testing.T, sel string) string {
	t.Helper()
	text, err := chromedp.Run(tab.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return strings.Join(strings.Fields(text), " ")
}

// wantText checks the text of the first element sel selects.
func (tab *browserTab) wantText(t *testing.T, sel, want string) {
	t.Helper()
	if got := tab.text(t, sel); got != want {
		t.Errorf("%s: got %q, want %q", sel, got, want)
	}
}

// shoot writes screenshots of the page on a desktop and 360 px wide, as a
// phone shows it, and checks that neither is wider than its screen.
func (tab *browserTab) shoot(t *testing.T, dir, name string) {
	t.Helper()
	for _, view := range []struct {
		name          string
		width, height int64
	}{{"360px", 360, 740}, {"desktop", 1280, 900}} {
		tab.do(t, chromedp.EmulateViewport(view.width, view.height))
		width, err := chromedp.Run(tab.ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if width > view.width {
			t.Errorf("%s %s: the page is %d px wide, wider than the %d px screen", name, view.name, width, view.width)
		}
		png, err := chromedp.Run(tab.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		shot := filepath.Join(dir, "collect-"+name+"-"+view.name+".png")
		if err := os.WriteFile(shot, png, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", shot)
	}
}

// wantClean checks that the tab asked nothing of any host but the server
// and logged no error or warning (a script error or a blocked load would).
func (tab *browserTab) wantClean(t *testing.T, server string) {
	t.Helper()
	host, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	tab.mu.Lock()
	defer tab.mu.Unlock()
	for _, r := range tab.requested {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != host.Scheme || u.Host != host.Host {
			t.Errorf("the page asked %s, not the server", r)
		}
	}
	for _, l := range tab.logged {
		t.Errorf("browser log: %s", l)
	}
}

// pageTiming is what the browser measured of the page's first load.
type pageTiming struct {
	FirstContentfulPaint float64 `json:"fcp"`
	DOMContentLoaded     float64 `json:"dcl"`
	HTMLBytes            int64   `json:"html"`
	Files                []struct {
		Name     string `json:"name"`
		Transfer int64  `json:"transfer"`
		Body     int64  `json:"body"`
	} `json:"files"`
}

// TestCollectPageInBrowser drives the page in headless Chromium: uploads
// through the file inputs with the script (progress, then the new states),
// then without it through the plain forms, submit, and the pages of an
// expired and a revoked link. Each state is shot on a desktop and 360 px
// wide (-v logs the paths).
func TestCollectPageInBrowser(t *testing.T) {
	testprog.SkipShort(t, "drives Chromium")
	browser := chromiumPath(t, "the collect page")
	api := newTestAPI(t)
	dir := screenshotDir(t)
	files := t.TempDir()
	upload := func(name string, size int) string {
		content := make([]byte, size)
		rand.Read(content)
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	statement := upload("statement-october-2026.pdf", 400_000)
	payslip := upload("payslip-october.pdf", 120_000)
	photo := upload("IMG_20261102_093015.jpg", 900_000)
	scan := upload("scan-600dpi.tiff", 3*testMaxUpload)

	// Root in a container has no sandbox to give the browser.
	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))...)
	defer cancel()

	t.Run("with JavaScript", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en")
		statements, payslips := "#item-"+pc.collect.Items[0].ID, "#item-"+pc.collect.Items[1].ID
		tab := openTab(t, allocCtx, true, "")
		tab.navigate(t, api.server.URL, "/collect/"+pc.token, http.StatusOK)
		tab.do(t, chromedp.WaitVisible(chromedp.CSS("html.js .pick-many")))
		// The paint is recorded after it happens: wait for it, a while.
		timing, err := chromedp.Run(tab.ctx, chromedp.Evaluate[pageTiming](`new Promise(done => {
			const report = fcp => {
				const nav = performance.getEntriesByType("navigation")[0];
				done({fcp: fcp ? fcp.startTime : -1, dcl: nav.domContentLoadedEventEnd, html: nav.transferSize,
					files: performance.getEntriesByType("resource").map(r => ({name: r.name.split("/").pop(), transfer: r.transferSize, body: r.encodedBodySize}))});
			};
			new PerformanceObserver(list => {
				const fcp = list.getEntriesByName("first-contentful-paint")[0];
				if (fcp) {
					report(fcp);
				}
			}).observe({type: "paint", buffered: true});
			setTimeout(report, 5000);
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("first contentful paint %.0f ms, DOMContentLoaded %.0f ms; HTML %d bytes over the wire", timing.FirstContentfulPaint, timing.DOMContentLoaded, timing.HTMLBytes)
		for _, f := range timing.Files {
			t.Logf("%s: %d bytes over the wire (%d of body)", f.Name, f.Transfer, f.Body)
		}
		tab.shoot(t, dir, "open")

		// The keyboard reaches the first item's file picker first.
		tab.do(t, chromedp.KeyEvent("\t"))
		if focused, err := chromedp.Run(tab.ctx, chromedp.Evaluate[string](`document.activeElement.id`)); err != nil || focused != "file-"+pc.collect.Items[0].ID {
			t.Errorf("the first Tab focuses %q (%v), want the first item's file input", focused, err)
		}

		// Each upload row that reaches its end is counted as it is marked
		// done with a full bar, before the item is fetched again.
		tab.do(t, chromedp.Evaluate[chromedp.Void](`window.finished = new Set();
			new MutationObserver(records => records.forEach(r => {
				if (r.target.matches(".progress li.done") && r.target.querySelector("progress").value === 100) {
					window.finished.add(r.target);
				}
			})).observe(document.body, {subtree: true, attributes: true, attributeFilter: ["class"]})`))
		// A file over the limit is refused before it is sent.
		receipts := "#item-" + pc.collect.Items[2].ID
		tab.do(t,
			chromedp.SetUploadFiles(chromedp.CSS(receipts+" input.file"), []string{scan}),
			chromedp.WaitVisible(chromedp.CSS(receipts+" .progress li.failed")),
		)
		tab.wantText(t, receipts+" .progress", "scan-600dpi.tiff Too large: a file can be at most 1.0 MB.")
		tab.do(t,
			chromedp.SetUploadFiles(chromedp.CSS(statements+" input.file"), []string{statement}),
			chromedp.WaitVisible(chromedp.CSS(statements+".item-received .files li")),
			chromedp.SetUploadFiles(chromedp.CSS(payslips+" input.file"), []string{payslip, photo}),
			chromedp.WaitVisible(chromedp.CSS(payslips+".item-received .files li:nth-child(2)")),
		)
		finished, err := chromedp.Run(tab.ctx, chromedp.Evaluate[int](`window.finished.size`))
		if err != nil || finished != 3 {
			t.Errorf("progress bars finished: got %d (%v), want 3", finished, err)
		}
		tab.wantText(t, statements+" .state", "Received")
		tab.wantText(t, statements+" .files", "statement-october-2026.pdf 400 kB Remove")
		tab.wantText(t, payslips+" .files", "payslip-october.pdf 120 kB Remove IMG_20261102_093015.jpg 900 kB Remove")
		tab.wantText(t, "#summary", "2 of 3 documents are here Everything required is here: you can submit now.")
		tab.wantText(t, "#live", "“Payslips” received.")
		tab.shoot(t, dir, "uploaded")

		// The accountant asks for the statements again: the item says why,
		// and a file dropped on it makes it received again.
		reason, rejected := "The statement of the second account is missing.", db.ItemRejected
		if _, err := api.store.UpdateCollectItem(context.Background(), api.client.ID, pc.collect.ID, pc.collect.Items[0].ID,
			db.CollectItemUpdate{Status: db.Update[string]{Set: true, Value: &rejected}, RejectionReason: db.Update[string]{Set: true, Value: &reason}}); err != nil {
			t.Fatal(err)
		}
		tab.do(t, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("html.js "+statements+".item-rejected")))
		tab.wantText(t, statements+" .state", "Asked again")
		tab.wantText(t, statements+" .reason", "Firm One asks again: The statement of the second account is missing.")
		tab.wantText(t, "#summary", "1 of 2 required documents is still missing")
		tab.shoot(t, dir, "asked-again")
		tab.do(t, chromedp.Evaluate[chromedp.Void](`(() => {
			const files = new DataTransfer();
			files.items.add(new File(["%PDF-1.4 second account"], "statement-account-2.pdf", {type: "application/pdf"}));
			const at = document.querySelector("`+statements+` .desc");
			at.dispatchEvent(new DragEvent("dragover", {dataTransfer: files, bubbles: true, cancelable: true}));
			at.dispatchEvent(new DragEvent("drop", {dataTransfer: files, bubbles: true, cancelable: true}));
		})()`), chromedp.WaitVisible(chromedp.CSS(statements+".item-received .files li:nth-child(2)")))
		tab.wantText(t, statements+" .files", "statement-october-2026.pdf 400 kB Remove statement-account-2.pdf 23 B Remove")
		tab.wantText(t, "#summary", "2 of 3 documents are here Everything required is here: you can submit now.")

		tab.do(t, chromedp.Click(chromedp.CSS(".submit button")), chromedp.WaitVisible(chromedp.CSS(".thanks")))
		tab.wantText(t, "h1", "Thank you — Firm One has your documents.")
		tab.shoot(t, dir, "submitted")
		tab.wantClean(t, api.server.URL)
	})

	// A file read as another kind than its item asks for: the page with its
	// script learns it without a reload once the reading ends, and says so
	// under the file; without the script, the next load says it.
	t.Run("a file of another kind", func(t *testing.T) {
		statementKind, payslipKind := "bank_statement", "payslip"
		pc := api.mustCreatePageCollect("en",
			db.CollectItemCreate{Title: "Bank statements", Required: true, Kind: &statementKind},
			db.CollectItemCreate{Title: "Payslips", Required: false, Kind: &payslipKind})
		statements := "#item-" + pc.collect.Items[0].ID
		tab := openTab(t, allocCtx, true, "")
		tab.navigate(t, api.server.URL, "/collect/"+pc.token, http.StatusOK)
		tab.do(t,
			chromedp.WaitVisible(chromedp.CSS("html.js .pick-many")),
			chromedp.Evaluate[chromedp.Void](`window.sameLoad = true`),
			chromedp.SetUploadFiles(chromedp.CSS(statements+" input.file"), []string{payslip}),
			chromedp.WaitVisible(chromedp.CSS(statements+".item-received .files li")),
		)
		if reading, err := chromedp.Run(tab.ctx, chromedp.Evaluate[bool](`document.querySelector("`+statements+` .item-files").hasAttribute("data-reading")`)); err != nil || !reading {
			t.Errorf("an item whose file is being read is not marked data-reading (%v)", err)
		}
		// The reading ends after the upload, as the worker's would.
		api.clFinishAnalyses(t, map[string]string{"payslip-october.pdf": "payslip"})
		tab.do(t, chromedp.WaitVisible(chromedp.CSS(statements+" .kind-note")))
		tab.wantText(t, statements+" .kind-note", "This looks like a payslip; this item asks for bank statements. If it is the right file, you can leave it as it is.")
		tab.wantText(t, statements+" .file-kind", "Payslip")
		if same, err := chromedp.Run(tab.ctx, chromedp.Evaluate[bool](`window.sameLoad === true`)); err != nil || !same {
			t.Errorf("the page was loaded again to learn the kind (%v)", err)
		}
		tab.shoot(t, dir, "kind-mismatch")
		tab.wantClean(t, api.server.URL)

		// The page is in the collect's language: set to German, it says it in German.
		if res := api.do(request{method: "PATCH", path: "/v1/collects/" + pc.collect.ID, key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"locale": "de"}}); res.status != http.StatusOK {
			t.Fatalf("PATCH locale: %d %s", res.status, res.body)
		}
		nojs := openTab(t, allocCtx, false, "en-US,en;q=0.9")
		nojs.navigate(t, api.server.URL, "/collect/"+pc.token, http.StatusOK)
		nojs.wantText(t, statements+" .kind-note", "Das sieht nach einer Gehaltsabrechnung aus; hier sind Kontoauszüge gefragt. Wenn es die richtige Datei ist, können Sie sie so lassen.")
		nojs.wantText(t, statements+" .file-kind", "Gehaltsabrechnung")
		nojs.shoot(t, dir, "nojs-kind-mismatch")
	})

	t.Run("without JavaScript", func(t *testing.T) {
		pc := api.mustCreatePageCollect("de")
		statements, payslips := "#item-"+pc.collect.Items[0].ID, "#item-"+pc.collect.Items[1].ID
		tab := openTab(t, allocCtx, false, "de-DE,de;q=0.9,en;q=0.5")
		tab.navigate(t, api.server.URL, "/collect/"+pc.token, http.StatusOK)
		if js, err := chromedp.Run(tab.ctx, chromedp.Evaluate[string](`document.documentElement.className`)); err != nil || js != "" {
			t.Fatalf("the page's script ran (class %q, %v)", js, err)
		}
		tab.shoot(t, dir, "nojs-open")

		tab.do(t, chromedp.Click(chromedp.CSS(".submit button")), chromedp.WaitVisible(chromedp.CSS("#notice")))
		tab.wantText(t, "#notice", "Noch nicht abgesendet: Diese Unterlagen fehlen noch. Bank statements Payslips Fügen Sie sie oben hinzu und senden Sie dann erneut ab.")
		tab.shoot(t, dir, "nojs-missing")

		// The server refuses a file over the limit, and the page says so:
		// the browser gets the answer, not a broken connection.
		tab.navigate(t, api.server.URL, "/collect/"+pc.token, http.StatusOK)
		tab.do(t,
			chromedp.SetUploadFiles(chromedp.CSS(payslips+" input.file"), []string{scan}),
			chromedp.Click(chromedp.CSS(payslips+" .send")),
			chromedp.WaitVisible(chromedp.CSS(payslips+" .notice")),
		)
		tab.wantText(t, payslips+" .notice", "Die Datei für „Payslips“ ist zu groß: Eine Datei darf höchstens 1,0 MB haben. Versuchen Sie eine kleinere Datei oder scannen Sie mit geringerer Auflösung.")
		tab.shoot(t, dir, "nojs-too-large")

		tab.do(t,
			chromedp.SetUploadFiles(chromedp.CSS(statements+" input.file"), []string{statement}),
			chromedp.Click(chromedp.CSS(statements+" .send")),
			chromedp.WaitVisible(chromedp.CSS(statements+".item-received")),
		)
		tab.wantText(t, statements+" .notice", "„Bank statements“ erhalten. Vielen Dank.")
		tab.wantText(t, statements+" .files", "statement-october-2026.pdf 400 kB Entfernen")
		tab.wantText(t, "#summary", "1 von 2 erforderlichen Unterlagen fehlt noch")
		tab.shoot(t, dir, "nojs-received")

		// The file was the wrong one: its button takes it back, and the
		// item is missing again until the right one comes.
		tab.do(t,
			chromedp.Click(chromedp.CSS(statements+" .remove button")),
			chromedp.WaitVisible(chromedp.CSS(statements+".item-missing .notice")),
		)
		tab.wantText(t, statements+" .notice", "„Bank statements“: Die Datei wurde aus dieser Anfrage zurückgenommen.")
		tab.wantText(t, "#summary", "2 von 2 erforderlichen Unterlagen fehlen noch")
		tab.shoot(t, dir, "nojs-removed")
		tab.do(t,
			chromedp.SetUploadFiles(chromedp.CSS(statements+" input.file"), []string{statement}),
			chromedp.Click(chromedp.CSS(statements+" .send")),
			chromedp.WaitVisible(chromedp.CSS(statements+".item-received")),
		)

		tab.do(t,
			chromedp.SetUploadFiles(chromedp.CSS(payslips+" input.file"), []string{photo}),
			chromedp.Click(chromedp.CSS(payslips+" .send")),
			chromedp.WaitVisible(chromedp.CSS(payslips+".item-received")),
			chromedp.Click(chromedp.CSS(".submit button")),
			chromedp.WaitVisible(chromedp.CSS(".thanks")),
		)
		tab.wantText(t, "h1", "Vielen Dank — Firm One hat Ihre Unterlagen.")
		tab.shoot(t, dir, "nojs-submitted")
		tab.wantClean(t, api.server.URL)
	})

	t.Run("expired", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en")
		api.clock.Advance(15 * 24 * time.Hour)
		defer api.clock.Advance(-15 * 24 * time.Hour)
		tab := openTab(t, allocCtx, true, "")
		tab.navigate(t, api.server.URL, "/collect/"+pc.token, http.StatusGone)
		tab.wantText(t, "h1", "This link has expired")
		tab.shoot(t, dir, "expired")
	})

	t.Run("revoked", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en")
		if _, err := api.store.RevokeCollectSession(context.Background(), api.client.ID, pc.collect.ID, pc.session.ID); err != nil {
			t.Fatal(err)
		}
		tab := openTab(t, allocCtx, true, "")
		tab.navigate(t, api.server.URL, "/collect/"+pc.token, http.StatusNotFound)
		tab.wantText(t, "h1", "This link does not work")
		tab.shoot(t, dir, "revoked")
	})
}
