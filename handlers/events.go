package handlers

import (
	"fmt"

	"acctapi/db"
)

// EventData renders a record of the store as the API returns it, for the
// data of a webhook event: cmd opens the store with it, so that an event
// shows a resource exactly as reading it over the API would.
func EventData(record any) (any, error) {
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
	}
	return nil, fmt.Errorf("no event form for a %T", record)
}
