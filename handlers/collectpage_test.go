package handlers

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// pageCollect is a collect of the test firm's client with a live link.
type pageCollect struct {
	collect *db.Collect
	session *db.CollectSession
	token   string
}

// mustCreatePageCollect creates a collect in locale with two items (a
// required one and an optional one unless items says otherwise) and a
// link to it valid for 14 days.
func (api *testAPI) mustCreatePageCollect(locale string, items ...db.CollectItemCreate) *pageCollect {
	api.t.Helper()
	ctx := context.Background()
	if len(items) == 0 {
		desc := "All accounts, October 2026, as PDF."
		items = []db.CollectItemCreate{
			{Title: "Bank statements", Description: &desc, Required: true},
			{Title: "Payslips", Required: true},
			{Title: "Receipts over 250 EUR", Required: false},
		}
	}
	message := "Dear Client One,\nplease send the documents for October.\nThank you!"
	due := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	c, err := api.store.CreateCollect(ctx, api.client.ID, db.CollectCreate{
		WorkspaceID: api.mustCreateWorkspace(api.client.ID, "Bookkeeping"),
		Title:       "Documents for October 2026", Message: &message, DueDate: &due, Locale: locale, Items: items,
	})
	if err != nil {
		api.t.Fatal(err)
	}
	token, hash, err := auth.NewCollectToken()
	if err != nil {
		api.t.Fatal(err)
	}
	s, err := api.store.CreateCollectSession(ctx, api.client.ID, c.ID, db.CollectSessionCreate{
		ExpiresAt: api.clock.Now().Add(14 * 24 * time.Hour), TokenHash: hash,
	})
	if err != nil {
		api.t.Fatal(err)
	}
	return &pageCollect{collect: c, session: s, token: token}
}

// pageResponse is an answer of a page route, not followed if a redirect.
type pageResponse struct {
	status int
	header http.Header
	body   string
}

// page sends a request to a page route as a browser would, without
// following a redirect.
func (api *testAPI) page(method, path string, header http.Header, body io.Reader) *pageResponse {
	api.t.Helper()
	req, err := http.NewRequest(method, api.server.URL+path, body)
	if err != nil {
		api.t.Fatal(err)
	}
	for name, values := range header {
		req.Header[name] = values
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		api.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		api.t.Fatal(err)
	}
	return &pageResponse{res.StatusCode, res.Header, string(raw)}
}

// pageForm is the multipart body of an item's form with one file.
func pageForm(t *testing.T, name string, content []byte) (http.Header, io.Reader) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(content)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return http.Header{"Content-Type": {mw.FormDataContentType()}}, &body
}

// wantPageHeaders checks the headers every page and redirect of the collect
// routes carries.
func wantPageHeaders(t *testing.T, res *pageResponse) {
	t.Helper()
	for name, want := range map[string]string{
		"Content-Security-Policy": collectCSP, "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
		"X-Frame-Options": "DENY", "X-Robots-Tag": "noindex", "X-Content-Type-Options": "nosniff",
	} {
		if got := res.header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s: got %q, want %q once", name, got, want)
		}
	}
}

// wantPage checks a page's status, type and headers, and that it holds
// each of texts.
func wantPage(t *testing.T, res *pageResponse, status int, texts ...string) {
	t.Helper()
	if res.status != status || res.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("got %d %s, want %d text/html: %s", res.status, res.header.Get("Content-Type"), status, res.body)
	}
	wantPageHeaders(t, res)
	for _, text := range texts {
		if !strings.Contains(res.body, text) {
			t.Errorf("the page lacks %q:\n%s", text, res.body)
		}
	}
	if strings.Contains(res.body, " style=") || regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(
		strings.Replace(res.body, `<script type="application/json" id="collect-strings">`, "", 1)) {
		t.Errorf("the page has inline style or script, which its policy refuses")
	}
}

func TestCollectPage(t *testing.T) {
	api := newTestAPI(t)

	t.Run("open", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en")
		res := api.page("GET", "/collect/"+pc.token, nil, nil)
		wantPage(t, res, http.StatusOK, `<html lang="en">`, "Firm One", "Secure document upload for Client One",
			"<h1>Documents for October 2026</h1>", "Dear Client One,\nplease send", "Please send by 30 November 2026",
			"Bank statements", "All accounts, October 2026, as PDF.", "Required", "Optional", "Missing", "Not added yet",
			"2 of 2 required documents are still missing", "Submit documents", "This link works until 5 December 2026.",
			`action="/collect/`+pc.token+`/items/`+pc.collect.Items[0].ID+`"`, `enctype="multipart/form-data"`,
			`action="/collect/`+pc.token+`/submit"`,
			`data-upload="/v1/collect-sessions/`+pc.token+`/items/`+pc.collect.Items[1].ID+`/files"`,
			`<label class="pick" for="file-`+pc.collect.Items[0].ID+`">`, collectAssetURL["collect.css"], collectAssetURL["collect.js"])
		if strings.Contains(res.body, "\u201cBank statements\u201d received") {
			t.Error("the page says an item was received before any upload")
		}
	})

	t.Run("rejected item shows the reason", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en")
		reason := "The statement for account 2 is missing."
		rejected := db.ItemRejected
		if _, err := api.store.UpdateCollectItem(context.Background(), api.client.ID, pc.collect.ID, pc.collect.Items[0].ID,
			db.CollectItemUpdate{Status: db.Update[string]{Set: true, Value: &rejected}, RejectionReason: db.Update[string]{Set: true, Value: &reason}}); err != nil {
			t.Fatal(err)
		}
		res := api.page("GET", "/collect/"+pc.token, nil, nil)
		wantPage(t, res, http.StatusOK, "Asked again", "Firm One asks again: The statement for account 2 is missing.", "state-rejected")
	})

	t.Run("submitted", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en", db.CollectItemCreate{Title: "Receipts", Required: false})
		if _, err := api.store.SubmitCollect(context.Background(), auth.HashCollectToken(pc.token)); err != nil {
			t.Fatal(err)
		}
		res := api.page("GET", "/collect/"+pc.token, nil, nil)
		wantPage(t, res, http.StatusOK, "Thank you — Firm One has your documents.", "Sent on 21 November 2026.", "What you sent",
			"Receipts", "No file", "Ask Firm One to reopen this request")
		if strings.Contains(res.body, "<form") {
			t.Error("the confirmation still offers a form")
		}
	})

	// A link that no longer works says so, and names nothing of the collect:
	// an expired one names only the firm to ask, which its holder was shown.
	gone := func(t *testing.T, res *pageResponse, status int, texts ...string) {
		t.Helper()
		wantPage(t, res, status, texts...)
		secrets := []string{"Client One", "October", "Bank statements"}
		if status != http.StatusGone {
			secrets = append(secrets, "Firm One")
		}
		for _, secret := range secrets {
			if strings.Contains(res.body, secret) {
				t.Errorf("the page of a dead link shows %q", secret)
			}
		}
	}
	change := func(t *testing.T, pc *pageCollect, status string) {
		t.Helper()
		if _, err := api.store.UpdateCollect(context.Background(), api.client.ID, pc.collect.ID,
			db.CollectUpdate{Status: db.Update[string]{Set: true, Value: &status}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, status := range []string{db.CollectClosed, db.CollectCancelled} {
		t.Run(strings.ToLower(status), func(t *testing.T) {
			pc := api.mustCreatePageCollect("en")
			change(t, pc, status)
			gone(t, api.page("GET", "/collect/"+pc.token, nil, nil), http.StatusGone, "This link has expired", "Ask Firm One for a new one.")
		})
	}
	t.Run("expired", func(t *testing.T) {
		pc := api.mustCreatePageCollect("de")
		api.clock.Advance(15 * 24 * time.Hour)
		defer api.clock.Advance(-15 * 24 * time.Hour)
		gone(t, api.page("GET", "/collect/"+pc.token, http.Header{"Accept-Language": {"de-DE,de;q=0.9"}}, nil),
			http.StatusGone, `<html lang="de">`, "Dieser Link ist abgelaufen", "Bitten Sie Firm One um einen neuen Link.")
	})
	var notFound string
	t.Run("revoked", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en")
		if _, err := api.store.RevokeCollectSession(context.Background(), api.client.ID, pc.collect.ID, pc.session.ID); err != nil {
			t.Fatal(err)
		}
		res := api.page("GET", "/collect/"+pc.token, nil, nil)
		gone(t, res, http.StatusNotFound, "This link does not work")
		notFound = res.body
	})
	t.Run("deleted", func(t *testing.T) {
		pc := api.mustCreatePageCollect("en")
		if _, err := api.store.DeleteCollect(context.Background(), api.client.ID, pc.collect.ID); err != nil {
			t.Fatal(err)
		}
		gone(t, api.page("GET", "/collect/"+pc.token, nil, nil), http.StatusNotFound, "This link does not work")
	})
	// A token never issued, of the right form or not, gets the very page a
	// revoked one gets: nothing tells whether a token ever existed.
	for name, token := range map[string]string{"unknown": strings.Repeat("A", 43), "malformed": "not-a-token", "long": strings.Repeat("A", 500)} {
		t.Run(name, func(t *testing.T) {
			res := api.page("GET", "/collect/"+token, nil, nil)
			gone(t, res, http.StatusNotFound)
			if res.body != notFound {
				t.Errorf("the page of an %s token differs from a revoked one's:\n%s\n%s", name, res.body, notFound)
			}
		})
	}
}

// TestCollectPageEscapes puts markup in every text the firm and the
// accountant choose: the page shows it as text.
func TestCollectPageEscapes(t *testing.T) {
	api := newTestAPI(t)
	hostile := `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`
	api.exec(`UPDATE firms SET name = ? WHERE id = ?`, hostile, api.firm.ID)
	api.exec(`UPDATE clients SET name = ? WHERE id = ?`, hostile, api.client.ID)
	pc := api.mustCreatePageCollect("en", db.CollectItemCreate{Title: hostile, Description: &hostile, Required: true})
	api.exec(`UPDATE collects SET title = ?, message = ? WHERE id = ?`, hostile, hostile, pc.collect.ID)
	reason, rejected := hostile, db.ItemRejected
	if _, err := api.store.UpdateCollectItem(context.Background(), api.client.ID, pc.collect.ID, pc.collect.Items[0].ID,
		db.CollectItemUpdate{Status: db.Update[string]{Set: true, Value: &rejected}, RejectionReason: db.Update[string]{Set: true, Value: &reason}}); err != nil {
		t.Fatal(err)
	}
	header, body := pageForm(t, hostile+".pdf", []byte("%PDF-1.4"))
	if res := api.page("POST", "/collect/"+pc.token+"/items/"+pc.collect.Items[0].ID, header, body); res.status != http.StatusSeeOther {
		t.Fatalf("upload: got %d, want 303", res.status)
	}
	res := api.page("GET", "/collect/"+pc.token+"?received="+url.QueryEscape(pc.collect.Items[0].ID), nil, nil)
	wantPage(t, res, http.StatusOK, "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&gt;&lt;img src=x onerror=alert(2)&gt;")
	if strings.Contains(res.body, "<script>alert") || strings.Contains(res.body, "<img") {
		t.Errorf("the page carries the markup as markup:\n%s", res.body)
	}
	// The script's strings are JSON inside the page: no text may close it.
	start := strings.Index(res.body, `<script type="application/json" id="collect-strings">`)
	end := strings.Index(res.body[start:], "</script>")
	var table map[string]string
	if err := json.Unmarshal([]byte(res.body[start+len(`<script type="application/json" id="collect-strings">`):start+end]), &table); err != nil || table["uploaded"] != "Uploaded" {
		t.Errorf("the script's strings: got %v (%v), want the English table", table, err)
	}
}

func TestCollectPageLanguage(t *testing.T) {
	api := newTestAPI(t)
	en, de := api.mustCreatePageCollect("en"), api.mustCreatePageCollect("de")
	for _, c := range []struct {
		name   string
		pc     *pageCollect
		accept string
		want   string
	}{
		{"English collect", en, "", "en"},
		{"German collect", de, "", "de"},
		// The collect's language wins over the browser's: the items' titles
		// are written in it, and a page is in one language.
		{"English collect, German browser", en, "de-AT,de;q=0.9,en;q=0.5", "en"},
		{"German collect, English browser", de, "en-GB,en;q=0.9", "de"},
		{"German collect, browser prefers German", de, "de,en;q=0.8", "de"},
		{"English collect, browser prefers English", en, "en-US,de;q=0.5", "en"},
		{"German collect, neither asked", de, "fr-FR,fr;q=0.9", "de"},
		{"English collect, German refused", en, "de;q=0", "en"},
		{"English collect, wildcard", en, "*", "en"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := api.page("GET", "/collect/"+c.pc.token, http.Header{"Accept-Language": {c.accept}}, nil)
			words := map[string][]string{
				"en": {`<html lang="en">`, "2 of 2 required documents are still missing", "Please send by 30 November 2026", "Required"},
				"de": {`<html lang="de">`, "2 von 2 erforderlichen Unterlagen fehlen noch", "Bitte bis 30. November 2026 senden", "Erforderlich"},
			}
			wantPage(t, res, http.StatusOK, words[c.want]...)
		})
	}
}

// TestCollectStringTables checks that the two languages name the same
// texts, none of them empty, and take the same values in their formats.
func TestCollectStringTables(t *testing.T) {
	verbs := regexp.MustCompile(`%(\[\d\])?[sd]`)
	en, de := collectStrings["en"], collectStrings["de"]
	for key, text := range en {
		other, ok := de[key]
		switch {
		case !ok:
			t.Errorf("%s: in English, not in German", key)
		case text == "" || other == "":
			t.Errorf("%s: empty", key)
		case !slices.Equal(verbs.FindAllString(text, -1), verbs.FindAllString(other, -1)):
			t.Errorf("%s: English takes %v, German %v", key, verbs.FindAllString(text, -1), verbs.FindAllString(other, -1))
		}
	}
	for key := range de {
		if _, ok := en[key]; !ok {
			t.Errorf("%s: in German, not in English", key)
		}
	}
	// Each template names texts only through the table: no letter outside a
	// tag or an action.
	page, err := fs.ReadFile(collectPageFiles, "collectpage/page.html")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?s)\{\{.*?\}\}|<[^>]*>`).ReplaceAllString(string(page), "")
	if letters := regexp.MustCompile(`\pL+`).FindAllString(text, -1); len(letters) > 0 {
		t.Errorf("the templates hold words of their own: %v", letters)
	}
}

// TestCollectPagePlurals checks the counted texts for one and for more, in
// both languages: noun and verb agree with the count.
func TestCollectPagePlurals(t *testing.T) {
	en, de := collectStrings["en"], collectStrings["de"]
	for _, c := range []struct {
		got, want string
	}{
		{en.partOf("count_missing", 1, 2), "1 of 2 required documents is still missing"},
		{de.partOf("count_missing", 1, 2), "1 von 2 erforderlichen Unterlagen fehlt noch"},
		{en.partOf("count_missing", 2, 3), "2 of 3 required documents are still missing"},
		{de.partOf("count_missing", 2, 3), "2 von 3 erforderlichen Unterlagen fehlen noch"},
		{en.partOf("count_missing", 1, 1), "The required document is still missing"},
		{de.partOf("count_missing", 1, 1), "Die erforderliche Unterlage fehlt noch"},
		{en.partOf("count_here", 1, 3), "1 of 3 documents is here"},
		{de.partOf("count_here", 1, 3), "1 von 3 Unterlagen ist da"},
		{de.partOf("count_here", 0, 2), "0 von 2 Unterlagen sind da"},
		{de.partOf("count_here", 0, 1), "Die Unterlage ist noch nicht da"},
		{de["count_done_only"], "Die Unterlage ist da"},
		{fmt.Sprintf(de.plural("files_more", 1), 1), "1 weitere Datei"},
		{fmt.Sprintf(en.plural("files_more", 2), 2), "2 more files"},
		{de.plural("notice_missing", 1), "Noch nicht abgesendet: Diese Unterlage fehlt noch."},
		{en.plural("notice_missing_after", 1), "Add it above, then submit again."},
		{fmt.Sprintf(en.plural("notice_budget_link", 1), 1, "1.0 MB", "Firm One"),
			"No more files can be added through this link: it has taken its one file or 1.0 MB. If something is still missing, ask Firm One for a new link."},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestPageSize(t *testing.T) {
	for _, c := range []struct {
		n      int64
		en, de string
	}{
		{0, "0 B", "0 B"}, {999, "999 B", "999 B"}, {1000, "1.0 kB", "1,0 kB"}, {1234, "1.2 kB", "1,2 kB"},
		{99_400, "99 kB", "99 kB"}, {999_960, "1.0 MB", "1,0 MB"}, {1 << 20, "1.0 MB", "1,0 MB"},
		{25_300_000, "25 MB", "25 MB"}, {3_210_000_000, "3.2 GB", "3,2 GB"},
	} {
		if got := pageSize(collectStrings["en"], c.n); got != c.en {
			t.Errorf("%d in English: got %q, want %q", c.n, got, c.en)
		}
		if got := pageSize(collectStrings["de"], c.n); got != c.de {
			t.Errorf("%d in German: got %q, want %q", c.n, got, c.de)
		}
	}
}

// TestCollectPageForms walks the page without JavaScript: each item's form
// uploads one file and comes back to the page, which says what happened;
// submit says what is missing until nothing required is.
func TestCollectPageForms(t *testing.T) {
	api := newTestAPI(t)
	pc := api.mustCreatePageCollect("en")
	base := "/collect/" + pc.token
	statements, payslips := pc.collect.Items[0].ID, pc.collect.Items[1].ID
	follow := func(t *testing.T, res *pageResponse, want string) *pageResponse {
		t.Helper()
		wantPageHeaders(t, res)
		if res.status != http.StatusSeeOther || res.header.Get("Location") != want {
			t.Fatalf("got %d to %q, want 303 to %q: %s", res.status, res.header.Get("Location"), want, res.body)
		}
		return api.page("GET", want, nil, nil)
	}

	t.Run("submit too early", func(t *testing.T) {
		res := follow(t, api.page("POST", base+"/submit", nil, nil), base+"?error=missing")
		wantPage(t, res, http.StatusOK, "Not sent yet: these documents are still missing.",
			`<a href="#item-`+statements+`">Bank statements</a>`, `<a href="#item-`+payslips+`">Payslips</a>`, "Add them above, then submit again.")
		if strings.Contains(res.body, `">Receipts over 250 EUR</a>`) {
			t.Error("the optional item is listed as missing")
		}
	})
	t.Run("upload", func(t *testing.T) {
		header, body := pageForm(t, "statement-october.pdf", bytes.Repeat([]byte("x"), 2500))
		res := follow(t, api.page("POST", base+"/items/"+statements, header, body), base+"?received="+statements+"#item-"+statements)
		wantPage(t, res, http.StatusOK, "“Bank statements” received. Thank you.", "statement-october.pdf", "2.5 kB",
			"Received", "1 of 2 required documents is still missing", "Add another file")
		files, err := api.store.OpenCollectSession(context.Background(), auth.HashCollectToken(pc.token))
		if err != nil {
			t.Fatal(err)
		}
		if got := files.Collect.Items[0]; got.Status != db.ItemReceived || len(got.FileIDs) != 1 {
			t.Errorf("item: got %s with %d files, want RECEIVED with 1", got.Status, len(got.FileIDs))
		}
	})
	t.Run("remove", func(t *testing.T) {
		view, err := api.store.OpenCollectSession(context.Background(), auth.HashCollectToken(pc.token))
		if err != nil {
			t.Fatal(err)
		}
		action := base + "/items/" + statements + "/files/" + view.Collect.Items[0].FileIDs[0] + "/remove"
		page := api.page("GET", base, nil, nil)
		wantPage(t, page, http.StatusOK, `<form class="remove" method="post" action="`+action+`"><button type="submit" aria-label="Remove “statement-october.pdf”">Remove</button></form>`)
		res := follow(t, api.page("POST", action, nil, nil), base+"?removed="+statements+"#item-"+statements)
		wantPage(t, res, http.StatusOK, "“Bank statements”: the file was taken back from this request.", "2 of 2 required documents are still missing")
		if strings.Contains(res.body, "statement-october.pdf") {
			t.Error("the page still lists the file taken back")
		}
		// A second press finds it gone: back to the page.
		follow(t, api.page("POST", action, nil, nil), base+"#item-"+statements)
		header, body := pageForm(t, "statement-october.pdf", bytes.Repeat([]byte("x"), 2500))
		follow(t, api.page("POST", base+"/items/"+statements, header, body), base+"?received="+statements+"#item-"+statements)
	})
	t.Run("no file", func(t *testing.T) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("note", "nothing chosen")
		mw.Close()
		res := follow(t, api.page("POST", base+"/items/"+payslips, http.Header{"Content-Type": {mw.FormDataContentType()}}, &body),
			base+"?error=no_file&item="+payslips+"#item-"+payslips)
		wantPage(t, res, http.StatusOK, "No file arrived for “Payslips”. Choose a file first, then press Upload.")
	})
	t.Run("not multipart", func(t *testing.T) {
		res := follow(t, api.page("POST", base+"/items/"+payslips, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, strings.NewReader("file=a.pdf")),
			base+"?error=failed&item="+payslips+"#item-"+payslips)
		wantPage(t, res, http.StatusOK, "The upload for “Payslips” did not work. Please try again.")
	})
	t.Run("too large", func(t *testing.T) {
		header, body := pageForm(t, "scan.tiff", bytes.Repeat([]byte("x"), testMaxUpload+1))
		res := follow(t, api.page("POST", base+"/items/"+payslips, header, body), base+"?error=too_large&item="+payslips+"#item-"+payslips)
		wantPage(t, res, http.StatusOK, "That file is too large for “Payslips”: a file can be at most 1.0 MB.")
	})
	t.Run("unknown item", func(t *testing.T) {
		header, body := pageForm(t, "a.pdf", []byte("a"))
		res := api.page("POST", base+"/items/"+db.NewID(), header, body)
		wantPage(t, res, http.StatusNotFound, "This link does not work")
	})
	t.Run("unknown token", func(t *testing.T) {
		header, body := pageForm(t, "a.pdf", []byte("a"))
		wantPage(t, api.page("POST", "/collect/"+strings.Repeat("B", 43)+"/items/"+payslips, header, body), http.StatusNotFound, "This link does not work")
		wantPage(t, api.page("POST", "/collect/"+strings.Repeat("B", 43)+"/submit", nil, nil), http.StatusNotFound, "This link does not work")
	})
	t.Run("submit", func(t *testing.T) {
		header, body := pageForm(t, "payslip.pdf", []byte("%PDF-1.4"))
		follow(t, api.page("POST", base+"/items/"+payslips, header, body), base+"?received="+payslips+"#item-"+payslips)
		res := follow(t, api.page("POST", base+"/submit", nil, nil), base)
		wantPage(t, res, http.StatusOK, "Thank you — Firm One has your documents.", "statement-october.pdf", "payslip.pdf")
		view, err := api.store.OpenCollectSession(context.Background(), auth.HashCollectToken(pc.token))
		if err != nil {
			t.Fatal(err)
		}
		if view.Collect.Status != db.CollectSubmitted {
			t.Errorf("collect: got %s, want SUBMITTED", view.Collect.Status)
		}
	})
	t.Run("after submit", func(t *testing.T) {
		header, body := pageForm(t, "late.pdf", []byte("late"))
		res := follow(t, api.page("POST", base+"/items/"+payslips, header, body), base)
		wantPage(t, res, http.StatusOK, "Thank you — Firm One has your documents.")
		if strings.Contains(res.body, "late.pdf") {
			t.Error("a file uploaded after submit was taken")
		}
		follow(t, api.page("POST", base+"/submit", nil, nil), base)
	})
	t.Run("closed", func(t *testing.T) {
		closed := db.CollectClosed
		if _, err := api.store.UpdateCollect(context.Background(), api.client.ID, pc.collect.ID,
			db.CollectUpdate{Status: db.Update[string]{Set: true, Value: &closed}}); err != nil {
			t.Fatal(err)
		}
		header, body := pageForm(t, "late.pdf", []byte("late"))
		wantPage(t, api.page("POST", base+"/items/"+payslips, header, body), http.StatusGone, "This link has expired")
		wantPage(t, api.page("POST", base+"/submit", nil, nil), http.StatusGone, "This link has expired")
	})
}

// TestCollectAssets checks the page's files: named by their hash, kept a
// year, compressed when the browser takes it, and the whole page well
// under 100 KB over the wire.
func TestCollectAssets(t *testing.T) {
	api := newTestAPI(t)
	pc := api.mustCreatePageCollect("en")
	page := api.page("GET", "/collect/"+pc.token, http.Header{"Accept-Encoding": {"gzip"}}, nil)
	total := len(page.body)
	for _, name := range []string{"collect.css", "collect.js"} {
		t.Run(name, func(t *testing.T) {
			addr := collectAssetURL[name]
			if !regexp.MustCompile(`^/collect-assets/collect\.[0-9a-f]{12}\.(css|js)$`).MatchString(addr) || !strings.Contains(page.body, `"`+addr+`"`) {
				t.Fatalf("the page does not load %s as %s", name, addr)
			}
			plain := api.page("GET", addr, nil, nil)
			packed := api.page("GET", addr, http.Header{"Accept-Encoding": {"gzip, br"}}, nil)
			for _, res := range []*pageResponse{plain, packed} {
				if res.status != http.StatusOK || res.header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
					res.header.Get("Vary") != "Accept-Encoding" || res.header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("got %d %v, want 200 kept a year", res.status, res.header)
				}
			}
			if packed.header.Get("Content-Encoding") != "gzip" || plain.header.Get("Content-Encoding") != "" {
				t.Errorf("Content-Encoding: got %q and %q, want gzip only when asked", packed.header.Get("Content-Encoding"), plain.header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(strings.NewReader(packed.body))
			if err != nil {
				t.Fatal(err)
			}
			unpacked, err := io.ReadAll(zr)
			if err != nil || string(unpacked) != plain.body {
				t.Errorf("the gzip body is not the file (%v)", err)
			}
			t.Logf("%s: %d bytes, %d with gzip", name, len(plain.body), len(packed.body))
			total += len(packed.body)
		})
	}
	t.Logf("page: %d bytes of HTML; with its files %d bytes over the wire", len(page.body), total)
	if total > 100_000 {
		t.Errorf("the page and its files take %d bytes, want well under 100 KB", total)
	}
	missing := api.page("GET", "/collect-assets/collect.css", nil, nil)
	if missing.status != http.StatusNotFound {
		t.Errorf("a name without its hash: got %d, want 404", missing.status)
	}
	for header, want := range map[string]bool{"gzip": true, "gzip;q=0": false, "deflate, gzip;q=0.5": true, "br": false, "GZIP": true, "gzip; q=0.000": false} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q): got %v, want %v", header, got, want)
		}
	}
}

// TestCollectPageBusy spends an address's failed tokens: the next page
// asks to wait, in a sentence, with the 429 and its Retry-After.
func TestCollectPageBusy(t *testing.T) {
	api := newTestAPI(t)
	for i := range collectFailedTokenLimit {
		if res := api.page("GET", "/collect/guess-"+strconv.Itoa(i), nil, nil); res.status != http.StatusNotFound {
			t.Fatalf("guess %d: got %d, want 404", i, res.status)
		}
	}
	res := api.page("GET", "/collect/guess", http.Header{"Accept-Language": {"de"}}, nil)
	wantPage(t, res, http.StatusTooManyRequests, `<html lang="de">`, "Bitte einen Moment Geduld", "Warten Sie eine Minute")
	if res.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
}
