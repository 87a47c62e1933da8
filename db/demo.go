package db

import (
	"context"
	"fmt"
	"time"
)

// Demo names what SeedDemo created.
type Demo struct {
	ClientID    string
	WorkspaceID string
}

// SeedDemo fills the firm with a demo client with two workspaces, users of
// the client and accountant users who are members, folders (nested), labels
// and tasks (with subtasks, due dates and every status), and a second client
// with a workspace and a user of its own. It does nothing and
// returns nil, nil when the firm already has clients.
func (db *DB) SeedDemo(ctx context.Context, firmID string) (*Demo, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Demo, error) {
		var clients int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM clients WHERE firm_id = ?`, firmID).Scan(&clients); err != nil {
			return nil, fmt.Errorf("seed demo: %w", err)
		}
		if clients > 0 {
			return nil, nil
		}
		now := unix(db.now().UTC().Truncate(time.Second))
		demo := &Demo{ClientID: NewID(), WorkspaceID: NewID()}
		clientUser, accountantUser := NewID(), NewID()
		type statement struct {
			sql  string
			args []any
		}
		statements := []statement{
			{`INSERT INTO clients (id, firm_id, name, slug, type, legal_name, address_line1, address_city,
				address_postal_code, address_country_code, created_at, updated_at)
				VALUES (?, ?, 'Müller & Söhne', ?, 'legal_person', 'Müller & Söhne GmbH', 'Hauptstraße 1', 'Berlin', '10115', 'DE', ?, ?)`,
				[]any{demo.ClientID, firmID, Slugify("Müller & Söhne"), now, now}},
			{`INSERT INTO workspaces (id, client_id, name, created_at, updated_at) VALUES (?, ?, 'Annual accounts 2026', ?, ?)`,
				[]any{demo.WorkspaceID, demo.ClientID, now, now}},
			{`INSERT INTO users (id, firm_id, client_id, email, first_name, last_name, client_role, invited_at, created_at, updated_at)
				VALUES (?, ?, ?, 'anna.mueller@example.com', 'Anna', 'Müller', 'admin', ?, ?, ?)`,
				[]any{clientUser, firmID, demo.ClientID, now, now, now}},
			{`INSERT INTO users (id, firm_id, email, first_name, last_name, role_id, invited_at, created_at, updated_at)
				SELECT ?, ?, 'berta.berater@example.com', 'Berta', 'Berater', id, ?, ?, ? FROM roles WHERE firm_id = ? AND name = 'admin'`,
				[]any{accountantUser, firmID, now, now, now, firmID}},
			{`INSERT INTO workspace_members (workspace_id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?)`,
				[]any{demo.WorkspaceID, clientUser, now, now, demo.WorkspaceID, accountantUser, now, now}},
		}
		secondClient, secondWorkspace, bookkeeper, bob := NewID(), NewID(), NewID(), NewID()
		statements = append(statements,
			statement{`INSERT INTO clients (id, firm_id, name, slug, type, custom_id, created_at, updated_at)
				VALUES (?, ?, 'Jana Novák', ?, 'natural_person', 'K-1002', ?, ?)`,
				[]any{secondClient, firmID, Slugify("Jana Novák"), now, now}},
			statement{`INSERT INTO workspaces (id, client_id, name, created_at, updated_at) VALUES (?, ?, 'Income tax 2026', ?, ?)`,
				[]any{secondWorkspace, secondClient, now, now}},
			statement{`INSERT INTO users (id, firm_id, client_id, email, first_name, last_name, client_role, invited_at, created_at, updated_at)
				VALUES (?, ?, ?, 'jana.novak@example.com', 'Jana', 'Novák', 'admin', ?, ?, ?),
				       (?, ?, ?, 'bob.mueller@example.com', 'Bob', 'Müller', 'user', ?, ?, ?)`,
				[]any{NewID(), firmID, secondClient, now, now, now, bob, firmID, demo.ClientID, now, now, now}},
			statement{`INSERT INTO users (id, firm_id, email, first_name, last_name, role_id, invited_at, created_at, updated_at)
				SELECT ?, ?, 'carl.kontor@example.com', 'Carl', 'Kontor', id, ?, ?, ? FROM roles WHERE firm_id = ? AND name = 'user'`,
				[]any{bookkeeper, firmID, now, now, now, firmID}},
			statement{`INSERT INTO workspace_members (workspace_id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?), (?, ?, ?, ?)`,
				[]any{demo.WorkspaceID, bob, now, now, secondWorkspace, bookkeeper, now, now}},
		)
		payrollID, receiptsID := NewID(), NewID()
		statements = append(statements,
			statement{`INSERT INTO workspaces (id, client_id, name, created_at, updated_at) VALUES (?, ?, 'Payroll', ?, ?)`,
				[]any{payrollID, demo.ClientID, now, now}},
			statement{`INSERT INTO workspace_members (workspace_id, user_id, is_muted, created_at, updated_at) VALUES (?, ?, 1, ?, ?)`,
				[]any{payrollID, accountantUser, now, now}},
			statement{`INSERT INTO folders (id, client_id, workspace_id, parent_id, name, created_at, updated_at) VALUES
				(?, ?, ?, NULL, 'Receipts', ?, ?), (?, ?, ?, ?, 'Travel', ?, ?), (?, ?, ?, NULL, 'Bank statements', ?, ?)`,
				[]any{receiptsID, demo.ClientID, demo.WorkspaceID, now, now,
					NewID(), demo.ClientID, demo.WorkspaceID, receiptsID, now, now,
					NewID(), demo.ClientID, demo.WorkspaceID, now, now}},
			statement{`INSERT INTO labels (id, client_id, workspace_id, name, created_at, updated_at) VALUES
				(?, ?, ?, 'Needs review', ?, ?), (?, ?, ?, 'Booked', ?, ?)`,
				[]any{NewID(), demo.ClientID, demo.WorkspaceID, now, now, NewID(), demo.ClientID, demo.WorkspaceID, now, now}},
		)
		day := int64(24 * 60 * 60)
		statementsID, annualID := NewID(), NewID()
		tasks := []struct {
			id, title string
			parent    *string
			status    int
			due       *int64
		}{
			{statementsID, "Upload bank statements for Q3", nil, 1, ptr(now + 7*day)},
			{NewID(), "Sparkasse business account", &statementsID, 3, ptr(now + 7*day)},
			{NewID(), "N26 credit card", &statementsID, 0, nil},
			{annualID, "Review draft annual accounts 2026", nil, 2, ptr(now + 14*day)},
			{NewID(), "Confirm inventory count", &annualID, 0, ptr(now + 10*day)},
			{NewID(), "Sign engagement letter", nil, 3, nil},
			{NewID(), "Receipts for travel expenses in May", nil, 4, ptr(now - 3*day)},
			{NewID(), "Answer the tax office's query", nil, 0, nil},
		}
		for _, t := range tasks {
			statements = append(statements, statement{`INSERT INTO tasks (id, client_id, workspace_id, parent_id, title, status, due_date, created_by_id, actor_type, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'USER', ?, ?)`,
				[]any{t.id, demo.ClientID, demo.WorkspaceID, t.parent, t.title, t.status, t.due, accountantUser, now, now}})
		}
		for _, s := range statements {
			if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
				return nil, fmt.Errorf("seed demo: %w", err)
			}
		}
		return demo, nil
	})
}

func ptr[T any](v T) *T { return &v }
