package db

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The event types, one per kind of change the API makes.
const (
	EventTaskCreated            = "task.created"
	EventTaskUpdated            = "task.updated"
	EventTaskDeleted            = "task.deleted"
	EventFileCreated            = "file.created"
	EventFileUpdated            = "file.updated"
	EventFileAnalyzed           = "file.analyzed"
	EventWorkspaceCreated       = "workspace.created"
	EventWorkspaceUpdated       = "workspace.updated"
	EventWorkspaceMemberAdded   = "workspace.member_added"
	EventWorkspaceMemberRemoved = "workspace.member_removed"
	EventUserInvited            = "user.invited"
	EventUserUpdated            = "user.updated"
	EventClientCreated          = "client.created"
	EventClientUpdated          = "client.updated"
	EventAccountantUserInvited  = "accountant_user.invited"
	EventAccountantUserUpdated  = "accountant_user.updated"
	EventCollectCreated         = "collect.created"
	EventCollectUpdated         = "collect.updated"
	EventCollectItemReceived    = "collect.item_received"
	EventCollectSubmitted       = "collect.submitted"
	EventFirmUpdated            = "firm.updated"
	EventCollectItemFileRemoved = "collect.item_file_removed"
	EventBankStatementImported  = "bank_statement.imported"
	EventTransactionMatched     = "transaction.matched"
)

// EventTypes lists every event type, in the catalogue's order.
var EventTypes = []string{
	EventTaskCreated, EventTaskUpdated, EventTaskDeleted, EventFileCreated, EventFileUpdated, EventFileAnalyzed,
	EventWorkspaceCreated, EventWorkspaceUpdated, EventWorkspaceMemberAdded, EventWorkspaceMemberRemoved,
	EventUserInvited, EventUserUpdated, EventClientCreated, EventClientUpdated,
	EventAccountantUserInvited, EventAccountantUserUpdated,
	EventCollectCreated, EventCollectUpdated, EventCollectItemReceived, EventCollectItemFileRemoved, EventCollectSubmitted,
	EventFirmUpdated, EventBankStatementImported, EventTransactionMatched,
	EventExportCompleted,
}

// Event is a change the store records, in the transaction of the change,
// for the webhook subscriptions that want it.
type Event struct {
	ID        string
	Type      string
	CreatedAt time.Time
	// ClientID is the client the change is of; nil for a change of the firm.
	ClientID *string
	// Record is the record as the change left it: a *Task, *File,
	// *Workspace, *Member, *ClientUser, *Client, *AccountantUser, *Collect,
	// *CollectItemReceived, *CollectItemFileRemoved, *Firm, *BankStatement,
	// *Transaction or *Export.
	Record any
	// Changes names the fields an update set, as the store's types name
	// them (TaskUpdate.DueDate: "DueDate"); nil for other events.
	Changes []string
}

// EventEncoder writes the payload every delivery of an event carries. Its
// form, and the form of the record in it, are the API's, which the HTTP
// layer owns: cmd gives the HTTP layer's encoder to Open.
type EventEncoder func(Event) ([]byte, error)

// event is a change to record in the outbox.
type event struct {
	typ string
	// firmID is the firm of the change; "" where the client says it.
	firmID   string
	clientID *string
	record   any
	// changes names the fields an update set, as Event.Changes does.
	changes []string
}

// emit records e in the transaction of the change it describes, with one
// delivery for each subscription that wants it, so that an event exists
// exactly when its change does. With no subscription it writes nothing.
func (db *DB) emit(ctx context.Context, tx *txn, e event) error {
	var firm any
	if e.firmID != "" {
		firm = e.firmID
	}
	rows, err := tx.QueryContext(ctx, `SELECT w.id, w.firm_id FROM webhooks w
		WHERE w.firm_id = coalesce(?, (SELECT firm_id FROM clients WHERE id = ?)) AND w.status <> 'disabled'
		  AND (w.client_id IS NULL OR w.client_id = ?)
		  AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE value IN ('*', ?))
		ORDER BY w.id`, firm, e.clientID, e.clientID, e.typ)
	if err != nil {
		return fmt.Errorf("find webhooks for %s: %w", e.typ, err)
	}
	var webhooks []string
	firmID := e.firmID
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &firmID); err != nil {
			rows.Close()
			return fmt.Errorf("find webhooks for %s: %w", e.typ, err)
		}
		webhooks = append(webhooks, id)
	}
	if err := errors.Join(rows.Close(), rows.Err()); err != nil {
		return fmt.Errorf("find webhooks for %s: %w", e.typ, err)
	}
	if len(webhooks) == 0 {
		return nil
	}

	if db.encodeEvent == nil {
		return fmt.Errorf("event %s: the store was opened without Options.EncodeEvent", e.typ)
	}
	now := db.now().UTC().Truncate(time.Second)
	ev := Event{ID: NewID(), Type: e.typ, CreatedAt: now, ClientID: e.clientID, Record: e.record, Changes: e.changes}
	payload, err := db.encodeEvent(ev)
	if err != nil {
		return fmt.Errorf("event %s: %w", e.typ, err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO webhook_events (id, firm_id, client_id, type, payload, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, ev.ID, firmID, e.clientID, e.typ, payload, unix(now))
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.typ, err)
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("record event %s: %w", e.typ, err)
	}
	for _, webhookID := range webhooks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
			(id, webhook_id, event_seq, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			NewID(), webhookID, seq, unix(now), unix(now), unix(now)); err != nil {
			return fmt.Errorf("record delivery of %s: %w", e.typ, err)
		}
	}
	tx.deliveriesDue = true
	return nil
}

// EventsWritten is signalled after a commit that wrote events, so that the
// dispatcher delivers them without waiting for its next round.
func (db *DB) EventsWritten() <-chan struct{} { return db.eventsWritten }
