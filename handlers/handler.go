// Package handlers serves acctapi's HTTP API: one route table, thin handlers
// (decode, validate, call the store, encode) and one error path.
package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/segmentio/ksuid"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
)

// statusClientClosedRequest is logged (never sent) for a request whose caller
// hung up before the answer, as nginx logs it.
const statusClientClosedRequest = 499

// maxJSONBody is the largest JSON request body accepted.
const maxJSONBody = 1 << 20

// Config holds what the handlers need; cmd fills it.
type Config struct {
	Store   *db.DB
	Auth    *auth.Authenticator
	Limiter *auth.Limiter
	Logger  *slog.Logger
	// BaseURL is the public address including /v1, as in the OpenAPI servers.
	BaseURL string
	Version string
	// Files holds the bytes of uploads; Signer signs their download links.
	Files  *filestore.Store
	Signer *auth.Signer
	// MaxUploadBytes bounds the size of one uploaded file.
	MaxUploadBytes int64
	// AllowPrivateWebhooks lets subscription URLs use http and reach private
	// and loopback addresses (development and tests).
	AllowPrivateWebhooks bool
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

	baseURL   string
	files     *filestore.Store
	signer    *auth.Signer
	maxUpload int64

	allowPrivateWebhooks bool
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
		allowPrivateWebhooks: cfg.AllowPrivateWebhooks,
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
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
	// zod names validation failures "ZodError" instead of "ValidationError",
	// as SPEC.md has it for the user and admin-user endpoints.
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
		{http.MethodGet, "/v1/me", endpoint{access: keyed}, h.me},
		{http.MethodGet, "/v1/tasks", endpoint{access: clientScoped, permission: auth.TasksRead}, h.listTasks},
		{http.MethodPost, "/v1/tasks", endpoint{access: clientScoped, permission: auth.TasksWrite}, h.createTask},
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
		{http.MethodGet, "/v1/files/:id", endpoint{access: clientScoped, permission: auth.FilesRead}, h.getFile},
		{http.MethodGet, "/v1/files/:id/content", endpoint{access: clientScoped, permission: auth.FilesRead}, h.fileLink},
		{http.MethodGet, "/v1/files/:id/download", endpoint{access: public}, h.downloadFile},
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
		h.fail(w, req, &Error{http.StatusMethodNotAllowed, "bad_request", "method_not_allowed",
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

// failedAuthLimit bounds the requests with a bad key that one address may
// make per minute, so that guessing keys costs the guesser, not the database.
const failedAuthLimit = 600

// authenticate checks the bearer key and counts the request against its rate
// limit, writing the RateLimit-* headers either way.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (*auth.Principal, error) {
	key, ok := bearer(r.Header.Get("Authorization"))
	var principal *auth.Principal
	var err error = errUnauthorized
	if ok {
		principal, err = h.auth.Authenticate(r.Context(), key)
		if errors.Is(err, auth.ErrUnauthorized) {
			err = errUnauthorized
		}
	}
	var d auth.Decision
	if err == nil {
		d = h.limiter.Allow("key:"+principal.KeyID, principal.RateLimitMax, principal.RateLimitWindow)
	} else {
		d = h.limiter.Allow("addr:"+remoteHost(r), failedAuthLimit, time.Minute)
	}
	reset := int((d.Reset + time.Second - 1) / time.Second)
	w.Header().Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	w.Header().Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	w.Header().Set("RateLimit-Reset", strconv.Itoa(reset))
	if !d.Allowed {
		w.Header().Set("Retry-After", strconv.Itoa(reset))
		return nil, errRateLimited(reset)
	}
	if err != nil {
		return nil, err
	}
	stateOf(r).keyID = principal.KeyID
	return principal, nil
}

func bearer(header string) (string, bool) {
	const prefix = "Bearer "
	if len(header) <= len(prefix) || !asciiEqualFold(header[:len(prefix)], prefix) {
		return "", false
	}
	return header[len(prefix):], true
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// resolveClient checks x-client-id and returns the id of the client it
// names. A client of another firm, or not the client key's own, is not
// found: the same answer as for a client that does not exist.
func (h *Handler) resolveClient(r *http.Request, p *auth.Principal) (string, error) {
	header := r.Header.Get("x-client-id")
	if header == "" {
		return "", errMissingClientID
	}
	var v Validator
	id, ok := checkID(&v, []any{"headers", "x-client-id"}, header)
	if !ok {
		return "", v.Err()
	}
	if p.Kind == auth.Client && id != p.ClientID {
		return "", errNotFound("client not found")
	}
	if h.clients.known(p.FirmID, id) {
		return id, nil
	}
	if _, err := h.store.FindClient(r.Context(), p.FirmID, id); err != nil {
		return "", err
	}
	h.clients.add(p.FirmID, id)
	return id, nil
}

// clientCache remembers for a second the clients found in their firm, so
// that client-scoped requests do not each read the client's row. The API
// deletes no client; the second bounds how long one removed by hand is
// still reached. Only clients that exist are kept, so it holds no more than
// the firms' clients.
type clientCache struct {
	mu    sync.Mutex
	found map[[2]string]time.Time
}

const clientCacheTTL = time.Second

func (c *clientCache) known(firmID, clientID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.found[[2]string{firmID, clientID}]
	return ok && time.Since(at) < clientCacheTTL
}

func (c *clientCache) add(firmID, clientID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.found == nil {
		c.found = map[[2]string]time.Time{}
	}
	c.found[[2]string{firmID, clientID}] = time.Now()
}

// decodeBody reads the JSON body under the size limit and returns its object
// for validation. A body that is not JSON, or not sent as JSON, is a 400; a
// JSON value that is not an object is an issue in v.
func decodeBody(w http.ResponseWriter, r *http.Request, v *Validator) (*Object, error) {
	if r.ContentLength > maxJSONBody {
		return nil, errPayloadTooLarge(maxJSONBody)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, errBadRequest("invalid_json", "the request body is empty: send a JSON object")
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		return nil, errBadRequest("unsupported_media_type", "send the body as Content-Type: application/json")
	}
	if !json.Valid(body) {
		return nil, errBadRequest("invalid_json", "the request body is not valid JSON")
	}
	return v.Body(body), nil
}

// pathID reads and checks the id path parameter;
// on a malformed one it answers the validation failure and returns false.
func (h *Handler) pathID(w http.ResponseWriter, r *http.Request, p httprouter.Params) (string, bool) {
	var v Validator
	id := v.PathID(p, "id")
	if err := v.Err(); err != nil {
		h.fail(w, r, err)
		return "", false
	}
	return id, true
}

// pageQuery reads the query of a list whose only input it is; on a bad one
// it answers the validation failure and returns false.
func (h *Handler) pageQuery(w http.ResponseWriter, r *http.Request, sorts []string) (db.PageRequest, bool) {
	var v Validator
	req := pageRequest(v.Query(r.URL.Query()), sorts)
	if err := v.Err(); err != nil {
		h.fail(w, r, err)
		return db.PageRequest{}, false
	}
	return req, true
}

// requestState is what the middleware and the route checks learn about a
// request, for the handler, the error path and the request log.
type requestState struct {
	id          string
	route       string
	zod         bool
	keyID       string
	principal   *auth.Principal
	clientID    string
	status      int
	wroteHeader bool
	canceled    bool
}

type stateKey struct{}

func stateOf(r *http.Request) *requestState {
	if st, ok := r.Context().Value(stateKey{}).(*requestState); ok {
		return st
	}
	return &requestState{}
}

func (st *requestState) validationName() string {
	if st.zod {
		return "ZodError"
	}
	return "ValidationError"
}

// securityHeaders go on every answer, which holds tenants' data: no cache
// may keep it, no browser may guess another type for it or frame it. The
// value slices are shared by all answers, which only ever replace them.
var securityHeaders = http.Header{
	"Cache-Control":           {"no-store"},
	"X-Content-Type-Options":  {"nosniff"},
	"Content-Security-Policy": {"default-src 'none'; frame-ancestors 'none'"},
	"X-Frame-Options":         {"DENY"},
}

// ServeHTTP gives each request an id (X-Request-Id), logs it when done, and
// turns a panic into a 500 so that the server goes on serving.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	st := &requestState{id: ksuid.New().String()}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	header := w.Header()
	header.Set("X-Request-Id", st.id)
	for name, value := range securityHeaders {
		header[name] = value
	}
	rec := &statusRecorder{ResponseWriter: w, state: st}

	h.router.ServeHTTP(rec, r)

	status := st.status
	switch {
	case status == 0 && st.canceled:
		status = statusClientClosedRequest
	case status == 0:
		status = http.StatusOK
	}
	route := st.route
	if route == "" {
		route = "unmatched"
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	h.log.LogAttrs(r.Context(), level, "request",
		slog.String("request_id", st.id),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		slog.String("key_id", st.keyID),
		slog.Bool("canceled", st.canceled),
	)
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	state *requestState
}

func (s *statusRecorder) WriteHeader(status int) {
	if !s.state.wroteHeader {
		s.state.status, s.state.wroteHeader = status, true
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.state.wroteHeader {
		s.state.status, s.state.wroteHeader = http.StatusOK, true
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
