package handlers

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
	"acctapi/mail"
)

// The upload page at /collect/:token is what a firm's client sees of a
// collect: server-rendered with html/template, working as plain forms, with
// a small script that adds drag-and-drop and a progress bar per file. Its
// templates, style, script and string tables are embedded.
//
// An item's file input names no accepted types and no capture attribute:
// phones then offer their camera beside their photos and files, and any
// kind of document goes (capture would open the camera only, and accept
// would hide a spreadsheet or a ZIP).
//
//go:embed collectpage/page.html collectpage/collect.css collectpage/collect.js collectpage/en.json collectpage/de.json
var collectPageFiles embed.FS

// collectCSP lets the page load its style and script from this server only,
// post its forms and uploads only here, and be framed by no one.
const collectCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// pageStrings is a language's table of every text the page shows; formats
// take their values in the order their keys' names suggest.
type pageStrings map[string]string

// plural picks the text of key for a count of n: key+"_one" for one, where
// the table has it (verb and noun agree with the count in both languages).
func (t pageStrings) plural(key string, n int) string {
	if one, ok := t[key+"_one"]; n == 1 && ok {
		return one
	}
	return t[key]
}

// partOf writes "n of total" with the text of key: key+"_only" when the
// total is one ("the document"), key+"_one" when n is one (the verb agrees
// with one: "1 von 2 Unterlagen fehlt").
func (t pageStrings) partOf(key string, n, total int) string {
	switch {
	case total == 1:
		return t[key+"_only"]
	case n == 1:
		return fmt.Sprintf(t[key+"_one"], total)
	}
	return fmt.Sprintf(t[key], n, total)
}

// collectLanguages are the page's languages; the first is the default when
// nothing else says which.
var collectLanguages = []string{"en", "de"}

var collectStrings = func() map[string]pageStrings {
	tables := map[string]pageStrings{}
	for _, lang := range collectLanguages {
		raw, err := fs.ReadFile(collectPageFiles, "collectpage/"+lang+".json")
		if err != nil {
			panic(err) // the embed directive names every table
		}
		var t pageStrings
		if err := json.Unmarshal(raw, &t); err != nil {
			panic(fmt.Sprintf("collectpage/%s.json: %v", lang, err))
		}
		tables[lang] = t
	}
	return tables
}()

// collectTemplates are the page's templates. A key missing from a string
// table fails the rendering instead of showing nothing.
var collectTemplates = template.Must(template.New("").Option("missingkey=error").ParseFS(collectPageFiles, "collectpage/page.html"))

// collectAsset is one file the page loads, served under a name that holds
// its hash so that browsers may keep it for good.
type collectAsset struct {
	contentType string
	body, gzip  []byte
}

// collectAssets maps the names under /collect-assets/ to their files, and
// collectAssetURL the files' own names to those addresses.
var collectAssets, collectAssetURL = func() (map[string]collectAsset, map[string]string) {
	assets, urls := map[string]collectAsset{}, map[string]string{}
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
	for _, name := range []string{"collect.css", "collect.js"} {
		body, err := fs.ReadFile(collectPageFiles, "collectpage/"+name)
		if err != nil {
			panic(err) // the embed directive names both
		}
		var packed bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&packed, gzip.BestCompression)
		zw.Write(body)
		zw.Close()
		sum := sha256.Sum256(body)
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
		assets[hashed] = collectAsset{types[ext], body, packed.Bytes()}
		urls[name] = "/collect-assets/" + hashed
	}
	return assets, urls
}()

// collectAssetFile answers GET /collect-assets/:name. A name holds its
// file's hash, so a file may be kept for a year: a new build names it anew.
func (h *Handler) collectAssetFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	a, ok := collectAssets[p.ByName("name")]
	if !ok {
		h.fail(w, r, errNotFound(fmt.Sprintf("no page file %q", p.ByName("name"))))
		return
	}
	header := w.Header()
	header.Set("Content-Type", a.contentType)
	header.Set("Cache-Control", "public, max-age=31536000, immutable")
	header.Set("Vary", "Accept-Encoding")
	body := a.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		header.Set("Content-Encoding", "gzip")
		body = a.gzip
	}
	header.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// acceptsGzip says whether an Accept-Encoding header takes gzip.
func acceptsGzip(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q, hasQ := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
			return !hasQ || (q != "0" && strings.Trim(q, "0.") != "")
		}
	}
	return false
}

// pageHeaders are the headers of every page and redirect of the collect
// routes: the token is in the address, so no page may pass it on as a
// referrer or be indexed. (Every answer's securityHeaders already keep it
// out of caches and frames.) The policy replaces the API's to let the page
// load its own style and script.
func pageHeaders(w http.ResponseWriter) {
	header := w.Header()
	header.Set("Content-Security-Policy", collectCSP)
	header.Set("Referrer-Policy", "no-referrer")
	header.Set("X-Robots-Tag", "noindex")
}

// pageLanguage is the language of a page: the collect's, which the
// accountant chose for this client and in which the items' titles are
// written, so that a page is in one language whatever the browser says.
// Only a page that knows no collect (an unknown link) follows the browser's
// Accept-Language, and English when it names neither language.
func pageLanguage(locale, acceptLanguage string) string {
	if _, ok := collectStrings[locale]; ok {
		return locale
	}
	best := map[string]float64{}
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			var err error
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		if _, ok := collectStrings[primary]; ok && q > best[primary] {
			best[primary] = q
		}
	}
	lang := collectLanguages[0]
	for other, q := range best {
		if q > best[lang] {
			lang = other
		}
	}
	return lang
}

// pageSize writes a file size in B, kB, MB or GB (powers of 1000) with
// the language's decimal mark: one decimal below ten, none above.
func pageSize(t pageStrings, n int64) string {
	if n < 1000 {
		return fmt.Sprintf(t["size_bytes"], n)
	}
	v, unit := float64(n)/1000, "size_kb"
	for _, next := range []string{"size_mb", "size_gb"} {
		if v < 999.95 {
			break
		}
		v, unit = v/1000, next
	}
	digits := 0
	if v < 9.95 {
		digits = 1
	}
	return fmt.Sprintf(t[unit], strings.Replace(strconv.FormatFloat(v, 'f', digits, 64), ".", t["decimal_mark"], 1))
}

// collectPage is what the templates show: a request, its confirmation or a
// page that says why the link does not work.
type collectPage struct {
	Lang      string
	T         pageStrings
	PageTitle string
	CSS, JS   string

	FirmName, SecureUpload string
	Title, Message, Due    string
	Notice                 *pageNotice
	Items                  []pageItem
	Missing                int
	RequiredDone           bool
	Count                  string
	SubmitText, LinkUntil  string
	SubmitAction           string
	// Strings are the texts the script shows, from the same table.
	Strings map[string]string

	Thanks, SubmittedOn, More string

	Heading, Text string
}

// pageNotice is the message about the last action: at the top of the page,
// or in the item it was about.
type pageNotice struct {
	Kind  string // "ok" or "error"
	Text  string
	Items []pageItem
	After string
}

// pageItem is one item of the checklist.
type pageItem struct {
	T           pageStrings
	ID, Title   string
	Description string
	Required    bool
	// State is missing, optional (not there, not required), received or
	// rejected (asked again).
	State, StateText, Reason string
	Files                    []pageFile
	// MoreFiles are the files past the first few, folded under MoreText.
	MoreFiles         []pageFile
	MoreText          string
	Action, UploadURL string
	ForItem           string
	MaxBytes          int64
	Notice            *pageNotice
	// Reading says that a file of the item is still being read: the script
	// asks for the item's files again until its kind is known.
	Reading bool
}

// pageFile is a file already uploaded for an item, and the action and
// texts of its button that takes it back. Kind names what the file looks
// like once its reading knows; KindNote says, gently, that it looks like
// another kind than the item asks for.
type pageFile struct {
	Name, Size                      string
	Remove, RemoveLabel, RemoveText string
	Kind, KindNote                  string
}

// pageFilesShown is how many of an item's files the page lists before it
// folds the others away, so that an item with hundreds of files does not
// push the rest of the checklist off the screen.
const pageFilesShown = 5

// newCollectPage builds the page of a collect in lang.
func (h *Handler) newCollectPage(view *db.CollectView, token, lang string) *collectPage {
	t := collectStrings[lang]
	c := view.Collect
	base := "/collect/" + url.PathEscape(token)
	page := &collectPage{
		Lang: lang, T: t, PageTitle: fmt.Sprintf(t["page_title"], c.Title, view.FirmName),
		CSS: collectAssetURL["collect.css"], JS: collectAssetURL["collect.js"],
		FirmName: view.FirmName, SecureUpload: fmt.Sprintf(t["secure_upload"], view.ClientName),
		Title: c.Title, RequiredDone: true,
		SubmitText:   fmt.Sprintf(t["submit_text"], view.FirmName),
		SubmitAction: base + "/submit",
		LinkUntil:    fmt.Sprintf(t["link_until"], mail.FormatDate(view.Session.ExpiresAt, lang)),
		Strings:      map[string]string{},
	}
	if c.Message != nil {
		page.Message = *c.Message
	}
	if c.DueDate != nil {
		page.Due = fmt.Sprintf(t["due"], mail.FormatDate(*c.DueDate, lang))
	}
	var required, requiredMissing int
	for _, it := range c.Items {
		item := pageItem{
			T: t, ID: it.ID, Title: it.Title, Required: it.Required,
			Action:    base + "/items/" + url.PathEscape(it.ID),
			UploadURL: "/v1/collect-sessions/" + url.PathEscape(token) + "/items/" + url.PathEscape(it.ID) + "/files",
			ForItem:   fmt.Sprintf(t["for_item"], it.Title),
			MaxBytes:  h.maxUpload,
		}
		if it.Description != nil {
			item.Description = *it.Description
		}
		switch {
		case it.Status == db.ItemReceived:
			item.State = "received"
		case it.Status == db.ItemRejected:
			item.State = "rejected"
			reason := ""
			if it.RejectionReason != nil {
				reason = *it.RejectionReason
			}
			item.Reason = fmt.Sprintf(t["rejection_reason"], view.FirmName, reason)
		case it.Required:
			item.State = "missing"
		default:
			item.State = "optional"
		}
		item.StateText = t["state_"+item.State]
		if it.Required {
			required++
		}
		if item.State != "received" {
			page.Missing++
			if it.Required {
				requiredMissing++
				page.RequiredDone = false
			}
		}
		for _, id := range it.FileIDs {
			f, ok := view.Files[id]
			if !ok {
				continue
			}
			file := pageFile{Name: f.Name, Size: pageSize(t, f.Size),
				Remove: item.Action + "/files/" + url.PathEscape(f.ID) + "/remove", RemoveLabel: fmt.Sprintf(t["remove_label"], f.Name),
				RemoveText: t["remove"]}
			if f.Kind != nil && *f.Kind != "other" {
				file.Kind = t["kind_"+*f.Kind]
			}
			if it.KindMismatch(f) {
				file.KindNote = fmt.Sprintf(t["kind_mismatch"], t["kind_a_"+*f.Kind], t["kind_many_"+*it.Kind])
			}
			item.Reading = item.Reading || f.Analysis.Status == db.AnalysisPending
			item.Files = append(item.Files, file)
		}
		if len(item.Files) > pageFilesShown {
			item.Files, item.MoreFiles = item.Files[:pageFilesShown], item.Files[pageFilesShown:]
			item.MoreText = fmt.Sprintf(t.plural("files_more", len(item.MoreFiles)), len(item.MoreFiles))
		}
		page.Items = append(page.Items, item)
	}
	// An optional item is never "missing": while required ones are, the
	// count names those alone; once they are here, it says how many of all
	// are here, beside "you can submit".
	switch {
	case page.Missing == 0 && len(page.Items) == 1:
		page.Count = t["count_done_only"]
	case page.Missing == 0:
		page.Count = fmt.Sprintf(t["count_done"], len(page.Items))
	case page.RequiredDone:
		page.Count = t.partOf("count_here", len(page.Items)-page.Missing, len(page.Items))
	default:
		page.Count = t.partOf("count_missing", requiredMissing, required)
	}
	for key, text := range t {
		if name, ok := strings.CutPrefix(key, "js_"); ok {
			page.Strings[name] = text
		}
	}
	page.Strings["too_large"] = fmt.Sprintf(t["js_too_large"], pageSize(t, h.maxUpload))
	if c.Status == db.CollectSubmitted {
		page.Thanks = fmt.Sprintf(t["thanks"], view.FirmName)
		page.More = fmt.Sprintf(t["thanks_more"], view.FirmName)
		if c.SubmittedAt != nil {
			page.SubmittedOn = fmt.Sprintf(t["thanks_on"], mail.FormatDate(*c.SubmittedAt, lang))
		}
	}
	return page
}

// notice reads the status the form routes put in the query after their
// redirect: an item received or what went wrong with it, told in the item,
// or what the whole page must say first.
func (page *collectPage) notice(q url.Values, maxUpload int64, budget db.CollectBudget) {
	t := page.T
	id := cmp.Or(q.Get("received"), q.Get("removed"), q.Get("item"))
	var item *pageItem
	for i := range page.Items {
		if page.Items[i].ID == id {
			item = &page.Items[i]
		}
	}
	switch e := q.Get("error"); {
	case q.Get("received") != "" && item != nil:
		item.Notice = &pageNotice{Kind: "ok", Text: fmt.Sprintf(t["notice_received"], item.Title)}
	case q.Get("removed") != "" && item != nil:
		item.Notice = &pageNotice{Kind: "ok", Text: fmt.Sprintf(t["notice_removed"], item.Title)}
	case e == "missing" && !page.RequiredDone:
		n := &pageNotice{Kind: "error"}
		for _, it := range page.Items {
			if it.Required && it.State != "received" {
				n.Items = append(n.Items, it)
			}
		}
		n.Text, n.After = t.plural("notice_missing", len(n.Items)), t.plural("notice_missing_after", len(n.Items))
		page.Notice = n
	case item == nil:
	case e == "too_large":
		item.Notice = &pageNotice{Kind: "error", Text: fmt.Sprintf(t["notice_too_large"], item.Title, pageSize(t, maxUpload))}
	case e == "budget_link":
		item.Notice = &pageNotice{Kind: "error", Text: fmt.Sprintf(t.plural("notice_budget_link", budget.LinkFiles), budget.LinkFiles, pageSize(t, budget.LinkBytes), page.FirmName)}
	case e == "budget_collect":
		item.Notice = &pageNotice{Kind: "error", Text: fmt.Sprintf(t.plural("notice_budget_collect", budget.CollectFiles), budget.CollectFiles, pageSize(t, budget.CollectBytes), page.FirmName)}
	case e == "no_file":
		item.Notice = &pageNotice{Kind: "error", Text: fmt.Sprintf(t["notice_no_file"], item.Title)}
	case e == "failed":
		item.Notice = &pageNotice{Kind: "error", Text: fmt.Sprintf(t["notice_upload_failed"], item.Title)}
	}
}

// renderPage writes one of the page's templates with its status.
func (h *Handler) renderPage(w http.ResponseWriter, r *http.Request, status int, name string, page *collectPage) {
	var body bytes.Buffer
	if err := collectTemplates.ExecuteTemplate(&body, name, page); err != nil {
		h.logFailure(r, "render the collect page", err)
		status, name = http.StatusInternalServerError, "gone"
		page = failurePage(page.Lang, "error")
		body.Reset()
		if err := collectTemplates.ExecuteTemplate(&body, name, page); err != nil {
			panic(err) // the error page has no data that could fail
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	w.Write(body.Bytes())
}

// failurePage is the page that says why a link does not work: kind is
// notfound, gone, busy or error.
func failurePage(lang, kind string) *collectPage {
	t := collectStrings[lang]
	return &collectPage{Lang: lang, T: t, PageTitle: t[kind+"_title"], CSS: collectAssetURL["collect.css"],
		Heading: t[kind+"_title"], Text: t[kind+"_text"]}
}

// pageFailure sorts an error of the public collect methods into what the
// page says of it, with the status the API would answer.
func (h *Handler) pageFailure(w http.ResponseWriter, r *http.Request, err error) (status int, kind string) {
	apiErr, valErr := h.classify(w, r, err)
	switch {
	case valErr != nil:
		return http.StatusUnprocessableEntity, "invalid"
	case apiErr == nil:
		return 0, "canceled"
	}
	if kind, ok := pageFailureKinds[apiErr.Status]; ok {
		return apiErr.Status, kind
	}
	return apiErr.Status, "error"
}

// pageFailureKinds names what the page says of each status an error of the
// public collect methods answers; any other is an "error".
var pageFailureKinds = map[int]string{
	http.StatusNotFound: "notfound", http.StatusGone: "gone", http.StatusConflict: "conflict",
	http.StatusTooManyRequests: "busy", http.StatusRequestEntityTooLarge: "too_large", http.StatusBadRequest: "bad_request",
}

// failPage answers a request of the page whose link does not work, or that
// failed, with a page that says so in the browser's language.
func (h *Handler) failPage(w http.ResponseWriter, r *http.Request, err error, status int, kind string) {
	status, kind = collectPageStatus(status, kind)
	if kind == "canceled" {
		stateOf(r).canceled = true
		return
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(storageRetryAfter))
	}
	page := failurePage(pageLanguage("", r.Header.Get("Accept-Language")), kind)
	// An expired link's holder saw the firm's name and language before:
	// the page names whom to ask for a new link, in that language.
	if expired := (*db.ExpiredError)(nil); kind == "gone" && errors.As(err, &expired) {
		page = failurePage(pageLanguage(expired.Locale, r.Header.Get("Accept-Language")), kind)
		page.Text = fmt.Sprintf(page.T["gone_text_firm"], expired.FirmName)
	}
	h.renderPage(w, r, status, "gone", page)
}

// collectPage answers GET /collect/:token: the request with its checklist,
// or the confirmation once submitted.
func (h *Handler) collectPage(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	pageHeaders(w)
	token := p.ByName("token")
	view, err := h.collectSession(w, r, token)
	if err != nil {
		status, kind := h.pageFailure(w, r, err)
		h.failPage(w, r, err, status, kind)
		return
	}
	page := h.newCollectPage(view, token, pageLanguage(view.Collect.Locale, r.Header.Get("Accept-Language")))
	if view.Collect.Status == db.CollectSubmitted {
		h.renderPage(w, r, http.StatusOK, "thanks", page)
		return
	}
	page.notice(r.URL.Query(), h.maxUpload, h.collectBudget)
	h.renderPage(w, r, http.StatusOK, "collect", page)
}

// collectPageStatus maps a failure to the page that shows it: a link that
// does not work, a limit or a fault. The failures of one upload (too large,
// no file) are told on the collect's page instead; reaching here, they are
// answered as a fault.
func collectPageStatus(status int, kind string) (int, string) {
	switch kind {
	case "notfound", "gone", "busy", "error", "canceled":
		return status, kind
	}
	return http.StatusInternalServerError, "error"
}

// collectPageUpload answers POST /collect/:token/items/:itemId, the form of
// an item without JavaScript: one file, then back to the page, which says
// whether it arrived.
func (h *Handler) collectPageUpload(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	pageHeaders(w)
	token, itemID := p.ByName("token"), p.ByName("itemId")
	_, err := h.receiveCollectUpload(w, r, token, itemID)
	q := url.Values{}
	if err == nil {
		q.Set("received", itemID)
		h.pageRedirect(w, r, token, q, itemID)
		return
	}
	if spent := (*db.BudgetError)(nil); errors.As(err, &spent) {
		// Refused before its body was read: the browser gets the redirect
		// once it has sent the form.
		drainUpload(w, r)
		q.Set("error", map[bool]string{true: "budget_link", false: "budget_collect"}[spent.Link])
		q.Set("item", itemID)
		h.pageRedirect(w, r, token, q, itemID)
		return
	}
	status, kind := h.pageFailure(w, r, err)
	switch kind {
	case "conflict":
		// Submitted meanwhile: the page shows the confirmation.
		h.pageRedirect(w, r, token, q, "")
	case "too_large", "invalid", "bad_request":
		if kind == "too_large" {
			drainUpload(w, r)
		}
		q.Set("error", map[string]string{"too_large": "too_large", "invalid": "no_file", "bad_request": "failed"}[kind])
		q.Set("item", itemID)
		h.pageRedirect(w, r, token, q, itemID)
	default:
		h.failPage(w, r, err, status, kind)
	}
}

// collectPageRemove answers POST /collect/:token/items/:itemId/files/:fileId/remove,
// the button beside each file the page lists: the file is taken back, and
// the page says so at its item.
func (h *Handler) collectPageRemove(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	pageHeaders(w)
	token, itemID := p.ByName("token"), p.ByName("itemId")
	_, err := h.removeCollectUpload(w, r, token, itemID, p.ByName("fileId"))
	q := url.Values{}
	if err == nil {
		q.Set("removed", itemID)
		h.pageRedirect(w, r, token, q, itemID)
		return
	}
	if errors.Is(err, errCollectFileNotFound) {
		// Taken back already (a second press): the page shows the item.
		h.pageRedirect(w, r, token, q, itemID)
		return
	}
	status, kind := h.pageFailure(w, r, err)
	if kind == "conflict" {
		// Submitted meanwhile: the page shows the confirmation.
		h.pageRedirect(w, r, token, q, "")
		return
	}
	h.failPage(w, r, err, status, kind)
}

// pageDrainLimit bounds what the form route reads and drops of an upload
// it refused as too large.
const pageDrainLimit = 1 << 30

// drainUpload reads and drops the rest of a refused upload, up to
// pageDrainLimit. A browser sends the whole form before it reads the answer:
// a server that answers and closes while it is still sending shows the user
// a connection error instead of the page that says the file is too large.
func drainUpload(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	body := &progress{r: io.LimitReader(r.Body, pageDrainLimit), extend: func(t time.Time) {
		_ = rc.SetReadDeadline(t) // where a connection has no deadlines, the server's timeouts stay
	}}
	body.extend(time.Now().Add(transferIdle))
	io.Copy(io.Discard, body)
}

// collectPageSubmit answers POST /collect/:token/submit: back to the page,
// which shows the confirmation, or what is still missing.
func (h *Handler) collectPageSubmit(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	pageHeaders(w)
	token := p.ByName("token")
	_, err := h.submitCollect(w, r, token)
	q := url.Values{}
	if err == nil {
		h.pageRedirect(w, r, token, q, "")
		return
	}
	status, kind := h.pageFailure(w, r, err)
	switch kind {
	case "conflict":
		h.pageRedirect(w, r, token, q, "")
	case "invalid":
		q.Set("error", "missing")
		h.pageRedirect(w, r, token, q, "")
	default:
		h.failPage(w, r, err, status, kind)
	}
}

// pageRedirect sends the browser back to the page with a status in the
// query (303: the page is fetched with GET, the form is not sent again), at
// the item the status is about when itemID is not "".
func (h *Handler) pageRedirect(w http.ResponseWriter, r *http.Request, token string, q url.Values, itemID string) {
	target := "/collect/" + url.PathEscape(token)
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	if itemID != "" {
		target += "#item-" + url.PathEscape(itemID)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
