package handlers

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	"acctapi/testprog"
)

// TestReferenceFiles checks the page and its files over HTTP: the strict
// policy on each, the files the page names, their ETag and 304, and the 404
// of a name that is not one of them.
func TestReferenceFiles(t *testing.T) {
	api := newTestAPI(t)
	get := func(t *testing.T, path string, header http.Header) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest("GET", api.server.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}

	res, page := get(t, "/v1/docs", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /v1/docs: got %d %s, want 200 text/html", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if got := res.Header.Get("Content-Security-Policy"); got != referenceCSP {
		t.Errorf("page CSP: got %q, want %q", got, referenceCSP)
	}
	for name, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Cache-Control": "no-store"} {
		if got := res.Header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("page %s: got %q, want %q once", name, got, want)
		}
	}
	for _, name := range []string{"init.js", "reference.css", "swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"} {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(string(page), `"docs/`+name+`"`) {
				t.Errorf("the page does not load docs/%s", name)
			}
			res, body := get(t, "/v1/docs/"+name, nil)
			if res.StatusCode != http.StatusOK || len(body) == 0 {
				t.Fatalf("GET /v1/docs/%s: got %d with %d bytes, want 200 with the file", name, res.StatusCode, len(body))
			}
			for name, want := range map[string]string{"Content-Security-Policy": referenceCSP, "X-Content-Type-Options": "nosniff",
				"X-Frame-Options": "DENY", "Cache-Control": "no-cache"} {
				if got := res.Header.Values(name); len(got) != 1 || got[0] != want {
					t.Errorf("%s: got %q, want %q once", name, got, want)
				}
			}
			etag := res.Header.Get("ETag")
			res, body = get(t, "/v1/docs/"+name, http.Header{"If-None-Match": {etag}})
			if etag == "" || res.StatusCode != http.StatusNotModified || len(body) != 0 {
				t.Errorf("If-None-Match %s: got %d with %d bytes, want 304 and no body", etag, res.StatusCode, len(body))
			}
		})
	}
	missing := api.do(request{method: "GET", path: "/v1/docs/index.html"})
	wantError(t, missing, http.StatusNotFound, "not_found", "not_found", `no reference file "index.html"`)
}

// TestReferenceInBrowser opens /v1/docs in headless Chromium: the page must
// list every operation and webhook event of the document, log no error (a
// blocked load or script would), and ask nothing of any host but the server.
// Its screenshots, desktop and 360 px wide, are kept in the test's temp
// dir (-v logs the paths).
func TestReferenceInBrowser(t *testing.T) {
	testprog.SkipShort(t, "drives Chromium")
	browser := chromiumPath(t, "/v1/docs")
	api := newTestAPI(t)
	res := api.do(request{method: "GET", path: "/v1/openapi.json"})
	doc, err := openapi3.NewLoader().LoadFromData(res.body)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			want = append(want, op.OperationID)
		}
	}
	for _, item := range doc.Webhooks {
		for _, op := range item.Operations() {
			want = append(want, op.OperationID)
		}
	}
	slices.Sort(want)

	// Root in a container has no sandbox to give the browser.
	allocCtx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 1024))...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()

	var mu sync.Mutex
	var requested, logged []string
	// Listen starts the browser: its context must have no deadline.
	err = chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requested = append(requested, e.Request.URL)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				logged = append(logged, string(e.Entry.Source)+": "+e.Entry.Text)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if _, err := chromedp.Call(run, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(run, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(run,
		chromedp.Navigate(api.server.URL+"/v1/docs"),
		chromedp.WaitVisible(chromedp.CSS(".opblock-summary-operation-id")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Swagger UI renders the webhooks after the paths: wait for all.
	js := `[...document.querySelectorAll(".opblock-summary-operation-id")].map(e => e.textContent.trim())`
	var got []string
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got, err = chromedp.Run(run, chromedp.Evaluate[[]string](js)); err != nil {
			t.Fatal(err)
		}
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Screenshots of the page on a desktop and 360 px wide, as a phone shows
	// it, to look at: in the test's temp dir, or in ACCTAPI_SCREENSHOT_DIR
	// to keep them after the test.
	dir := screenshotDir(t)
	for _, view := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 1024}, {"360px", 360, 740}} {
		if err := chromedp.Do(run, chromedp.EmulateViewport(view.width, view.height)); err != nil {
			t.Fatal(err)
		}
		// Nothing may push the page wider than the screen: a phone would
		// scroll sideways to read it.
		width, err := chromedp.Run(run, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if width > view.width {
			t.Errorf("%s: the page is %d px wide, wider than the %d px screen", view.name, width, view.width)
		}
		if view.width == 360 {
			// A group's description is under its name, not squeezed beside it.
			beside, err := chromedp.Run(run, chromedp.Evaluate[[]string](`[...document.querySelectorAll(".opblock-tag")].
				filter(h => { const s = h.querySelector("small"), a = h.querySelector("a"); return s && a &&
					s.getBoundingClientRect().top < a.getBoundingClientRect().bottom - 1 }).
				map(h => h.querySelector("a").textContent.trim())`))
			if err != nil {
				t.Fatal(err)
			}
			if len(beside) > 0 {
				t.Errorf("360px: the descriptions of %v are beside their names, not under them", beside)
			}
		}
		png, err := chromedp.Run(run, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		shot := filepath.Join(dir, "docs-"+view.name+".png")
		if err := os.WriteFile(shot, png, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", shot)
	}

	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("operations shown: got %d %v, want the document's %d %v", len(got), got, len(want), want)
	}
	server, err := url.Parse(api.server.URL)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requested) == 0 {
		t.Error("no request recorded")
	}
	for _, r := range requested {
		u, err := url.Parse(r)
		if err == nil && u.Scheme == "data" {
			continue // the content is in the URL: no host is asked
		}
		if err != nil || u.Scheme != server.Scheme || u.Host != server.Host {
			t.Errorf("the page asked %s, not the server", r)
		}
	}
	for _, l := range logged {
		t.Errorf("browser log: %s", l)
	}
}
