package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/docfields"
)

// The month to the ledger: a client's ledger settings, its counterparties
// with their personal accounts, the bookings of its documents, and the
// DATEV exports.

type ledgerBankAccountResponse struct {
	AccountID     string `json:"accountId"`
	LedgerAccount string `json:"ledgerAccount"`
}

type ledgerSettingsResponse struct {
	Chart                 *string                     `json:"chart"`
	ConsultantNumber      *int                        `json:"consultantNumber"`
	ClientNumber          *int                        `json:"clientNumber"`
	FiscalYearStart       string                      `json:"fiscalYearStart"`
	AccountLength         int                         `json:"accountLength"`
	BankAccounts          []ledgerBankAccountResponse `json:"bankAccounts"`
	DefaultExpenseAccount *string                     `json:"defaultExpenseAccount"`
	DefaultRevenueAccount *string                     `json:"defaultRevenueAccount"`
	UpdatedAt             *timestamp                  `json:"updatedAt"`
}

func newLedgerSettingsResponse(s *db.LedgerSettings) ledgerSettingsResponse {
	banks := make([]ledgerBankAccountResponse, len(s.BankAccounts))
	for i, b := range s.BankAccounts {
		banks[i] = ledgerBankAccountResponse(b)
	}
	return ledgerSettingsResponse{Chart: s.Chart, ConsultantNumber: s.ConsultantNumber, ClientNumber: s.ClientNumber,
		FiscalYearStart: s.FiscalYearStart, AccountLength: s.AccountLength, BankAccounts: banks,
		DefaultExpenseAccount: s.DefaultExpenseAccount, DefaultRevenueAccount: s.DefaultRevenueAccount,
		UpdatedAt: timestampPtr(s.UpdatedAt)}
}

type counterpartyResponse struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	VATID         *string   `json:"vatId"`
	IBAN          *string   `json:"iban"`
	Role          string    `json:"role"`
	Account       *int64    `json:"account"`
	DocumentCount int       `json:"documentCount"`
	CreatedAt     timestamp `json:"createdAt"`
	UpdatedAt     timestamp `json:"updatedAt"`
}

func newCounterpartyResponse(c *db.Counterparty) counterpartyResponse {
	return counterpartyResponse{ID: c.ID, Name: c.Name, VATID: c.VATID, IBAN: c.IBAN, Role: c.Role, Account: c.Account,
		DocumentCount: c.DocumentCount, CreatedAt: timestampOf(c.CreatedAt), UpdatedAt: timestampOf(c.UpdatedAt)}
}

type skippedResponse struct {
	FileID string `json:"fileId"`
	Reason string `json:"reason"`
}

type exportResponse struct {
	ID                 string            `json:"id"`
	Status             string            `json:"status"`
	Format             string            `json:"format"`
	From               string            `json:"from"`
	To                 string            `json:"to"`
	DocumentCount      int               `json:"documentCount"`
	RowCount           int               `json:"rowCount"`
	Skipped            []skippedResponse `json:"skipped"`
	ChangedSinceExport []string          `json:"changedSinceExport"`
	Reason             *string           `json:"reason"`
	CreatedAt          timestamp         `json:"createdAt"`
	FinishedAt         *timestamp        `json:"finishedAt"`
}

func newExportResponse(e *db.Export) exportResponse {
	skipped := make([]skippedResponse, len(e.Skipped))
	for i, s := range e.Skipped {
		skipped[i] = skippedResponse(s)
	}
	changed := e.ChangedSinceExport
	if changed == nil {
		changed = []string{}
	}
	return exportResponse{ID: e.ID, Status: e.Status, Format: e.Format, From: e.From.Format(time.DateOnly),
		To: e.To.Format(time.DateOnly), DocumentCount: e.DocumentCount, RowCount: e.RowCount, Skipped: skipped,
		ChangedSinceExport: changed, Reason: e.Reason, CreatedAt: timestampOf(e.CreatedAt), FinishedAt: timestampPtr(e.FinishedAt)}
}

type bookingResponse struct {
	Account       *string `json:"account"`
	ContraAccount *string `json:"contraAccount"`
	TaxKey        *string `json:"taxKey"`
	Text          *string `json:"text"`
	Source        string  `json:"source"`
}

func newBookingResponse(b *db.Booking) *bookingResponse {
	if b == nil {
		return nil
	}
	return &bookingResponse{Account: b.Account, ContraAccount: b.ContraAccount, TaxKey: b.TaxKey, Text: b.Text, Source: b.Source}
}

type fileExportResponse struct {
	ID string    `json:"id"`
	At timestamp `json:"at"`
}

func newFileExportsResponse(exports []db.FileExport) []fileExportResponse {
	out := make([]fileExportResponse, len(exports))
	for i, e := range exports {
		out[i] = fileExportResponse{ID: e.ID, At: timestampOf(e.At)}
	}
	return out
}

var (
	// ledgerAccount is a general-ledger account of 4 to 8 digits.
	ledgerAccount = regexp.MustCompile(`^[0-9]{4,8}$`)
	// fiscalDay is the first day of a fiscal year, MM-DD.
	fiscalDay = regexp.MustCompile(`^(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`)
	// taxKey is a BU-Schlüssel, up to 4 digits.
	taxKey = regexp.MustCompile(`^[0-9]{1,4}$`)
)

// accountField reads a general-ledger account: a string of 4 to 8 digits.
func accountField(o *object, name string, p presence) field[string] {
	f := o.string(name, stringRule{presence: p, trim: true, max: 8})
	if f.Set && !f.Null && !ledgerAccount.MatchString(f.Value) {
		o.v.add(issue{Code: "invalid_string", Path: o.at(name), Validation: "regex", Message: "An account is 4 to 8 digits"})
		return field[string]{}
	}
	return f
}

// getLedgerSettings answers GET /v1/ledger-settings.
func (h *Handler) getLedgerSettings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	s, err := h.store.FindLedgerSettings(r.Context(), stateOf(r).clientID)
	respond(h, w, r, http.StatusOK, s, err, newLedgerSettingsResponse)
}

// putLedgerSettings answers PUT /v1/ledger-settings: the settings are
// replaced; what is left out is unset, or its default.
func (h *Handler) putLedgerSettings(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	s := db.LedgerSettings{FiscalYearStart: "01-01", AccountLength: 4}
	ok := h.readBody(w, r, func(body *object) {
		if f := body.enum("chart", []string{db.ChartSKR03, db.ChartSKR04}, optional); f.Set {
			s.Chart = &f.Value
		}
		if f := body.int("consultantNumber", optional, 1001, 9999999); f.Set {
			s.ConsultantNumber = &f.Value
		}
		if f := body.int("clientNumber", optional, 1, 99999); f.Set {
			s.ClientNumber = &f.Value
		}
		if f := body.string("fiscalYearStart", stringRule{trim: true, max: 5}); f.Set {
			if !fiscalDay.MatchString(f.Value) || f.Value == "02-29" || f.Value == "02-30" || f.Value == "02-31" {
				body.v.add(issue{Code: "invalid_string", Path: body.at("fiscalYearStart"), Validation: "regex",
					Message: "The fiscal year starts on a day of the year, MM-DD (not 29 February)"})
			}
			s.FiscalYearStart = f.Value
		}
		if f := body.int("accountLength", optional, 4, 8); f.Set {
			s.AccountLength = f.Value
		}
		if items, ok := body.objects("bankAccounts", optional, 0, 100); ok {
			for _, item := range items {
				s.BankAccounts = append(s.BankAccounts, db.LedgerBankAccount{
					AccountID: item.id("accountId", required).Value, LedgerAccount: accountField(item, "ledgerAccount", required).Value})
			}
		}
		if f := accountField(body, "defaultExpenseAccount", optional|nullable); f.Set && !f.Null {
			s.DefaultExpenseAccount = &f.Value
		}
		if f := accountField(body, "defaultRevenueAccount", optional|nullable); f.Set && !f.Null {
			s.DefaultRevenueAccount = &f.Value
		}
	})
	if !ok {
		return
	}
	saved, err := h.store.PutLedgerSettings(r.Context(), stateOf(r).clientID, s)
	respond(h, w, r, http.StatusOK, saved, err, newLedgerSettingsResponse)
}

// listCounterparties answers GET /v1/counterparties.
func (h *Handler) listCounterparties(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	serveList(h, w, r, clientOf, db.CounterpartySorts, h.store.ListCounterparties, newCounterpartyResponse)
}

// counterpartyName is a counterparty's name as a person sets it.
var counterpartyName = stringRule{trim: true, name: true, min: 1, max: 200}

// updateCounterparty answers PATCH /v1/counterparties/{id}.
func (h *Handler) updateCounterparty(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var u db.CounterpartyUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		u.Name = update(body.string("name", counterpartyName))
		if f := body.int("account", optional, 10000, 999999999); f.Set {
			account := int64(f.Value)
			u.Account = db.Update[int64]{Set: true, Value: &account}
		}
	})
	if !ok {
		return
	}
	c, err := h.store.UpdateCounterparty(r.Context(), stateOf(r).clientID, id, u)
	respond(h, w, r, http.StatusOK, c, err, newCounterpartyResponse)
}

// bookingChoice reads the booking of PATCH /v1/files/{id}; nil when it is
// not sent.
func bookingChoice(body *object) *db.BookingChoice {
	b, ok := body.object("booking", optional)
	if !ok {
		return nil
	}
	choice := &db.BookingChoice{Account: accountField(b, "account", required).Value}
	if f := b.string("taxKey", stringRule{presence: nullable, trim: true, max: 4}); f.Set && !f.Null {
		if !taxKey.MatchString(f.Value) {
			b.v.add(issue{Code: "invalid_string", Path: b.at("taxKey"), Validation: "regex", Message: "A tax key (BU-Schlüssel) is 1 to 4 digits"})
		}
		choice.TaxKey = &f.Value
	}
	if f := b.string("text", stringRule{presence: nullable, trim: true, name: true, max: 60}); f.Set && !f.Null {
		choice.Text = &f.Value
	}
	return choice
}

// setBooking records a person's booking of the file, learned for its
// supplier by the keys the field corrections key a supplier by.
func (h *Handler) setBooking(ctx context.Context, clientID string, f *db.File, b *db.BookingChoice) (*db.File, error) {
	if f.Analysis.Fields != nil {
		b.Suppliers = docfields.SupplierKeys(f.Analysis.Fields.Values)
	}
	return h.store.SetBooking(ctx, clientID, f.ID, *b)
}

// exportFormats are the formats an export is written in.
var exportFormats = []string{db.ExportDATEV}

// createExport answers POST /v1/exports: the export is queued and written
// in the background.
func (h *Handler) createExport(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var c db.ExportCreate
	ok := h.readBody(w, r, func(body *object) {
		c.Format = body.enum("format", exportFormats, required).Value
		from, to := body.date("from", required), body.date("to", required)
		c.From, _ = time.Parse(time.DateOnly, from.Value)
		c.To, _ = time.Parse(time.DateOnly, to.Value)
	})
	if !ok {
		return
	}
	clientID := stateOf(r).clientID
	s, err := h.store.FindLedgerSettings(r.Context(), clientID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if missing := s.Missing(); len(missing) > 0 {
		h.fail(w, r, missingSettings(missing))
		return
	}
	e, err := h.store.CreateExport(r.Context(), clientID, c)
	respond(h, w, r, http.StatusAccepted, e, err, newExportResponse)
}

// missingSettings answers an export of a client whose ledger settings lack
// what it needs: an issue for each, at ["ledgerSettings", name].
func missingSettings(missing []string) error {
	var v validator
	for _, m := range missing {
		name := jsonName(m)
		v.add(issue{Code: "custom", Path: []any{"ledgerSettings", name},
			Message: fmt.Sprintf("The client's ledger settings lack %s: set it with PUT /v1/ledger-settings before an export", name)})
	}
	return v.err()
}

// listExports answers GET /v1/exports.
func (h *Handler) listExports(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	serveList(h, w, r, clientOf, db.ExportSorts, h.store.ListExports, newExportResponse)
}

// getExport answers GET /v1/exports/{id}.
func (h *Handler) getExport(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.FindExport, newExportResponse)
}

// exportFile is an export's ZIP as the download route serves a file.
func exportFile(e *db.Export) *db.File {
	name := fmt.Sprintf("DATEV_%s_%s.zip", e.From.Format("20060102"), e.To.Format("20060102"))
	f := &db.File{ID: e.ID, ClientID: e.ClientID, Name: name, MimeType: "application/zip", SHA256: e.SHA256, UpdatedAt: e.CreatedAt}
	if e.Size != nil {
		f.Size = *e.Size
	}
	if e.FinishedAt != nil {
		f.UpdatedAt = *e.FinishedAt
	}
	return f
}

// errExportNotDone answers a link asked for before the export is done.
func errExportNotDone(e *db.Export) *apiError {
	return &apiError{http.StatusConflict, "conflict", "export_not_done",
		fmt.Sprintf("export %s is %s: its ZIP can be fetched once it is done", e.ID, e.Status)}
}

// exportLink answers GET /v1/exports/{id}/content: a link to the ZIP,
// signed as a file's content link is.
func (h *Handler) exportLink(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.pathID(w, r, p)
	if !ok {
		return
	}
	e, err := h.store.FindExport(r.Context(), stateOf(r).clientID, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if e.Status != db.ExportDone {
		h.fail(w, r, errExportNotDone(e))
		return
	}
	f := exportFile(e)
	var link string
	if h.presigned != nil {
		link, err = h.presigned.SignedURL(r.Context(), e.ID, auth.LinkLifetime, "application/zip", contentDisposition(f.Name))
	} else {
		var expires int64
		var signature string
		expires, signature, err = h.signer.Sign(r.Context(), e.ID)
		link = h.baseURL + "/exports/" + e.ID + "/download?" + url.Values{
			"expires": {strconv.FormatInt(expires, 10)}, "signature": {signature}}.Encode()
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fileLinkResponse{URL: link, ExpiresIn: int(auth.LinkLifetime.Seconds())})
}

// downloadExport answers GET and HEAD /v1/exports/{id}/download: no key,
// the signature is the credential, with the limits of a file's download.
func (h *Handler) downloadExport(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.linkedID(w, r, p)
	if !ok {
		return
	}
	e, err := h.store.FindExportForDownload(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.served == nil || e.Status != db.ExportDone {
		h.fail(w, r, db.Errorf(db.ENOTFOUND, "export %s not found", id))
		return
	}
	h.serveStored(w, r, exportFile(e))
}
