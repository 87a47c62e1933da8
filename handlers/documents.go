package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
	"acctapi/document"
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

// fieldsResponse always holds every field name of package document, null
// where the document does not say it, then einvoice.
type fieldsResponse struct {
	values   map[string]string
	einvoice *einvoiceResponse
}

func (f fieldsResponse) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for _, name := range document.FieldNames {
		v, ok := f.values[name]
		b = append(strconv.AppendQuote(b, name), ':')
		if !ok {
			b = append(b, "null,"...)
			continue
		}
		encoded, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(append(b, encoded...), ',')
	}
	e, err := json.Marshal(f.einvoice)
	if err != nil {
		return nil, err
	}
	return append(append(append(b, `"einvoice":`...), e...), '}'), nil
}

type einvoiceResponse struct {
	Syntax  string `json:"syntax"`
	Profile string `json:"profile"`
}

func newAnalysisResponse(a db.Analysis) analysisResponse {
	out := analysisResponse{Status: a.Status, Source: a.Source, Reason: a.Reason, Language: a.Language,
		AnalyzedAt: timestampPtr(a.AnalyzedAt)}
	if f := a.Fields; f != nil {
		out.Fields = &fieldsResponse{values: f.Values}
		if f.EInvoice != nil {
			out.Fields.einvoice = &einvoiceResponse{Syntax: f.EInvoice.Syntax, Profile: f.EInvoice.Profile}
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
		Kind: q.enum("kind", document.Kinds, ""), DocumentDateFrom: q.time("documentDateFrom"), DocumentDateTo: q.time("documentDateTo"),
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

// time reads an RFC 3339 date-time parameter; nil when absent or invalid.
func (q *query) time(name string) *time.Time {
	s, present := q.get(name)
	if !present {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || len(s) > 40 || !dateTime.MatchString(s) || t.UTC().Year() < 0 || t.UTC().Year() > 9999 {
		q.v.add(issue{Code: "invalid_string", Path: []any{"query", name}, Validation: "datetime", Message: "Invalid datetime"})
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
			Kind:         update(body.enum("kind", document.Kinds, nullable)),
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
