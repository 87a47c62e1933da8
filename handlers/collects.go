package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
	"acctapi/bankstatement"
	"acctapi/db"
)

// Limits on collect fields, documented in the OpenAPI document and
// docs/decisions.md.
const (
	maxCollectTitle        = 500
	maxCollectMessage      = 10_000
	maxCollectItems        = 50
	maxItemDescription     = 2_000
	maxRejectionReason     = 1_000
	maxSessionLabel        = 200
	minSessionLifetime     = 300       // 5 minutes, in seconds
	maxSessionLifetime     = 7_776_000 // 90 days
	defaultSessionLifetime = 1_209_600 // 14 days
)

// collectLocales are the languages of a collect's page and mails.
var collectLocales = []string{"en", "de"}

// collectStatusesSet are the statuses PATCH /v1/collects/{id} may set:
// SUBMITTED is the uploader's to set.
var collectStatusesSet = []string{db.CollectOpen, db.CollectClosed, db.CollectCancelled}

// collectStatuses are every status a collect may have, for the list filter.
var collectStatuses = []string{db.CollectOpen, db.CollectSubmitted, db.CollectClosed, db.CollectCancelled}

type collectResponse struct {
	ID          string                `json:"id"`
	WorkspaceID string                `json:"workspaceId"`
	TaskID      *string               `json:"taskId"`
	Title       string                `json:"title"`
	Message     *string               `json:"message"`
	DueDate     *timestamp            `json:"dueDate"`
	Status      string                `json:"status"`
	Locale      string                `json:"locale"`
	Items       []collectItemResponse `json:"items"`
	CreatedAt   timestamp             `json:"createdAt"`
	UpdatedAt   timestamp             `json:"updatedAt"`
	SubmittedAt *timestamp            `json:"submittedAt"`
}

type collectItemResponse struct {
	ID              string   `json:"id"`
	Title           string   `json:"title"`
	Description     *string  `json:"description"`
	Required        bool     `json:"required"`
	FolderID        *string  `json:"folderId"`
	Status          string   `json:"status"`
	RejectionReason *string  `json:"rejectionReason"`
	Kind            *string  `json:"kind"`
	TransactionID   *string  `json:"transactionId"`
	FileIDs         []string `json:"fileIds"`
}

func newCollectResponse(c *db.Collect) collectResponse {
	items := make([]collectItemResponse, len(c.Items))
	for i, it := range c.Items {
		fileIDs := it.FileIDs
		if fileIDs == nil {
			fileIDs = []string{}
		}
		items[i] = collectItemResponse{
			ID: it.ID, Title: it.Title, Description: it.Description, Required: it.Required, FolderID: it.FolderID,
			Status: it.Status, RejectionReason: it.RejectionReason, Kind: it.Kind, TransactionID: it.TransactionID, FileIDs: fileIDs,
		}
	}
	return collectResponse{
		ID: c.ID, WorkspaceID: c.WorkspaceID, TaskID: c.TaskID, Title: c.Title, Message: c.Message,
		DueDate: timestampPtr(c.DueDate), Status: c.Status, Locale: c.Locale, Items: items,
		CreatedAt: timestampOf(c.CreatedAt), UpdatedAt: timestampOf(c.UpdatedAt), SubmittedAt: timestampPtr(c.SubmittedAt),
	}
}

type collectSessionResponse struct {
	ID         string     `json:"id"`
	CollectID  string     `json:"collectId"`
	Label      *string    `json:"label"`
	ExpiresAt  timestamp  `json:"expiresAt"`
	CreatedAt  timestamp  `json:"createdAt"`
	RevokedAt  *timestamp `json:"revokedAt"`
	LastUsedAt *timestamp `json:"lastUsedAt"`
	// Email is where the link was mailed; Mail is that mail's state.
	Email     *string              `json:"email"`
	Reminders bool                 `json:"reminders"`
	Mail      *sessionMailResponse `json:"mail"`
}

func newCollectSessionResponse(s *db.CollectSession) collectSessionResponse {
	return collectSessionResponse{
		ID: s.ID, CollectID: s.CollectID, Label: s.Label, ExpiresAt: timestampOf(s.ExpiresAt),
		CreatedAt: timestampOf(s.CreatedAt), RevokedAt: timestampPtr(s.RevokedAt), LastUsedAt: timestampPtr(s.LastUsedAt),
		Email: s.Email, Reminders: s.Reminders, Mail: newSessionMailResponse(s.Mail),
	}
}

// collectSessionCreatedResponse is a new session with its token and page
// address: the only answer that ever holds them.
type collectSessionCreatedResponse struct {
	collectSessionResponse
	Token string `json:"token"`
	URL   string `json:"url"`
	// Mailed says that the link was queued for mailing to Email.
	Mailed bool `json:"mailed"`
	// Warnings say what the link will not do that the collect asks for
	// (it expires before the due date); never null.
	Warnings []string `json:"warnings"`
}

var (
	collectTitle       = stringRule{trim: true, min: 1, max: maxCollectTitle}
	newCollectTitle    = stringRule{presence: required, trim: true, min: 1, max: maxCollectTitle}
	collectMessage     = stringRule{text: true, max: maxCollectMessage}
	newItemTitle       = stringRule{presence: required, trim: true, min: 1, max: maxCollectTitle}
	itemDescription    = stringRule{text: true, max: maxItemDescription}
	rejectionReason    = stringRule{trim: true, min: 1, max: maxRejectionReason, text: true}
	collectSessionName = stringRule{trim: true, max: maxSessionLabel}
)

// listCollects answers GET /v1/collects.
func (h *Handler) listCollects(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	filter, req, err := collectListQuery(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.store.ListCollects(r.Context(), stateOf(r).clientID, filter, req)
	respond(h, w, r, http.StatusOK, page, err, listOf(newCollectResponse))
}

func collectListQuery(values url.Values) (db.CollectFilter, db.PageRequest, error) {
	var v validator
	q := v.query(values)
	filter := db.CollectFilter{WorkspaceID: q.id("workspaceId"), TaskID: q.id("taskId"), Status: q.enum("status", collectStatuses, "")}
	req := pageRequest(q, db.CollectSorts)
	return filter, req, v.err()
}

// createCollect answers POST /v1/collects.
func (h *Handler) createCollect(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var in db.CollectCreate
	var receipts *db.MissingReceiptsFilter
	if !h.readBody(w, r, func(body *object) { in, receipts = collectCreate(body) }) {
		return
	}
	clientID := stateOf(r).clientID
	if receipts != nil {
		// The items' titles show the transactions.
		if !stateOf(r).principal.Can(auth.BankingRead) {
			h.fail(w, r, errMissingScope(auth.BankingRead))
			return
		}
		locale := in.Locale
		if locale == "" {
			firm, err := h.store.GetFirm(r.Context(), stateOf(r).principal.FirmID)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			locale = firm.Locale
		}
		items, err := h.receiptItems(r, clientID, *receipts, len(in.Items), locale)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		in.Items = append(in.Items, items...)
	}
	c, err := h.store.CreateCollect(r.Context(), clientID, in)
	respond(h, w, r, http.StatusCreated, c, err, newCollectResponse)
}

// collectCreate reads the fields of a new collect and its items, and the
// transactions whose missing receipts it asks for, if any (then items may
// be left out).
func collectCreate(body *object) (db.CollectCreate, *db.MissingReceiptsFilter) {
	workspaceID := body.id("workspaceId", required)
	title := body.string("title", newCollectTitle)
	message := body.string("message", collectMessage)
	due := body.time("dueDate", optional)
	taskID := body.id("taskId", optional)
	locale := body.enum("locale", collectLocales, optional)
	in := db.CollectCreate{
		WorkspaceID: workspaceID.Value, TaskID: valueOrNil(taskID), Title: title.Value,
		Message: valueOrNil(message), DueDate: valueOrNil(due), Locale: locale.Value,
	}
	receipts := missingReceipts(body)
	itemsPresence := required
	if receipts != nil {
		itemsPresence = optional
	}
	items, _ := body.objects("items", itemsPresence, 1, maxCollectItems)
	for _, item := range items {
		in.Items = append(in.Items, collectItemCreate(item))
	}
	return in, receipts
}

// missingReceipts reads transactionIds or fromTransactions; nil when the
// request sends neither (or they are invalid).
func missingReceipts(body *object) *db.MissingReceiptsFilter {
	ids := body.stringArray("transactionIds", optional, 1, maxCollectItems, func(path []any, s string) (string, bool) {
		return checkID(body.v, path, s)
	})
	from, sent := body.object("fromTransactions", optional)
	var f *db.MissingReceiptsFilter
	if sent {
		accountID := from.id("accountId", required)
		first, last := from.date("bookingDateFrom", required), from.date("bookingDateTo", required)
		if accountID.Set && first.Set && last.Set {
			if first.Value > last.Value {
				body.v.add(issue{Code: "custom", Path: from.at("bookingDateTo"), Message: "bookingDateTo is before bookingDateFrom"})
			}
			f = &db.MissingReceiptsFilter{AccountID: accountID.Value, BookingDateFrom: first.Value, BookingDateTo: last.Value}
		}
	}
	if ids.Set {
		if sent {
			body.v.add(issue{Code: "custom", Path: body.at("transactionIds"), Message: "send transactionIds or fromTransactions, not both"})
			return nil
		}
		return &db.MissingReceiptsFilter{IDs: ids.Value}
	}
	return f
}

// date reads a YYYY-MM-DD date field.
func (o *object) date(name string, p presence) field[string] {
	raw, _, ok := o.get(name, "string", p&^nullable)
	if !ok {
		return field[string]{}
	}
	s, ok := o.decodeString(name, raw)
	if !ok {
		return field[string]{}
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil || len(s) != len(time.DateOnly) {
		o.v.add(issue{Code: "invalid_string", Path: o.at(name), Validation: "date", Message: "Invalid date (YYYY-MM-DD)"})
		return field[string]{}
	}
	return field[string]{Set: true, Value: s}
}

// receiptItems are the items that ask for the documents of the
// transactions f selects, after the given number of items of the request,
// titled in the collect's language.
func (h *Handler) receiptItems(r *http.Request, clientID string, f db.MissingReceiptsFilter, given int, locale string) ([]db.CollectItemCreate, error) {
	room := db.MaxCollectItems - given
	txs, err := h.store.MissingReceipts(r.Context(), clientID, f, room)
	if err != nil {
		return nil, err
	}
	path := []any{"fromTransactions"}
	if len(f.IDs) > 0 {
		path = []any{"transactionIds"}
	}
	switch {
	case len(txs) > room:
		return nil, &validationError{issues: []issue{{Code: "custom", Path: path,
			Message: fmt.Sprintf("a collect holds at most %d items: the range has more transactions without documents; narrow it", db.MaxCollectItems)}}}
	case len(txs) == 0 && given == 0:
		return nil, &validationError{issues: []issue{{Code: "custom", Path: path,
			Message: "no money-out transaction of the range lacks a document: there is nothing to ask for"}}}
	}
	items := make([]db.CollectItemCreate, len(txs))
	for i, t := range txs {
		items[i] = db.CollectItemCreate{Title: receiptTitle(t, locale), Description: t.RemittanceInfo, Required: true, TransactionID: &t.ID}
		if d := items[i].Description; d != nil && utf8.RuneCountInString(*d) > maxItemDescription {
			items[i].Description = ptrTo(string([]rune(*d)[:maxItemDescription]))
		}
	}
	return items, nil
}

// maxReceiptName bounds the counterparty's name in an item's title.
const maxReceiptName = 200

// receiptTitle is the title of the item asking for a transaction's
// document: its date, counterparty and amount, written as the collect's
// language writes them, with a true minus sign: "2026-03-12 · Amazon EU
// S.à r.l. · −49.99 EUR" in English, "12.03.2026 · … · −49,99 EUR" in German.
// The page shows the title as it is, so it must be in the page's language.
func receiptTitle(t *db.Transaction, locale string) string {
	date := t.BookingDate
	if d, err := time.Parse(time.DateOnly, date); err == nil && locale == "de" {
		date = d.Format("02.01.2006")
	}
	parts := []string{date}
	name := t.CounterpartyName
	if name == nil || strings.TrimSpace(*name) == "" {
		name = t.RemittanceInfo
	}
	if name != nil && strings.TrimSpace(*name) != "" {
		n := strings.TrimSpace(*name)
		if utf8.RuneCountInString(n) > maxReceiptName {
			n = string([]rune(n)[:maxReceiptName-1]) + "…"
		}
		parts = append(parts, n)
	}
	amount := strings.Replace(bankstatement.Amount(t.Amount).Format(t.Currency), "-", "\u2212", 1)
	if locale == "de" {
		amount = strings.Replace(amount, ".", ",", 1)
	}
	parts = append(parts, amount+" "+t.Currency)
	return strings.Join(parts, " · ")
}

func ptrTo[T any](v T) *T { return &v }

// collectItemCreate reads the fields of a new item; required is true unless
// sent false, and a kind left out or null asks for any document.
func collectItemCreate(body *object) db.CollectItemCreate {
	title := body.string("title", newItemTitle)
	description := body.string("description", itemDescription)
	isRequired := body.bool("required", optional)
	folderID := body.id("folderId", optional)
	kind := body.enum("kind", db.ItemKinds, nullable)
	return db.CollectItemCreate{
		Title: title.Value, Description: valueOrNil(description),
		Required: !isRequired.Set || isRequired.Value, FolderID: valueOrNil(folderID), Kind: valueOrNil(kind),
	}
}

// getCollect answers GET /v1/collects/{id}.
func (h *Handler) getCollect(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.FindCollect, newCollectResponse)
}

// updateCollect answers PATCH /v1/collects/{id}.
func (h *Handler) updateCollect(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var u db.CollectUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		u = db.CollectUpdate{
			Title:   update(body.string("title", collectTitle)),
			Message: update(body.string("message", stringRule{presence: nullable, text: true, max: maxCollectMessage})),
			DueDate: update(body.time("dueDate", nullable)),
			Status:  update(body.enum("status", collectStatusesSet, optional)),
			Locale:  update(body.enum("locale", collectLocales, optional)),
		}
	})
	if !ok {
		return
	}
	c, err := h.store.UpdateCollect(r.Context(), stateOf(r).clientID, id, u)
	respond(h, w, r, http.StatusOK, c, err, newCollectResponse)
}

// deleteCollect answers DELETE /v1/collects/{id}.
func (h *Handler) deleteCollect(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.DeleteCollect, newCollectResponse)
}

// addCollectItem answers POST /v1/collects/{id}/items.
func (h *Handler) addCollectItem(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var in db.CollectItemCreate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) { in = collectItemCreate(body) })
	if !ok {
		return
	}
	c, err := h.store.AddCollectItem(r.Context(), stateOf(r).clientID, id, in)
	respond(h, w, r, http.StatusCreated, c, err, newCollectResponse)
}

// updateCollectItem answers PATCH /v1/collects/{id}/items/{itemId}.
func (h *Handler) updateCollectItem(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var itemID string
	var u db.CollectItemUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		itemID = body.v.pathID(p, "itemId")
		u = collectItemUpdate(body)
	})
	if !ok {
		return
	}
	c, err := h.store.UpdateCollectItem(r.Context(), stateOf(r).clientID, id, itemID, u)
	respond(h, w, r, http.StatusOK, c, err, newCollectResponse)
}

// collectItemUpdate reads the fields an item update sets. A rejection comes
// with its reason, and a reason only with a rejection.
func collectItemUpdate(body *object) db.CollectItemUpdate {
	status := body.enum("status", []string{db.ItemRejected}, optional)
	reason := body.string("rejectionReason", rejectionReason)
	switch {
	case status.Set && !reason.Set && body.fields["rejectionReason"] == nil:
		body.v.add(typeIssue(body.at("rejectionReason"), "string", "undefined"))
	case reason.Set && !status.Set && body.fields["status"] == nil:
		body.v.add(issue{Code: "custom", Path: body.at("rejectionReason"),
			Message: `rejectionReason is taken only with "status": "REJECTED"`})
	}
	return db.CollectItemUpdate{
		Title:           update(body.string("title", collectTitle)),
		Description:     update(body.string("description", stringRule{presence: nullable, text: true, max: maxItemDescription})),
		Required:        update(body.bool("required", optional)),
		FolderID:        update(body.id("folderId", nullable)),
		Kind:            update(body.enum("kind", db.ItemKinds, nullable)),
		Status:          update(status),
		RejectionReason: update(reason),
	}
}

// createCollectSession answers POST /v1/collects/{id}/sessions: a new link,
// whose token is shown in this answer only.
func (h *Handler) createCollectSession(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var label, email field[string]
	var seconds field[int]
	var reminders field[bool]
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		seconds = body.int("expiresIn", optional, minSessionLifetime, maxSessionLifetime)
		label = body.string("label", collectSessionName)
		email = body.email("email", optional)
		reminders = body.bool("reminders", optional)
	})
	if !ok {
		return
	}
	c, err := h.store.FindCollect(r.Context(), stateOf(r).clientID, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	expires, warnings := sessionExpiry(h.now(), seconds, c.DueDate)
	token, hash, err := auth.NewCollectToken()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	in := db.CollectSessionCreate{ExpiresAt: expires, TokenHash: hash}
	if label.Set && label.Value != "" {
		in.Label = &label.Value
	}
	if email.Set {
		in.Mail = &db.SessionMail{Email: email.Value, NoReminders: reminders.Set && !reminders.Value}
		if h.mail {
			if err := mayMail(r); err != nil {
				h.fail(w, r, err)
				return
			}
			in.Mail.Link = h.collectPageURL(token)
		}
	}
	s, err := h.store.CreateCollectSession(r.Context(), stateOf(r).clientID, id, in)
	stateOf(r).shownOnce = true
	respond(h, w, r, http.StatusCreated, s, err, func(s *db.CollectSession) collectSessionCreatedResponse {
		return collectSessionCreatedResponse{newCollectSessionResponse(s), token, h.collectPageURL(token), s.Mail != nil, warnings}
	})
}

// sessionExpiry is when a new link expires: after the lifetime asked for,
// else after the default lifetime or a day past the collect's due date,
// whichever is later (within the longest lifetime), so that the link an
// accountant sends works until the documents are due. A lifetime asked for
// that ends before the due date is kept, with a warning that says so.
func sessionExpiry(now time.Time, seconds field[int], due *time.Time) (time.Time, []string) {
	if seconds.Set {
		expires := now.Add(time.Duration(seconds.Value) * time.Second)
		if due != nil && expires.Before(*due) {
			return expires, []string{fmt.Sprintf("the link expires at %s, before the collect's due date %s: whoever has it cannot upload after that; make a link with a longer expiresIn, or none to cover the due date",
				expires.UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339))}
		}
		return expires, []string{}
	}
	expires := now.Add(defaultSessionLifetime * time.Second)
	if due != nil {
		expires = later(expires, due.Add(24*time.Hour))
	}
	if latest := now.Add(maxSessionLifetime * time.Second); expires.After(latest) {
		return latest, []string{fmt.Sprintf("the link expires at %s, before the collect's due date %s: links live at most 90 days",
			latest.UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339))}
	}
	return expires, []string{}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// collectPageURL is the address of a token's upload page: the server's
// public address (the base URL without /v1) and /collect/.
func (h *Handler) collectPageURL(token string) string {
	return strings.TrimSuffix(h.baseURL, "/v1") + "/collect/" + token
}

// collectSessionSorts are the sort keys of a collect's sessions.
var collectSessionSorts = []string{"createdAt"}

// listCollectSessions answers GET /v1/collects/{id}/sessions.
func (h *Handler) listCollectSessions(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var v validator
	id := v.pathID(p, "id")
	req := pageRequest(v.query(r.URL.Query()), collectSessionSorts)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.store.ListCollectSessions(r.Context(), stateOf(r).clientID, id, req)
	respond(h, w, r, http.StatusOK, page, err, listOf(newCollectSessionResponse))
}

// revokeCollectSession answers DELETE /v1/collects/{id}/sessions/{sessionId}.
func (h *Handler) revokeCollectSession(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var v validator
	id := v.pathID(p, "id")
	sessionID := v.pathID(p, "sessionId")
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	s, err := h.store.RevokeCollectSession(r.Context(), stateOf(r).clientID, id, sessionID)
	respond(h, w, r, http.StatusOK, s, err, func(s *db.CollectSession) deletedResponse {
		return deletedResponse{Object: "collect_session", Deleted: true, ID: s.ID}
	})
}
