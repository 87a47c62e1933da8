package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"

	"acctapi/db"
)

// eventPayload is the body every delivery of an event carries.
type eventPayload struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt timestamp `json:"createdAt"`
	ClientID  *string   `json:"clientId"`
	Data      any       `json:"data"`
	Changes   []string  `json:"changes,omitempty"`
}

// EncodeEvent writes an event of the store as its webhook deliveries carry
// it: the record exactly as reading it over the API shows it, and the
// changed fields by their API names. cmd opens the store with it.
func EncodeEvent(e db.Event) ([]byte, error) {
	data, err := eventData(e.Record)
	if err != nil {
		return nil, err
	}
	var changes []string
	for _, field := range e.Changes {
		changes = append(changes, jsonName(field))
	}
	p := eventPayload{ID: e.ID, Type: e.Type, CreatedAt: timestampOf(e.CreatedAt), ClientID: e.ClientID, Data: data, Changes: changes}
	// Written as the API writes its answers: & < > stay as they are.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// eventData renders the record of an event in the API's form.
func eventData(record any) (any, error) {
	switch r := record.(type) {
	case *db.Task:
		return newTaskResponse(r), nil
	case *db.File:
		return newFileResponse(r), nil
	case *db.Workspace:
		return newWorkspaceResponse(r), nil
	case *db.Member:
		return newMemberResponse(r), nil
	case *db.ClientUser:
		return newClientUserResponse(r), nil
	case *db.Client:
		return newClientResponse(r), nil
	case *db.AccountantUser:
		return newAccountantUserResponse(r), nil
	case *db.Collect:
		return newCollectResponse(r), nil
	case *db.BankStatement:
		return newBankStatementResponse(r), nil
	case *db.Transaction:
		return newTransactionResponse(r), nil
	case *db.Firm:
		return newFirmResponse(r), nil
	case *db.Export:
		return newExportResponse(r), nil
	case *db.CollectItemReceived:
		return collectItemReceivedData{Collect: newCollectResponse(r.Collect), ItemID: r.ItemID, FileID: r.FileID}, nil
	case *db.CollectItemFileRemoved:
		return collectItemReceivedData{Collect: newCollectResponse(r.Collect), ItemID: r.ItemID, FileID: r.FileID}, nil
	}
	return nil, fmt.Errorf("no event form for a %T", record)
}

// collectItemReceivedData is the data of a collect.item_received event (the
// collect after the upload, and which item got which file) and of a
// collect.item_file_removed one (after the removal, and which file left
// which item).
type collectItemReceivedData struct {
	Collect collectResponse `json:"collect"`
	ItemID  string          `json:"itemId"`
	FileID  string          `json:"fileId"`
}
