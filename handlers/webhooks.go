package handlers

import (
	"net/http"
	"slices"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
	"acctapi/webhooks"
)

// Limits on subscriptions, documented in docs/webhooks.md.
const (
	maxWebhookURL         = 2048
	maxWebhookDescription = 500
)

var (
	webhookURL         = stringRule{trim: true, min: 1, max: maxWebhookURL}
	webhookDescription = stringRule{presence: nullable, trim: true, text: true, max: maxWebhookDescription}
	// webhookEvents are the values an events list may hold.
	webhookEvents = append([]string{db.AllEvents}, db.EventTypes...)
)

type webhookResponse struct {
	ID           string     `json:"id"`
	URL          string     `json:"url"`
	Events       []string   `json:"events"`
	ClientID     *string    `json:"clientId"`
	Description  *string    `json:"description"`
	Status       string     `json:"status"`
	FailingSince *timestamp `json:"failingSince"`
	CreatedAt    timestamp  `json:"createdAt"`
	UpdatedAt    timestamp  `json:"updatedAt"`
}

func newWebhookResponse(w *db.Webhook) webhookResponse {
	return webhookResponse{
		ID: w.ID, URL: w.URL, Events: w.Events, ClientID: w.ClientID, Description: w.Description, Status: w.Status,
		FailingSince: timestampPtr(w.FailingSince), CreatedAt: timestampOf(w.CreatedAt), UpdatedAt: timestampOf(w.UpdatedAt),
	}
}

// webhookSecretResponse is a subscription with its signing secret: the
// answer of a create and of a rotation, the only ones that show it.
type webhookSecretResponse struct {
	webhookResponse
	Secret string `json:"secret"`
}

func newWebhookSecretResponse(w *db.Webhook) webhookSecretResponse {
	return webhookSecretResponse{webhookResponse: newWebhookResponse(w), Secret: w.Secret}
}

type deliveryResponse struct {
	ID            string            `json:"id"`
	WebhookID     string            `json:"webhookId"`
	EventID       string            `json:"eventId"`
	EventType     string            `json:"eventType"`
	Status        string            `json:"status"`
	Attempts      []attemptResponse `json:"attempts"`
	NextAttemptAt *timestamp        `json:"nextAttemptAt"`
	CreatedAt     timestamp         `json:"createdAt"`
	UpdatedAt     timestamp         `json:"updatedAt"`
}

type attemptResponse struct {
	At         timestamp `json:"at"`
	DurationMS int64     `json:"durationMs"`
	StatusCode *int      `json:"statusCode"`
	Error      *string   `json:"error"`
}

func newDeliveryResponse(d *db.Delivery) deliveryResponse {
	attempts := make([]attemptResponse, len(d.Attempts))
	for i, a := range d.Attempts {
		attempts[i] = attemptResponse{At: timestampOf(a.At), DurationMS: a.Duration.Milliseconds(), StatusCode: a.StatusCode, Error: a.Error}
	}
	return deliveryResponse{
		ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, EventType: d.EventType, Status: d.Status, Attempts: attempts,
		NextAttemptAt: timestampPtr(d.NextAttemptAt), CreatedAt: timestampOf(d.CreatedAt), UpdatedAt: timestampOf(d.UpdatedAt),
	}
}

// webhookURLField reads a subscription URL and checks it as a delivery
// target: https, and not the server's own network unless the server allows
// private webhooks.
func (h *Handler) webhookURLField(body *object, p presence) field[string] {
	rule := webhookURL
	rule.presence = p
	f := body.string("url", rule)
	if !f.Set {
		return f
	}
	if err := webhooks.CheckURL(f.Value, h.allowPrivateWebhooks); err != nil {
		body.v.add(issue{Code: "invalid_string", Path: body.at("url"), Validation: "url", Message: err.Error()})
		return field[string]{}
	}
	return f
}

// webhookEventsField reads an events list; "*" in it stands for every type.
func webhookEventsField(body *object, p presence) field[[]string] {
	f := body.enums("events", webhookEvents, p)
	if slices.Contains(f.Value, db.AllEvents) {
		f.Value = []string{db.AllEvents}
	}
	return f
}

// createWebhook answers POST /v1/webhooks.
func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var url, clientID, description field[string]
	var events field[[]string]
	if !h.readBody(w, r, func(body *object) {
		url = h.webhookURLField(body, required)
		events = webhookEventsField(body, required)
		clientID = body.id("clientId", nullable)
		description = body.string("description", webhookDescription)
	}) {
		return
	}
	hook, err := h.store.CreateWebhook(r.Context(), stateOf(r).principal.FirmID, db.WebhookCreate{
		URL: url.Value, Events: events.Value, ClientID: valueOrNil(clientID), Description: valueOrNil(description),
		Secret: webhooks.NewSecret(),
	})
	respond(h, w, r, http.StatusCreated, hook, err, newWebhookSecretResponse)
}

// listWebhooks answers GET /v1/webhooks.
func (h *Handler) listWebhooks(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	serveList(h, w, r, firmOf, db.WebhookSorts, h.store.ListWebhooks, newWebhookResponse)
}

// getWebhook answers GET /v1/webhooks/{id}.
func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, firmOf, h.store.FindWebhook, newWebhookResponse)
}

// updateWebhook answers PATCH /v1/webhooks/{id}.
func (h *Handler) updateWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var u db.WebhookUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) {
		u = db.WebhookUpdate{
			URL:         update(h.webhookURLField(body, optional)),
			Events:      update(webhookEventsField(body, optional)),
			ClientID:    update(body.id("clientId", nullable)),
			Description: update(body.string("description", webhookDescription)),
			Enabled:     update(body.bool("enabled", optional)),
		}
	})
	if !ok {
		return
	}
	hook, err := h.store.UpdateWebhook(r.Context(), stateOf(r).principal.FirmID, id, u)
	respond(h, w, r, http.StatusOK, hook, err, newWebhookResponse)
}

// deleteWebhook answers DELETE /v1/webhooks/{id}.
func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.pathID(w, r, p)
	if !ok {
		return
	}
	if err := h.store.DeleteWebhook(r.Context(), stateOf(r).principal.FirmID, id); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deletedResponse{Object: "webhook", Deleted: true, ID: id})
}

// rotateWebhookSecret answers POST /v1/webhooks/{id}/rotate-secret.
func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.pathID(w, r, p)
	if !ok {
		return
	}
	hook, err := h.store.RotateWebhookSecret(r.Context(), stateOf(r).principal.FirmID, id, webhooks.NewSecret())
	respond(h, w, r, http.StatusOK, hook, err, newWebhookSecretResponse)
}

// listDeliveries answers GET /v1/webhooks/{id}/deliveries.
func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var v validator
	id := v.pathID(p, "id")
	req := pageRequest(v.query(r.URL.Query()), db.DeliverySorts)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	page, err := h.store.ListDeliveries(r.Context(), stateOf(r).principal.FirmID, id, req)
	respond(h, w, r, http.StatusOK, page, err, listOf(newDeliveryResponse))
}

// retryDelivery answers POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry.
func (h *Handler) retryDelivery(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var v validator
	id := v.pathID(p, "id")
	deliveryID := v.pathID(p, "deliveryId")
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}
	d, err := h.store.RetryDelivery(r.Context(), stateOf(r).principal.FirmID, id, deliveryID)
	respond(h, w, r, http.StatusAccepted, d, err, newDeliveryResponse)
}
