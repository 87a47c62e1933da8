package handlers

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"acctapi/bankimport"
	"acctapi/bankstatement"
	"acctapi/db"
)

// Bank statements, the client's bank accounts, and their transactions with
// the documents matched to them.

type bankAccountResponse struct {
	ID          string    `json:"id"`
	IBAN        string    `json:"iban"`
	BIC         *string   `json:"bic"`
	Currency    string    `json:"currency"`
	OwnerName   *string   `json:"ownerName"`
	Balance     *string   `json:"balance"`
	BalanceDate *string   `json:"balanceDate"`
	CreatedAt   timestamp `json:"createdAt"`
	UpdatedAt   timestamp `json:"updatedAt"`
}

// newBankAccountResponse shows the account's IBAN, or the account id its
// MT940 statements give where they name no IBAN.
func newBankAccountResponse(a *db.BankAccount) bankAccountResponse {
	iban := a.Ref
	if a.IBAN != nil {
		iban = *a.IBAN
	}
	return bankAccountResponse{ID: a.ID, IBAN: iban, BIC: a.BIC, Currency: a.Currency, OwnerName: a.OwnerName,
		Balance: amountPtr(a.Balance, a.Currency), BalanceDate: a.BalanceDate,
		CreatedAt: timestampOf(a.CreatedAt), UpdatedAt: timestampOf(a.UpdatedAt)}
}

type bankStatementResponse struct {
	ID               string    `json:"id"`
	AccountID        string    `json:"accountId"`
	Format           string    `json:"format"`
	From             string    `json:"from"`
	To               string    `json:"to"`
	Currency         string    `json:"currency"`
	OpeningBalance   *string   `json:"openingBalance"`
	ClosingBalance   *string   `json:"closingBalance"`
	TransactionCount int       `json:"transactionCount"`
	DuplicateCount   int       `json:"duplicateCount"`
	FileID           *string   `json:"fileId"`
	CreatedAt        timestamp `json:"createdAt"`
}

func newBankStatementResponse(s *db.BankStatement) bankStatementResponse {
	return bankStatementResponse{ID: s.ID, AccountID: s.AccountID, Format: s.Format, From: s.From, To: s.To,
		Currency: s.Currency, OpeningBalance: amountPtr(s.OpeningBalance, s.Currency),
		ClosingBalance: amountPtr(s.ClosingBalance, s.Currency), TransactionCount: s.TransactionCount,
		DuplicateCount: s.DuplicateCount, FileID: s.FileID, CreatedAt: timestampOf(s.CreatedAt)}
}

type transactionResponse struct {
	ID               string                     `json:"id"`
	AccountID        string                     `json:"accountId"`
	StatementID      string                     `json:"statementId"`
	BookingDate      string                     `json:"bookingDate"`
	ValueDate        *string                    `json:"valueDate"`
	Amount           string                     `json:"amount"`
	Currency         string                     `json:"currency"`
	CounterpartyName *string                    `json:"counterpartyName"`
	CounterpartyIBAN *string                    `json:"counterpartyIban"`
	RemittanceInfo   *string                    `json:"remittanceInfo"`
	EndToEndID       *string                    `json:"endToEndId"`
	BankReference    *string                    `json:"bankReference"`
	Status           string                     `json:"status"`
	Matches          []transactionMatchResponse `json:"matches"`
	Note             *string                    `json:"note"`
	CreatedAt        timestamp                  `json:"createdAt"`
	UpdatedAt        timestamp                  `json:"updatedAt"`
}

type transactionMatchResponse struct {
	FileID         string   `json:"fileId"`
	FileName       string   `json:"fileName"`
	DocumentNumber *string  `json:"documentNumber"`
	TotalAmount    *string  `json:"totalAmount"`
	State          string   `json:"state"`
	Score          float64  `json:"score"`
	Reasons        []string `json:"reasons"`
	Source         string   `json:"source"`
}

func newTransactionResponse(t *db.Transaction) transactionResponse {
	matches := make([]transactionMatchResponse, len(t.Matches))
	for i, m := range t.Matches {
		reasons := m.Reasons
		if reasons == nil {
			reasons = []string{}
		}
		currency := t.Currency
		if m.Currency != nil {
			currency = *m.Currency
		}
		matches[i] = transactionMatchResponse{FileID: m.FileID, FileName: m.FileName, DocumentNumber: m.DocumentNumber,
			TotalAmount: amountPtr(m.TotalAmount, currency), State: m.State, Score: m.Score, Reasons: reasons, Source: m.Source}
	}
	return transactionResponse{ID: t.ID, AccountID: t.AccountID, StatementID: t.StatementID, BookingDate: t.BookingDate,
		ValueDate: t.ValueDate, Amount: bankstatement.Amount(t.Amount).Format(t.Currency), Currency: t.Currency,
		CounterpartyName: t.CounterpartyName, CounterpartyIBAN: t.CounterpartyIBAN, RemittanceInfo: t.RemittanceInfo,
		EndToEndID: t.EndToEndID, BankReference: t.BankReference, Status: t.Status, Matches: matches, Note: t.Note,
		CreatedAt: timestampOf(t.CreatedAt), UpdatedAt: timestampOf(t.UpdatedAt)}
}

// amountPtr writes a stored amount as a decimal string; nil stays nil.
func amountPtr(units *int64, currency string) *string {
	if units == nil {
		return nil
	}
	s := bankstatement.Amount(*units).Format(currency)
	return &s
}

// maxStatementImports is how many statement imports parse and import
// their files at once; the others wait their turn with their file read. A
// parse and import hold several times the file's size, which this bounds;
// their writes take turns in the single writer anyway.
const maxStatementImports = 1

// statementImportTime bounds a statement import's wait for its turn, its
// parse and import, and its answer, once its file is read.
const statementImportTime = 5 * time.Minute

// importStatement answers POST /v1/bank-statements: the file is read,
// checked and imported, or refused whole.
func (h *Handler) importStatement(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	up, err := h.readInMemory(w, r, bankstatement.MaxSize)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The upload's deadlines followed its bytes; with the file read, the
	// turn, parse and import have the time a request has.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(statementImportTime))
	_ = rc.SetWriteDeadline(time.Now().Add(statementImportTime))
	select {
	case h.statementImports <- struct{}{}:
		defer func() { <-h.statementImports }()
	case <-r.Context().Done():
		return
	}
	var v validator
	workspaceID := v.body(up.fieldsJSON()).id("workspaceId", optional)
	if up.data == nil {
		v.add(typeIssue([]any{"file"}, "file", "undefined"))
	}
	name := up.checkName(&v)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	in, err := bankimport.Read(up.data)
	if err != nil {
		h.fail(w, r, statementRefused(err))
		return
	}
	clientID := stateOf(r).clientID
	var s *db.BankStatement
	if !workspaceID.Set {
		s, err = h.store.ImportStatement(r.Context(), clientID, *in, nil)
		respond(h, w, r, importedStatus(s), s, err, newBankStatementResponse)
		return
	}
	// The statement is kept as a File of the workspace too, recorded in
	// the transaction of the import.
	if up.file, err = h.files.Write(bytes.NewReader(up.data), int64(len(up.data))); err != nil {
		h.fail(w, r, err)
		return
	}
	defer h.files.Discard(up.file)
	err = h.keep(r, up, name, func(file db.FileCreate) (err error) {
		file.WorkspaceID = workspaceID.Value
		s, err = h.store.ImportStatement(r.Context(), clientID, *in, &file)
		if err == nil && s.Known {
			// Nothing was imported, so no file was recorded: its bytes go.
			return errStatementKnown
		}
		return err
	})
	if errors.Is(err, errStatementKnown) {
		err = nil
	}
	respond(h, w, r, importedStatus(s), s, err, newBankStatementResponse)
}

// errStatementKnown tells keep that an import recorded no file.
var errStatementKnown = errors.New("every entry of the statement was imported before")

// importedStatus is 201 for a statement imported, 200 for the one a file
// with no new entry repeats.
func importedStatus(s *db.BankStatement) int {
	if s != nil && s.Known {
		return http.StatusOK
	}
	return http.StatusCreated
}

// statementRefused answers a file that is not a statement the API imports,
// with the reason.
func statementRefused(err error) error {
	var refused *bankstatement.Error
	reason := err.Error()
	if errors.As(err, &refused) {
		reason = refused.Reason
	} else if !errors.Is(err, bankimport.ErrSeveralAccounts) {
		return err
	}
	return &validationError{issues: []issue{{Code: "custom", Path: []any{"file"},
		Message: "the file is not a bank statement that can be imported: " + reason}}}
}

// listBankStatements answers GET /v1/bank-statements.
func (h *Handler) listBankStatements(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var v validator
	q := v.query(r.URL.Query())
	accountID := q.id("accountId")
	req := pageRequest(q, db.BankStatementSorts)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.store.ListBankStatements(r.Context(), stateOf(r).clientID, accountID, req)
	respond(h, w, r, http.StatusOK, page, err, listOf(newBankStatementResponse))
}

// getBankStatement answers GET /v1/bank-statements/{id}.
func (h *Handler) getBankStatement(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.FindBankStatement, newBankStatementResponse)
}

// listBankAccounts answers GET /v1/bank-accounts.
func (h *Handler) listBankAccounts(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	serveList(h, w, r, clientOf, db.BankAccountSorts, h.store.ListBankAccounts, newBankAccountResponse)
}

// getBankAccount answers GET /v1/bank-accounts/{id}.
func (h *Handler) getBankAccount(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.FindBankAccount, newBankAccountResponse)
}

// transactionStatuses are the states a transaction list filters by.
var transactionStatuses = []string{db.TransactionUnmatched, db.TransactionSuggested, db.TransactionMatched, db.TransactionIgnored}

// maxTransactionSearch bounds the q of the transaction list, in characters.
const maxTransactionSearch = 200

// listTransactions answers GET /v1/transactions: newest booking first
// unless the query says otherwise.
func (h *Handler) listTransactions(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	filter, req, err := transactionListQuery(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.store.ListTransactions(r.Context(), stateOf(r).clientID, filter, req)
	respond(h, w, r, http.StatusOK, page, err, listOf(newTransactionResponse))
}

func transactionListQuery(values url.Values) (db.TransactionFilter, db.PageRequest, error) {
	var v validator
	q := v.query(values)
	filter := db.TransactionFilter{AccountID: q.id("accountId"), StatementID: q.id("statementId"),
		BookingDateFrom: q.date("bookingDateFrom"), BookingDateTo: q.date("bookingDateTo"),
		Status: q.enum("status", transactionStatuses, ""), Direction: q.enum("direction", []string{"in", "out"}, ""),
		FileID: q.id("fileId")}
	if s, present := q.get("q"); present {
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxTransactionSearch || s == "" {
			q.v.add(sizeIssue("too_big", []any{"query", "q"}, "string", maxTransactionSearch,
				fmt.Sprintf("q is valid UTF-8 of 1 to %d characters", maxTransactionSearch)))
		}
		filter.Query = s
	}
	req := db.PageRequest{Limit: q.int("limit", 1, maxLimit, defaultLimit), Cursor: q.id("cursor"),
		Sort: q.enum("sort", db.TransactionSorts, "bookingDate"), Desc: q.enum("order", orders, "desc") == "desc"}
	return filter, req, v.err()
}

// date reads a YYYY-MM-DD date parameter; "" when absent or invalid.
func (q *query) date(name string) string {
	s, present := q.get(name)
	if !present {
		return ""
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil || len(s) != len(time.DateOnly) {
		q.v.add(issue{Code: "invalid_string", Path: []any{"query", name}, Validation: "date", Message: "Invalid date (YYYY-MM-DD)"})
		return ""
	}
	return s
}

// getTransaction answers GET /v1/transactions/{id}.
func (h *Handler) getTransaction(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.FindTransaction, newTransactionResponse)
}

// transactionNote is a person's note on a transaction: free text.
var transactionNote = stringRule{presence: nullable, text: true, max: 2000}

// updateTransaction answers PATCH /v1/transactions/{id}: a person's
// decision, which matching never overrides.
func (h *Handler) updateTransaction(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var u db.TransactionUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		body.only("fileIds", "ignored", "note")
		u = db.TransactionUpdate{
			FileIDs: update(body.ids("fileIds", optional)),
			Ignored: update(body.bool("ignored", optional)),
			Note:    update(body.string("note", transactionNote)),
		}
	})
	if !ok {
		return
	}
	t, err := h.store.UpdateTransaction(r.Context(), stateOf(r).clientID, id, u)
	respond(h, w, r, http.StatusOK, t, err, newTransactionResponse)
}
