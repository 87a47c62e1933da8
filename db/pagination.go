package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// PageRequest asks for one page of a list.
type PageRequest struct {
	Limit int
	// Cursor is the id of the first item of the page; "" for the first page.
	Cursor string
	// Sort names one of the list's sort keys.
	Sort string
	Desc bool
}

// Page is one page of a list, in the list's order.
type Page[T any] struct {
	Items []T
	Limit int
	// Total counts every item that matches the list's filters.
	Total int
	// NextCursor is the id of the first item of the next page, nil on the last.
	NextCursor *string
	// PreviousCursor is the id of the first item of the previous page, nil on the first.
	PreviousCursor *string
}

// list describes a paginated list to the engine: where its rows are, which
// of them belong to the tenant and match the filters, and how they may be
// sorted. The engine pages by keyset: a page starts at the cursor's sort key
// and walks an index from there, so that page 10,000 costs what page 1 does.
type list struct {
	table string
	// tableArgs are the arguments of placeholders in table, where it is a
	// subquery.
	tableArgs []any
	columns   string // the select list scan reads; must include no joins
	// tenant finds the rows of the tenant (and of the parent record the list
	// is of), in table and in tombstones. Every query paginate runs starts
	// with it.
	tenant condition
	// filters narrow the list further, AND-ed to the tenant.
	filters []condition
	sorts   map[string]sortKey
	// tombstones is a table holding the id, tenant and sort columns of deleted
	// rows, so that a cursor naming a deleted row still finds its place; "" if
	// the list's rows are never deleted.
	tombstones string
	// total counts the matching rows; nil counts them with tenant and
	// filters.
	total func(ctx context.Context, tx pageSource) (int, error)
}

// pageSource is the read transaction paginate runs its queries in: one of
// the read pool (poolTx) or of the direct connections (directTx).
type pageSource interface {
	QueryContext(ctx context.Context, query string, args ...any) (pageRows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) scanner
}

// pageRows are the rows of a page query, as sql.Rows reads them.
type pageRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// poolTx is a read transaction of the read pool as a pageSource.
type poolTx struct{ tx *txn }

func (p poolTx) QueryContext(ctx context.Context, query string, args ...any) (pageRows, error) {
	rows, err := p.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (p poolTx) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	return p.tx.QueryRowContext(ctx, query, args...)
}

// condition is a piece of SQL with its arguments.
type condition struct {
	sql  string
	args []any
}

// sortKey orders a list: the expression whose value orders the rows in
// ascending and in descending order (they differ where nulls must come last
// both ways), ties broken by id in the same direction. Each must be a column
// (generated, where an expression is needed): SQLite turns a row-value range
// on columns into an index range, but not one on expressions.
type sortKey struct {
	asc, desc string
}

// column is a sort key on a column that is never null.
func column(name string) sortKey { return sortKey{asc: name, desc: name} }

// scanner is a row or rows.
type scanner interface{ Scan(...any) error }

// paginate returns the page req asks for. scan reads one row of l.columns and
// returns the item with its id. Returns EINVALIDCURSOR for a cursor that
// names no row of the tenant, live or deleted.
func paginate[T any](ctx context.Context, tx *txn, l list, req PageRequest, scan func(scanner) (T, string, error)) (*Page[T], error) {
	return paginateFrom(ctx, poolTx{tx}, l, req, scan)
}

// paginateFrom is paginate on any pageSource.
func paginateFrom[T any](ctx context.Context, tx pageSource, l list, req PageRequest, scan func(scanner) (T, string, error)) (*Page[T], error) {
	key, ok := l.sorts[req.Sort]
	if !ok {
		return nil, fmt.Errorf("list %s has no sort %q", l.table, req.Sort)
	}
	expr, dir, reverse, from, before := key.asc, "ASC", "DESC", ">=", "<"
	if req.Desc {
		expr, dir, reverse, from, before = key.desc, "DESC", "ASC", "<=", ">"
	}
	where := []string{l.tenant.sql}
	args := append(append([]any(nil), l.tableArgs...), l.tenant.args...)
	for _, c := range l.filters {
		where = append(where, c.sql)
		args = append(args, c.args...)
	}
	filter := strings.Join(where, " AND ")

	var cursorKey []any
	if req.Cursor != "" {
		var err error
		if cursorKey, err = findCursor(ctx, tx, l, expr, req.Cursor); err != nil {
			return nil, err
		}
	}

	query := "SELECT " + l.columns + " FROM " + l.table + " WHERE " + filter
	pageArgs := append([]any(nil), args...)
	if cursorKey != nil {
		query += " AND (" + expr + ", id) " + from + " (?, ?)"
		pageArgs = append(pageArgs, cursorKey...)
	}
	query += " ORDER BY " + expr + " " + dir + ", id " + dir + " LIMIT ?"
	pageArgs = append(pageArgs, req.Limit+1)
	rows, err := tx.QueryContext(ctx, query, pageArgs...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", l.table, err)
	}
	defer rows.Close()
	page := &Page[T]{Items: make([]T, 0, req.Limit), Limit: req.Limit}
	for rows.Next() {
		item, id, err := scan(rows)
		if err != nil {
			return nil, err
		}
		if len(page.Items) == req.Limit {
			next := id // only this one escapes, not every row's id
			page.NextCursor = &next
			break
		}
		page.Items = append(page.Items, item)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", l.table, err)
	}
	rows.Close()

	// The previous page is the limit rows before the cursor's place; its
	// first item is the farthest of them, found by stepping over the nearer
	// ones in the index. With fewer than limit rows before the cursor, it is
	// the list's first row.
	if cursorKey != nil {
		beforeCursor := " AND (" + expr + ", id) " + before + " (?, ?)"
		prevArgs := append(append(append([]any(nil), args...), cursorKey...), req.Limit-1)
		first, err := firstID(ctx, tx, "SELECT id FROM "+l.table+" WHERE "+filter+beforeCursor+
			" ORDER BY "+expr+" "+reverse+", id "+reverse+" LIMIT 1 OFFSET ?", prevArgs)
		if err == nil && first == nil {
			first, err = firstID(ctx, tx, "SELECT id FROM "+l.table+" WHERE "+filter+beforeCursor+
				" ORDER BY "+expr+" "+dir+", id "+dir+" LIMIT 1", prevArgs[:len(prevArgs)-1])
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", l.table, err)
		}
		page.PreviousCursor = first
	}

	if l.total != nil {
		page.Total, err = l.total(ctx, tx)
	} else {
		err = tx.QueryRowContext(ctx, "SELECT count(*) FROM "+l.table+" WHERE "+filter, args...).Scan(&page.Total)
	}
	if err != nil {
		return nil, fmt.Errorf("count %s: %w", l.table, err)
	}
	return page, nil
}

// readPage is paginate in a read transaction of its own, for a list that
// needs nothing else from its snapshot.
func readPage[T any](ctx context.Context, db *DB, l list, req PageRequest, scan func(scanner) (T, string, error)) (*Page[T], error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return paginate(ctx, tx, l, req, scan)
}

// firstID returns the id the query selects, nil when it selects no row.
func firstID(ctx context.Context, tx pageSource, query string, args []any) (*string, error) {
	var id string
	err := tx.QueryRowContext(ctx, query, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// findCursor returns the sort key and id of the cursor's row, or of its
// tombstone when it was deleted.
func findCursor(ctx context.Context, tx pageSource, l list, expr, id string) ([]any, error) {
	query := "SELECT " + expr + ", id FROM " + l.table + " WHERE " + l.tenant.sql + " AND id = ?"
	args := append(append(append([]any(nil), l.tableArgs...), l.tenant.args...), id)
	if l.tombstones != "" {
		query += " UNION ALL SELECT " + expr + ", id FROM " + l.tombstones + " WHERE " + l.tenant.sql + " AND id = ?"
		args = append(append(args, l.tenant.args...), id)
	}
	var value any
	var found string
	err := tx.QueryRowContext(ctx, query+" LIMIT 1", args...).Scan(&value, &found)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &Error{Code: EINVALIDCURSOR, Message: "the cursor names no item of this list", Field: []any{"Cursor"}}
	}
	if err != nil {
		return nil, fmt.Errorf("find cursor: %w", err)
	}
	return []any{value, found}, nil
}
