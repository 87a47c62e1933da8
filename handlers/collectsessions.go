package handlers

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
	"acctapi/db"
)

// Limits of the public collect routes per minute, documented in
// docs/decisions.md: a link needs no key, so the key's limit cannot meter
// it. One token may be used 120 times; one address may send 60 tokens that
// are not found (malformed, unknown, revoked, of a deleted collect).
const (
	collectTokenLimit       = 120
	collectFailedTokenLimit = 60
)

var (
	// errCollectTokenExpired is the one answer of an expired link and of a
	// link to a closed or cancelled collect.
	errCollectTokenExpired = &apiError{http.StatusGone, "bad_request", "collect_token_expired",
		"this collect link has expired or its request was closed: ask the sender for a new link"}
	// errCollectTokenNotFound is the one answer of a token that reaches no
	// collect, whatever the reason: it never says whether it existed.
	errCollectTokenNotFound = errNotFound("no collect for this link: check that it was copied whole")
	errCollectItemNotFound  = errNotFound("no such item in this collect")
	errCollectFileNotFound  = errNotFound("no such file uploaded for this item through this collect's links")
)

// collectCall meters a request of a public collect route and runs call with
// the token's hash. A malformed token, a token whose minute is spent, and a
// call that does not find the token are refused. Only tokens that exist are
// counted per token, so that guessed ones can neither spend a link's
// requests nor fill the limiter; the others count against the address. An
// address that has spent its failed tokens is refused every token the
// store does not find, the malformed ones without a lookup; a link that
// exists keeps working, so that guesses sent from behind the same proxy or
// NAT as its holder do not lock it. The RateLimit-* headers are those of
// the limit the request counted against.
func (h *Handler) collectCall(w http.ResponseWriter, r *http.Request, token string, call func(hash []byte) error) error {
	addr := "collect-addr:" + h.clientHost(r)
	_, spent := h.limiter.Spent(addr, collectFailedTokenLimit, time.Minute)
	failed := func() error {
		if err := rateLimited(w, h.limiter.Allow(addr, collectFailedTokenLimit, time.Minute)); err != nil {
			return err
		}
		return errCollectTokenNotFound
	}
	if !auth.ValidCollectToken(token) {
		return failed()
	}
	hash := auth.HashCollectToken(token)
	if spent && !h.collectLinkExists(r, hash) {
		return failed()
	}
	key := "collect-token:" + hex.EncodeToString(hash)
	if _, spent := h.limiter.Spent(key, collectTokenLimit, time.Minute); spent {
		return rateLimited(w, h.limiter.Allow(key, collectTokenLimit, time.Minute))
	}
	err := call(hash)
	if e := (*db.Error)(nil); errors.As(err, &e) && e.Code == db.ENOTFOUND {
		return failed()
	}
	// The call is made: a window that filled meanwhile refuses the next
	// request, not this one.
	d := h.limiter.Allow(key, collectTokenLimit, time.Minute)
	d.Allowed = true
	rateLimited(w, d)
	return err
}

// collectLinkExists says whether the token hash names a link the store has,
// live or expired, with one read: from an address that has spent its failed
// tokens, only such a link goes on, to the writes of an upload or a submit
// included.
func (h *Handler) collectLinkExists(r *http.Request, hash []byte) bool {
	_, err := h.store.OpenCollectSession(r.Context(), hash)
	return db.ErrorCode(err) != db.ENOTFOUND
}

// collectSession meters the request and returns what the token's uploader
// sees. The upload page uses it too.
func (h *Handler) collectSession(w http.ResponseWriter, r *http.Request, token string) (*db.CollectView, error) {
	var view *db.CollectView
	err := h.collectCall(w, r, token, func(hash []byte) (err error) {
		view, err = h.store.OpenCollectSession(r.Context(), hash)
		return err
	})
	return view, err
}

// receiveCollectUpload meters the request, checks the link and the item,
// then streams the upload and records it as a file of the item. The upload
// page uses it too.
func (h *Handler) receiveCollectUpload(w http.ResponseWriter, r *http.Request, token, itemID string) (*db.File, error) {
	view, err := h.collectSession(w, r, token)
	if err != nil {
		return nil, err
	}
	var v validator
	itemID, ok := checkID(&v, nil, itemID)
	if !ok || !hasItem(view.Collect, itemID) {
		return nil, errCollectItemNotFound
	}
	if view.Collect.Status == db.CollectSubmitted {
		return nil, errCollectSubmitted
	}
	// A spent budget costs no disk either; the store checks again with the
	// file's size.
	if err := view.Spent(h.collectBudget, 0); err != nil {
		return nil, err
	}
	up, err := h.readUpload(w, r, "link:"+hex.EncodeToString(auth.HashCollectToken(token)), h.uploadLimits.perLink, "through this link")
	if up.file != nil {
		defer h.files.Discard(up.file)
	}
	if err != nil {
		return nil, err
	}
	name := up.checkFile(&v)
	if err := v.err(); err != nil {
		return nil, err
	}
	hash := auth.HashCollectToken(token)
	var f *db.File
	err = h.keep(r, up, name, func(in db.FileCreate) (err error) {
		f, err = h.store.ReceiveCollectFile(r.Context(), hash, itemID, in, h.collectBudget)
		return err
	})
	return f, err
}

// removeCollectUpload meters the request, checks the link, the item and
// the file, and takes the file back from the item. The upload page uses it
// too.
func (h *Handler) removeCollectUpload(w http.ResponseWriter, r *http.Request, token, itemID, fileID string) (*db.CollectView, error) {
	view, err := h.collectSession(w, r, token)
	if err != nil {
		return nil, err
	}
	var v validator
	itemID, itemOK := checkID(&v, nil, itemID)
	fileID, fileOK := checkID(&v, nil, fileID)
	i := slices.IndexFunc(view.Collect.Items, func(it *db.CollectItem) bool { return it.ID == itemID })
	switch {
	case !itemOK || i < 0:
		return nil, errCollectItemNotFound
	case !fileOK || !slices.Contains(view.Collect.Items[i].FileIDs, fileID):
		return nil, errCollectFileNotFound
	case view.Collect.Status == db.CollectSubmitted:
		return nil, errCollectSubmitted
	}
	return h.store.RemoveCollectFile(r.Context(), auth.HashCollectToken(token), itemID, fileID)
}

// errCollectSubmitted answers an upload to a submitted collect before its
// bytes are read; the store gives the same answer to one that raced a submit.
var errCollectSubmitted = &apiError{http.StatusConflict, "conflict", "conflict",
	"the collect is submitted: the sender must reopen it before more files can be uploaded"}

func hasItem(c *db.Collect, itemID string) bool {
	for _, it := range c.Items {
		if it.ID == itemID {
			return true
		}
	}
	return false
}

// submitCollect meters the request and submits the token's collect. A
// collect with required items left without a file answers a
// *db.MissingItemsError. The upload page uses it too.
func (h *Handler) submitCollect(w http.ResponseWriter, r *http.Request, token string) (*db.CollectView, error) {
	var view *db.CollectView
	err := h.collectCall(w, r, token, func(hash []byte) (err error) {
		view, err = h.store.SubmitCollect(r.Context(), hash)
		return err
	})
	return view, err
}

// collectViewResponse is what the uploader sees: this collect, its items and
// their files, and no id of anything else.
type collectViewResponse struct {
	FirmName   string             `json:"firmName"`
	ClientName string             `json:"clientName"`
	ExpiresAt  timestamp          `json:"expiresAt"`
	Collect    collectViewCollect `json:"collect"`
}

type collectViewCollect struct {
	Title   string            `json:"title"`
	Message *string           `json:"message"`
	DueDate *timestamp        `json:"dueDate"`
	Status  string            `json:"status"`
	Items   []collectViewItem `json:"items"`
}

type collectViewItem struct {
	ID              string            `json:"id"`
	Title           string            `json:"title"`
	Description     *string           `json:"description"`
	Required        bool              `json:"required"`
	Status          string            `json:"status"`
	RejectionReason *string           `json:"rejectionReason"`
	Kind            *string           `json:"kind"`
	TransactionID   *string           `json:"transactionId"`
	Files           []collectViewFile `json:"files"`
}

// collectViewFile is a file of an item as its uploader sees it, with the
// kind its reading found (or a person set) and whether that is another kind
// than the item asks for.
type collectViewFile struct {
	uploadedFileResponse
	Kind         *string `json:"kind"`
	KindMismatch bool    `json:"kindMismatch"`
}

// uploadedFileResponse is a file as its uploader sees it.
type uploadedFileResponse struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Size      int64     `json:"size"`
	MimeType  string    `json:"mimetype"`
	CreatedAt timestamp `json:"createdAt"`
}

func newUploadedFileResponse(f *db.File) uploadedFileResponse {
	return uploadedFileResponse{ID: f.ID, Name: f.Name, Size: f.Size, MimeType: f.MimeType, CreatedAt: timestampOf(f.CreatedAt)}
}

func newCollectViewResponse(view *db.CollectView) collectViewResponse {
	c := view.Collect
	items := make([]collectViewItem, len(c.Items))
	for i, it := range c.Items {
		files := make([]collectViewFile, 0, len(it.FileIDs))
		for _, id := range it.FileIDs {
			if f := view.Files[id]; f != nil {
				files = append(files, collectViewFile{newUploadedFileResponse(f), f.Kind, it.KindMismatch(f)})
			}
		}
		items[i] = collectViewItem{
			ID: it.ID, Title: it.Title, Description: it.Description, Required: it.Required,
			Status: it.Status, RejectionReason: it.RejectionReason, Kind: it.Kind, TransactionID: it.TransactionID, Files: files,
		}
	}
	return collectViewResponse{
		FirmName: view.FirmName, ClientName: view.ClientName, ExpiresAt: timestampOf(view.Session.ExpiresAt),
		Collect: collectViewCollect{Title: c.Title, Message: c.Message, DueDate: timestampPtr(c.DueDate), Status: c.Status, Items: items},
	}
}

// getCollectSession answers GET /v1/collect-sessions/{token}.
func (h *Handler) getCollectSession(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	view, err := h.collectSession(w, r, p.ByName("token"))
	respond(h, w, r, http.StatusOK, view, err, newCollectViewResponse)
}

// uploadCollectFile answers POST /v1/collect-sessions/{token}/items/{itemId}/files.
func (h *Handler) uploadCollectFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	f, err := h.receiveCollectUpload(w, r, p.ByName("token"), p.ByName("itemId"))
	respond(h, w, r, http.StatusCreated, f, err, newUploadedFileResponse)
}

// removeCollectFile answers DELETE /v1/collect-sessions/{token}/items/{itemId}/files/{fileId}.
func (h *Handler) removeCollectFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	view, err := h.removeCollectUpload(w, r, p.ByName("token"), p.ByName("itemId"), p.ByName("fileId"))
	respond(h, w, r, http.StatusOK, view, err, newCollectViewResponse)
}

// submitCollectSession answers POST /v1/collect-sessions/{token}/submit.
func (h *Handler) submitCollectSession(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	view, err := h.submitCollect(w, r, p.ByName("token"))
	respond(h, w, r, http.StatusOK, view, err, newCollectViewResponse)
}

// missingItemsIssues turns the required items a submit lacks into one
// validation issue each, at the item's position.
func missingItemsIssues(e *db.MissingItemsError) []issue {
	issues := make([]issue, len(e.Positions))
	for i, pos := range e.Positions {
		issues[i] = issue{Code: "custom", Path: []any{"items", pos},
			Message: fmt.Sprintf("%q is required: upload a file for it before submitting (again, if it was rejected)", e.Titles[i])}
	}
	return issues
}
