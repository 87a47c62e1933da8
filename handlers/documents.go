package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
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
	// Direction is null until the banking worker decided it.
	Direction *string `json:"direction"`
	// FieldSources, Confidence and Warnings are never null: a file not yet
	// read has every field's source "analysis", no confidence and no
	// warning.
	FieldSources map[string]string  `json:"fieldSources"`
	Confidence   map[string]float64 `json:"confidence"`
	Warnings     []string           `json:"warnings"`
	// Booking is how the document is booked in the ledger; null until an
	// export booked it or a person chose its booking.
	Booking *bookingResponse `json:"booking"`
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

func newAnalysisResponse(a db.Analysis, direction *string) analysisResponse {
	out := analysisResponse{Status: a.Status, Source: a.Source, Reason: a.Reason, Language: a.Language, Direction: direction,
		AnalyzedAt: timestampPtr(a.AnalyzedAt), FieldSources: a.FieldSources, Confidence: a.Confidence,
		Warnings: a.Warnings}
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
		Kind: q.enum("kind", document.Kinds, ""), Direction: q.enum("direction", []string{db.DirectionReceived, db.DirectionIssued}, ""),
		DocumentDateFrom: q.time("documentDateFrom", fromBound), DocumentDateTo: q.time("documentDateTo", toBound),
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
	var booking *db.BookingChoice
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		booking = bookingChoice(body)
		name := body.string("name", fileName)
		u = db.FileUpdate{
			Name:         update(name),
			DocumentDate: update(body.time("documentDate", nullable)),
			Kind:         update(body.enum("kind", document.Kinds, nullable)),
			FolderID:     update(body.id("folderId", nullable)),
			TaskID:       update(body.id("taskId", nullable)),
			LabelIDs:     update(body.ids("labelIds", optional)),
			Fields:       documentFields(body),
		}
	})
	if !ok {
		return
	}
	// A booking is the firm's ledger: a key without exports:write (a
	// client's) may correct the file but not book it.
	if booking != nil && !stateOf(r).principal.Can(auth.ExportsWrite) {
		h.fail(w, r, errMissingScope(auth.ExportsWrite))
		return
	}
	clientID := stateOf(r).clientID
	var f *db.File
	var err error
	if booking == nil || len(u.Fields) > 0 || u.Name.Set || u.DocumentDate.Set || u.Kind.Set || u.FolderID.Set || u.TaskID.Set || u.LabelIDs.Set {
		f, err = h.store.UpdateFile(r.Context(), clientID, id, u)
	} else {
		f, err = h.store.FindFile(r.Context(), clientID, id)
	}
	if err == nil && booking != nil {
		f, err = h.setBooking(r.Context(), clientID, f, booking)
	}
	respond(h, w, r, http.StatusOK, f, err, newFileResponse)
}

// documentFields reads the corrections of a document's fields: an object
// of field names, each a value of its field's type or null. An unknown
// name is an issue at ["fields", name].
func documentFields(body *object) map[string]*string {
	fields, ok := body.object("fields", optional)
	if !ok {
		return nil
	}
	out := map[string]*string{}
	for _, name := range slices.Sorted(maps.Keys(fields.fields)) {
		spec, ok := document.SpecOf(name)
		if !ok {
			fields.v.add(issue{Code: "unrecognized_keys", Path: fields.at(name),
				Message: fmt.Sprintf("Unrecognized key '%s': the fields are %s", name, strings.Join(document.FieldNames, ", "))})
			continue
		}
		f := fields.string(name, fieldRule(spec))
		if !f.Set {
			continue
		}
		if f.Null {
			out[name] = nil
			continue
		}
		if v, ok := fieldValue(fields, spec, f.Value); ok {
			out[name] = &v
		}
	}
	return out
}

// fieldRule is the limits of a field's value as a person sets it: a
// number or a name is a name's text, of at least one character.
func fieldRule(spec document.FieldSpec) stringRule {
	rule := stringRule{presence: nullable, trim: true, max: spec.Max}
	if spec.Type == document.TypeText {
		rule.name, rule.min = true, 1
	}
	return rule
}

var (
	isoDay      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	isoCurrency = regexp.MustCompile(`^[A-Z]{3}$`)
	decimal     = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	identifier  = regexp.MustCompile(`^[A-Z0-9+*]{4,40}$`)
)

// fieldValue checks a field's value for its type and gives it in the form
// the fields hold: an id upper-case without spaces.
func fieldValue(o *object, spec document.FieldSpec, v string) (string, bool) {
	bad := func(validation, message string) (string, bool) {
		o.v.add(issue{Code: "invalid_string", Path: o.at(spec.Name), Validation: validation, Message: message})
		return "", false
	}
	switch spec.Type {
	case document.TypeDate:
		if _, err := time.Parse(time.DateOnly, v); err != nil || !isoDay.MatchString(v) {
			return bad("date", "Invalid date: a real day as YYYY-MM-DD")
		}
	case document.TypeCurrency:
		if !isoCurrency.MatchString(v) {
			return bad("regex", "Invalid currency: an ISO 4217 code of three capital letters")
		}
	case document.TypeAmount:
		if !decimal.MatchString(v) {
			return bad("regex", "Invalid amount: a decimal number with a dot and no thousands separator")
		}
	case document.TypeID:
		v = strings.ToUpper(strings.Join(strings.Fields(v), ""))
		if !identifier.MatchString(v) {
			return bad("regex", "Invalid id: 4 to 40 letters or digits")
		}
	}
	return v, true
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
