// Package handlers serves acctapi's HTTP API: one route table, thin handlers
// (decode, validate, call the store, encode) and one error path.
package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
)

// Config holds what the handlers need; cmd fills it.
type Config struct {
	Store   *db.DB
	Auth    *auth.Authenticator
	Limiter *auth.Limiter
	Logger  *slog.Logger
	// BaseURL is the public address including /v1, as in the OpenAPI servers.
	BaseURL string
	Version string
	// Files holds the bytes of uploads: a *filestore.Store, whose bytes the
	// download route serves behind links Signer signs, or a
	// *filestore.Bucket, which signs its own links and serves the bytes.
	Files  FileStore
	Signer *auth.Signer
	// MaxUploadBytes bounds the size of one uploaded file.
	MaxUploadBytes int64
	// AllowPrivateWebhooks lets subscription URLs use http and reach private
	// and loopback addresses (development and tests).
	AllowPrivateWebhooks bool
	// HTTPS says that the handler is served over HTTPS, so that every
	// answer tells browsers to keep to it (Strict-Transport-Security).
	HTTPS bool
	// Observer is told of every request; nil tells no one.
	Observer RequestObserver
	// Now is the clock that sets when collect links expire; time.Now when nil.
	Now func() time.Time
	// Mail says that mail is sent (an SMTP relay is configured): collect
	// links given an address and invitations are queued for mailing.
	Mail bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-For or
	// Forwarded header names the caller; no other peer's is believed.
	TrustedProxies []netip.Prefix
}

// Handler serves the API.
type Handler struct {
	store   *db.DB
	auth    *auth.Authenticator
	limiter *auth.Limiter
	log     *slog.Logger
	version string
	openapi []byte
	router  *httprouter.Router
	clients clientCache
	// idempotency holds the Idempotency-Keys of the requests running.
	idempotency idempotencyLocks
	// verified holds the stored files whose bytes matched their record.
	verified verifiedFiles
	// uploads counts the uploads running, which uploadLimits bound.
	uploads      uploadSlots
	uploadLimits uploadLimits
	// statementImports holds a place for each statement import reading or
	// importing its file (see importStatement).
	statementImports chan struct{}
	// collectBudget bounds what uploads through links may add.
	collectBudget db.CollectBudget

	baseURL   string
	files     FileStore
	served    servedFiles // files, when acctapi serves their bytes
	presigned presigner   // files, when the store serves them
	signer    *auth.Signer
	maxUpload int64

	allowPrivateWebhooks bool
	hsts                 bool
	observer             RequestObserver
	now                  func() time.Time
	mail                 bool
	trustedProxies       []netip.Prefix
}

// FileStore keeps the bytes of uploads, declared here where they are
// consumed: the local store (filestore.Store) and an S3 bucket
// (filestore.Bucket) both implement it. Write streams an upload to a
// temporary place, Keep puts it in place together with the row that record
// writes, Discard drops what Keep did not take. Reachable is the cheap check
// of the health route.
type FileStore interface {
	Write(r io.Reader, max int64) (*filestore.Pending, error)
	Keep(p *filestore.Pending, id string, record func() error) error
	Discard(p *filestore.Pending)
	Reachable(ctx context.Context) error
}

// servedFiles is a FileStore whose bytes the download route serves, behind
// links acctapi signs (the local store).
type servedFiles interface {
	OpenFile(id string) (*os.File, error)
}

// presigner is a FileStore that signs download links of its own and serves
// the bytes itself (an S3 bucket): they never pass through acctapi.
type presigner interface {
	SignedURL(ctx context.Context, id string, lifetime time.Duration, contentType, contentDisposition string) (string, error)
}

// New returns the API handler.
func New(cfg Config) (*Handler, error) {
	doc, err := openAPIDocument(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		store: cfg.Store, auth: cfg.Auth, limiter: cfg.Limiter, log: cfg.Logger,
		version: cfg.Version, openapi: doc,
		baseURL: cfg.BaseURL, files: cfg.Files, signer: cfg.Signer, maxUpload: cfg.MaxUploadBytes,
		allowPrivateWebhooks: cfg.AllowPrivateWebhooks, mail: cfg.Mail, trustedProxies: cfg.TrustedProxies,
		hsts: cfg.HTTPS, observer: cfg.Observer, now: cfg.Now, uploadLimits: defaultUploadLimits, collectBudget: db.DefaultCollectBudget,
		statementImports: make(chan struct{}, maxStatementImports),
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.served, _ = cfg.Files.(servedFiles)
	h.presigned, _ = cfg.Files.(presigner)
	if (h.served == nil) == (h.presigned == nil) {
		return nil, errors.New("handlers: the file store must either open files or sign links of its own")
	}
	h.router = h.routes()
	return h, nil
}

// access says what a route needs before its handler runs.
type access int

const (
	public       access = iota // no key
	keyed                      // a valid key
	clientScoped               // a valid key and a reachable client in x-client-id
)

// endpoint describes a route's checks.
type endpoint struct {
	access     access
	permission auth.Permission // "" when any key may call it
	// zod names validation failures "ZodError" instead of "ValidationError":
	// the user and admin-user endpoints have always answered Zod's name, and
	// callers may match on it.
	zod bool
}

// route is one entry of the route table.
type route struct {
	method, path string
	endpoint     endpoint
	handle       httprouter.Handle
}

// routeTable lists every route the server answers, with its checks.
func (h *Handler) routeTable() []route {
	return []route{
		{http.MethodGet, "/v1/health", endpoint{access: public}, h.health},
		{http.MethodGet, "/v1/openapi.json", endpoint{access: public}, h.openAPI},
		{http.MethodGet, "/v1/docs", endpoint{access: public}, h.reference},
		{http.MethodGet, "/v1/docs/:asset", endpoint{access: public}, h.referenceFile},
		{http.MethodGet, "/collect/:token", endpoint{access: public}, h.collectPage},
		{http.MethodPost, "/collect/:token/items/:itemId", endpoint{access: public}, h.collectPageUpload},
		{http.MethodPost, "/collect/:token/submit", endpoint{access: public}, h.collectPageSubmit},
		{http.MethodPost, "/collect/:token/items/:itemId/files/:fileId/remove", endpoint{access: public}, h.collectPageRemove},
		{http.MethodGet, "/collect-assets/:name", endpoint{access: public}, h.collectAssetFile},
		{http.MethodGet, "/v1/me", endpoint{access: keyed}, h.me},
		{http.MethodGet, "/v1/firm", endpoint{access: keyed, permission: auth.FirmRead}, h.getFirm},
		{http.MethodPatch, "/v1/firm", endpoint{access: keyed, permission: auth.FirmWrite}, h.updateFirm},
		{http.MethodGet, "/v1/tasks", endpoint{access: clientScoped, permission: auth.TasksRead}, h.listTasks},
		{http.MethodPost, "/v1/tasks", endpoint{access: clientScoped, permission: auth.TasksWrite}, h.createTask},
		{http.MethodGet, "/v1/tasks/:id", endpoint{access: clientScoped, permission: auth.TasksRead}, h.getTask},
		{http.MethodPatch, "/v1/tasks/:id", endpoint{access: clientScoped, permission: auth.TasksWrite}, h.updateTask},
		{http.MethodDelete, "/v1/tasks/:id", endpoint{access: clientScoped, permission: auth.TasksWrite}, h.deleteTask},
		{http.MethodGet, "/v1/workspaces", endpoint{access: clientScoped, permission: auth.WorkspacesRead}, h.listWorkspaces},
		{http.MethodPost, "/v1/workspaces", endpoint{access: clientScoped, permission: auth.WorkspacesWrite}, h.createWorkspace},
		{http.MethodPatch, "/v1/workspaces/:id", endpoint{access: clientScoped, permission: auth.WorkspacesWrite}, h.renameWorkspace},
		{http.MethodGet, "/v1/workspaces/:id/members", endpoint{access: clientScoped, permission: auth.MembersRead}, h.listMembers},
		{http.MethodPost, "/v1/workspaces/:id/members", endpoint{access: clientScoped, permission: auth.MembersWrite}, h.addMember},
		{http.MethodDelete, "/v1/workspaces/:id/members", endpoint{access: clientScoped, permission: auth.MembersWrite}, h.removeMember},
		{http.MethodGet, "/v1/workspaces/:id/folders", endpoint{access: clientScoped, permission: auth.WorkspacesRead}, h.listFolders},
		{http.MethodPost, "/v1/workspaces/:id/folders", endpoint{access: clientScoped, permission: auth.WorkspacesWrite}, h.createFolder},
		{http.MethodGet, "/v1/workspaces/:id/labels", endpoint{access: clientScoped, permission: auth.WorkspacesRead}, h.listLabels},
		{http.MethodPost, "/v1/workspaces/:id/labels", endpoint{access: clientScoped, permission: auth.WorkspacesWrite}, h.createLabel},
		{http.MethodPost, "/v1/files", endpoint{access: clientScoped, permission: auth.FilesWrite}, h.uploadFile},
		{http.MethodGet, "/v1/files", endpoint{access: clientScoped, permission: auth.FilesRead}, h.listFiles},
		{http.MethodGet, "/v1/files/:id", endpoint{access: clientScoped, permission: auth.FilesRead}, h.getFile},
		{http.MethodPatch, "/v1/files/:id", endpoint{access: clientScoped, permission: auth.FilesWrite}, h.updateFile},
		{http.MethodGet, "/v1/files/:id/text", endpoint{access: clientScoped, permission: auth.FilesRead}, h.fileText},
		{http.MethodPost, "/v1/files/:id/analysis", endpoint{access: clientScoped, permission: auth.FilesWrite}, h.analyzeFile},
		{http.MethodGet, "/v1/files/:id/content", endpoint{access: clientScoped, permission: auth.FilesRead}, h.fileLink},
		{http.MethodGet, "/v1/files/:id/download", endpoint{access: public}, h.downloadFile},
		{http.MethodHead, "/v1/files/:id/download", endpoint{access: public}, h.downloadFile},
		{http.MethodPost, "/v1/users", endpoint{access: clientScoped, permission: auth.UsersWrite, zod: true}, h.inviteUser},
		{http.MethodPatch, "/v1/users/:id", endpoint{access: clientScoped, permission: auth.UsersWrite, zod: true}, h.updateUser},
		{http.MethodPost, "/v1/admin/clients", endpoint{access: keyed, permission: auth.ClientsWrite}, h.createClient},
		{http.MethodGet, "/v1/admin/clients", endpoint{access: keyed, permission: auth.ClientsRead}, h.listClients},
		{http.MethodGet, "/v1/admin/clients/:id", endpoint{access: keyed, permission: auth.ClientsRead}, h.getClient},
		{http.MethodPatch, "/v1/admin/clients/:id", endpoint{access: keyed, permission: auth.ClientsWrite}, h.updateClient},
		{http.MethodGet, "/v1/admin/users", endpoint{access: keyed, permission: auth.AccountantUsersRead, zod: true}, h.listAccountantUsers},
		{http.MethodPost, "/v1/admin/users", endpoint{access: keyed, permission: auth.AccountantUsersWrite, zod: true}, h.inviteAccountantUser},
		{http.MethodGet, "/v1/admin/users/:id", endpoint{access: keyed, permission: auth.AccountantUsersRead, zod: true}, h.getAccountantUser},
		{http.MethodPatch, "/v1/admin/users/:id", endpoint{access: keyed, permission: auth.AccountantUsersWrite, zod: true}, h.updateAccountantUser},
		{http.MethodGet, "/v1/collects", endpoint{access: clientScoped, permission: auth.CollectsRead}, h.listCollects},
		{http.MethodPost, "/v1/collects", endpoint{access: clientScoped, permission: auth.CollectsWrite}, h.createCollect},
		{http.MethodGet, "/v1/collects/:id", endpoint{access: clientScoped, permission: auth.CollectsRead}, h.getCollect},
		{http.MethodPatch, "/v1/collects/:id", endpoint{access: clientScoped, permission: auth.CollectsWrite}, h.updateCollect},
		{http.MethodDelete, "/v1/collects/:id", endpoint{access: clientScoped, permission: auth.CollectsWrite}, h.deleteCollect},
		{http.MethodPost, "/v1/collects/:id/items", endpoint{access: clientScoped, permission: auth.CollectsWrite}, h.addCollectItem},
		{http.MethodPatch, "/v1/collects/:id/items/:itemId", endpoint{access: clientScoped, permission: auth.CollectsWrite}, h.updateCollectItem},
		{http.MethodPost, "/v1/collects/:id/sessions", endpoint{access: clientScoped, permission: auth.CollectsWrite}, h.createCollectSession},
		{http.MethodGet, "/v1/collects/:id/sessions", endpoint{access: clientScoped, permission: auth.CollectsRead}, h.listCollectSessions},
		{http.MethodDelete, "/v1/collects/:id/sessions/:sessionId", endpoint{access: clientScoped, permission: auth.CollectsWrite}, h.revokeCollectSession},
		{http.MethodGet, "/v1/collect-sessions/:token", endpoint{access: public}, h.getCollectSession},
		{http.MethodPost, "/v1/collect-sessions/:token/items/:itemId/files", endpoint{access: public}, h.uploadCollectFile},
		{http.MethodDelete, "/v1/collect-sessions/:token/items/:itemId/files/:fileId", endpoint{access: public}, h.removeCollectFile},
		{http.MethodPost, "/v1/collect-sessions/:token/submit", endpoint{access: public}, h.submitCollectSession},
		{http.MethodPost, "/v1/bank-statements", endpoint{access: clientScoped, permission: auth.BankingWrite}, h.importStatement},
		{http.MethodGet, "/v1/bank-statements", endpoint{access: clientScoped, permission: auth.BankingRead}, h.listBankStatements},
		{http.MethodGet, "/v1/bank-statements/:id", endpoint{access: clientScoped, permission: auth.BankingRead}, h.getBankStatement},
		{http.MethodGet, "/v1/bank-accounts", endpoint{access: clientScoped, permission: auth.BankingRead}, h.listBankAccounts},
		{http.MethodGet, "/v1/bank-accounts/:id", endpoint{access: clientScoped, permission: auth.BankingRead}, h.getBankAccount},
		{http.MethodGet, "/v1/transactions", endpoint{access: clientScoped, permission: auth.BankingRead}, h.listTransactions},
		{http.MethodGet, "/v1/transactions/:id", endpoint{access: clientScoped, permission: auth.BankingRead}, h.getTransaction},
		{http.MethodPatch, "/v1/transactions/:id", endpoint{access: clientScoped, permission: auth.BankingWrite}, h.updateTransaction},
		{http.MethodGet, "/v1/ledger-settings", endpoint{access: clientScoped, permission: auth.ExportsRead}, h.getLedgerSettings},
		{http.MethodPut, "/v1/ledger-settings", endpoint{access: clientScoped, permission: auth.ExportsWrite}, h.putLedgerSettings},
		{http.MethodGet, "/v1/counterparties", endpoint{access: clientScoped, permission: auth.ExportsRead}, h.listCounterparties},
		{http.MethodPatch, "/v1/counterparties/:id", endpoint{access: clientScoped, permission: auth.ExportsWrite}, h.updateCounterparty},
		{http.MethodPost, "/v1/exports", endpoint{access: clientScoped, permission: auth.ExportsWrite}, h.createExport},
		{http.MethodGet, "/v1/exports", endpoint{access: clientScoped, permission: auth.ExportsRead}, h.listExports},
		{http.MethodGet, "/v1/exports/:id", endpoint{access: clientScoped, permission: auth.ExportsRead}, h.getExport},
		{http.MethodGet, "/v1/exports/:id/content", endpoint{access: clientScoped, permission: auth.ExportsRead}, h.exportLink},
		{http.MethodGet, "/v1/exports/:id/download", endpoint{access: public}, h.downloadExport},
		{http.MethodHead, "/v1/exports/:id/download", endpoint{access: public}, h.downloadExport},
		{http.MethodPost, "/v1/webhooks", endpoint{access: keyed, permission: auth.WebhooksWrite}, h.createWebhook},
		{http.MethodGet, "/v1/webhooks", endpoint{access: keyed, permission: auth.WebhooksRead}, h.listWebhooks},
		{http.MethodGet, "/v1/webhooks/:id", endpoint{access: keyed, permission: auth.WebhooksRead}, h.getWebhook},
		{http.MethodPatch, "/v1/webhooks/:id", endpoint{access: keyed, permission: auth.WebhooksWrite}, h.updateWebhook},
		{http.MethodDelete, "/v1/webhooks/:id", endpoint{access: keyed, permission: auth.WebhooksWrite}, h.deleteWebhook},
		{http.MethodPost, "/v1/webhooks/:id/rotate-secret", endpoint{access: keyed, permission: auth.WebhooksWrite}, h.rotateWebhookSecret},
		{http.MethodGet, "/v1/webhooks/:id/deliveries", endpoint{access: keyed, permission: auth.WebhooksRead}, h.listDeliveries},
		{http.MethodPost, "/v1/webhooks/:id/deliveries/:deliveryId/retry", endpoint{access: keyed, permission: auth.WebhooksWrite}, h.retryDelivery},
	}
}

// routes builds the router from the route table.
func (h *Handler) routes() *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	for _, rt := range h.routeTable() {
		h.handle(r, rt.method, rt.path, rt.endpoint, rt.handle)
	}
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.fail(w, req, errNotFound(fmt.Sprintf("no route for %s %s", req.Method, req.URL.Path)))
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.fail(w, req, &apiError{http.StatusMethodNotAllowed, "bad_request", "method_not_allowed",
			fmt.Sprintf("%s is not allowed on %s (allowed: %s)", req.Method, req.URL.Path, w.Header().Get("Allow"))})
	})
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		h.log.LogAttrs(req.Context(), slog.LevelError, "panic",
			slog.String("request_id", stateOf(req).id), slog.Any("panic", v))
		if !stateOf(req).wroteHeader {
			h.fail(w, req, errInternal)
		}
	}
	return r
}

// handle registers a route with the checks its endpoint names, in the order
// callers see them: authentication (401), rate limit (429), permission (403),
// then the client header (400, 422, 404), then the Idempotency-Key of a POST
// or PATCH.
func (h *Handler) handle(r *httprouter.Router, method, path string, e endpoint, fn httprouter.Handle) {
	r.Handle(method, path, func(w http.ResponseWriter, req *http.Request, p httprouter.Params) {
		st := stateOf(req)
		st.route = path
		st.zod = e.zod
		if e.access == public {
			fn(w, req, p)
			return
		}
		principal, err := h.authenticate(w, req)
		if err != nil {
			h.fail(w, req, err)
			return
		}
		st.principal = principal
		if e.permission != "" && !principal.Can(e.permission) {
			h.fail(w, req, errMissingScope(e.permission))
			return
		}
		if e.access == clientScoped {
			clientID, err := h.resolveClient(req, principal)
			if err != nil {
				h.fail(w, req, err)
				return
			}
			st.clientID = clientID
		}
		if method == http.MethodPost || method == http.MethodPatch {
			key, sent, err := idempotencyKeyOf(req)
			if err != nil {
				h.fail(w, req, err)
				return
			}
			if sent {
				h.serveIdempotent(w, req, p, fn, key)
				return
			}
		}
		fn(w, req, p)
	})
}
