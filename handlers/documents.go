package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// The files as documents: listed, searched, corrected, and what reading
// them found.

type analysisResponse struct {
	Status     string          `json:"status"`
	Source     *string         `json:"source"`
	Reason     *string         `json:"reason"`
	Language   *string         `json:"language"`
	AnalyzedAt *timestamp      `json:"analyzedAt"`
	Fields     *fieldsResponse `json:"fields"`
}

// fieldsResponse always holds every key, null where the document does not
// say it.
type fieldsResponse struct {
	DocumentNumber *string           `json:"documentNumber"`
	IssueDate      *string           `json:"issueDate"`
	DueDate        *string           `json:"dueDate"`
	Currency       *string           `json:"currency"`
	NetAmount      *string           `json:"netAmount"`
	TaxAmount      *string           `json:"taxAmount"`
	TotalAmount    *string           `json:"totalAmount"`
	IssuerName     *string           `json:"issuerName"`
	IssuerVATID    *string           `json:"issuerVatId"`
	IssuerIBAN     *string           `json:"issuerIban"`
	EInvoice       *einvoiceResponse `json:"einvoice"`
}

type einvoiceResponse struct {
	Syntax  string `json:"syntax"`
	Profile string `json:"profile"`
}

func newAnalysisResponse(a db.Analysis) analysisResponse {
	out := analysisResponse{Status: a.Status, Source: a.Source, Reason: a.Reason, Language: a.Language,
		AnalyzedAt: timestampPtr(a.AnalyzedAt)}
	if f := a.Fields; f != nil {
		out.Fields = &fieldsResponse{DocumentNumber: f.DocumentNumber, IssueDate: f.IssueDate, DueDate: f.DueDate,
			Currency: f.Currency, NetAmount: f.NetAmount, TaxAmount: f.TaxAmount, TotalAmount: f.TotalAmount,
			IssuerName: f.IssuerName, IssuerVATID: f.IssuerVATID, IssuerIBAN: f.IssuerIBAN}
		if f.EInvoice != nil {
			out.Fields.EInvoice = &einvoiceResponse{Syntax: f.EInvoice.Syntax, Profile: f.EInvoice.Profile}
		}
	}
	return out
}

type fileTextResponse struct {
	Text   string `json:"text"`
	Pages  int    `json:"pages"`
	Source string `json:"source"`
}

func newFileTextResponse(t *db.FileText) fileTextResponse {
	return fileTextResponse{Text: t.Text, Pages: t.Pages, Source: t.Source}
}

// listFiles answers GET /v1/files.
func (h *Handler) listFiles(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	filter, req, err := fileListQuery(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.store.ListFiles(r.Context(), stateOf(r).clientID, filter, req)
	respond(h, w, r, http.StatusOK, page, err, listOf(newFileResponse))
}

func fileListQuery(values url.Values) (db.FileFilter, db.PageRequest, error) {
	var v validator
	q := v.query(values)
	filter := db.FileFilter{
		WorkspaceID: q.id("workspaceId"), FolderID: q.id("folderId"), TaskID: q.id("taskId"), LabelID: q.id("labelId"),
		Kind: q.enum("kind", db.Kinds, ""), DocumentDateFrom: q.time("documentDateFrom", fromBound), DocumentDateTo: q.time("documentDateTo", toBound),
		Query: q.search("q"),
	}
	req := pageRequest(q, db.FileSorts)
	if req.Sort == db.SortRelevance && filter.Query == nil {
		if _, sent := q.get("q"); !sent {
			v.add(issue{Code: "custom", Path: []any{"query", "sort"}, Message: "sort=relevance needs a search (q)"})
		}
	}
	return filter, req, v.err()
}

// dayEnd says which end of a day a plain date stands for in a filter.
type dayEnd int

const (
	fromBound dayEnd = iota // the day's first instant
	toBound                 // the day's last instant
)

// day is the form of a plain date in a filter: YYYY-MM-DD.
var day = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// time reads a date-time filter: RFC 3339, or a plain date that people write
// for a whole day, meaning its start (UTC) as a lower bound and its end as an
// upper one. nil when absent or invalid.
func (q *query) time(name string, end dayEnd) *time.Time {
	s, present := q.get(name)
	if !present {
		return nil
	}
	if day.MatchString(s) {
		t, err := time.Parse(time.DateOnly, s)
		if err == nil {
			if end == toBound {
				t = t.Add(24*time.Hour - time.Nanosecond)
			}
			return &t
		}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || len(s) > 40 || !dateTime.MatchString(s) || t.UTC().Year() < 0 || t.UTC().Year() > 9999 {
		q.v.add(issue{Code: "invalid_string", Path: []any{"query", name}, Validation: "datetime",
			Message: "Invalid datetime: use YYYY-MM-DD or an RFC 3339 date-time"})
		return nil
	}
	t = t.UTC()
	return &t
}

// search reads a full-text search parameter; nil when absent or invalid.
func (q *query) search(name string) *db.SearchQuery {
	s, present := q.get(name)
	if !present {
		return nil
	}
	path := []any{"query", name}
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > db.MaxSearchLength {
		q.v.add(sizeIssue("too_big", path, "string", db.MaxSearchLength,
			fmt.Sprintf("A search is valid UTF-8 of at most %d characters", db.MaxSearchLength)))
		return nil
	}
	search, ok := db.ParseSearch(s)
	if !ok {
		q.v.add(issue{Code: "custom", Path: path,
			Message: fmt.Sprintf("A search needs between 1 and %d words of letters or digits", db.MaxSearchWords)})
		return nil
	}
	return search
}

// updateFile answers PATCH /v1/files/{id}.
func (h *Handler) updateFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var u db.FileUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		name := body.string("name", fileName)
		u = db.FileUpdate{
			Name:         update(name),
			DocumentDate: update(body.time("documentDate", nullable)),
			Kind:         update(body.enum("kind", db.Kinds, nullable)),
			FolderID:     update(body.id("folderId", nullable)),
			TaskID:       update(body.id("taskId", nullable)),
			LabelIDs:     update(body.ids("labelIds", optional)),
		}
	})
	if !ok {
		return
	}
	f, err := h.store.UpdateFile(r.Context(), stateOf(r).clientID, id, u)
	respond(h, w, r, http.StatusOK, f, err, newFileResponse)
}

// fileName is a file name as a person sets it: the limits of an upload's,
// without format characters.
var fileName = stringRule{trim: true, name: true, min: 1, max: maxFileName}

// fileText answers GET /v1/files/{id}/text.
func (h *Handler) fileText(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.FindFileText, newFileTextResponse)
}

// analyzeFile answers POST /v1/files/{id}/analysis: the file is read again.
func (h *Handler) analyzeFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.pathID(w, r, p)
	if !ok {
		return
	}
	f, err := h.store.QueueAnalysis(r.Context(), stateOf(r).clientID, id)
	respond(h, w, r, http.StatusAccepted, f, err, newFileResponse)
}
