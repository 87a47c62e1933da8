package handlers

import (
	"strconv"
	"time"
	"unicode/utf8"

	"acctapi/db"
)

// taskPageResponse is a page of the task list, written straight from the
// store's tasks. It is the busiest answer, and there encoding/json's
// reflection and the copies into taskResponse took a fifth of the server's
// time. Its bytes are exactly those encoding/json writes for the list
// envelope of taskResponse: TestTaskPageJSON and FuzzTaskPageJSON compare
// the two.
type taskPageResponse struct{ page *db.Page[*db.Task] }

func newTaskPageResponse(page *db.Page[*db.Task]) taskPageResponse { return taskPageResponse{page} }

func (p taskPageResponse) appendJSON(b []byte) []byte {
	b = append(b, `{"data":[`...)
	for i, t := range p.page.Items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTask(b, t)
	}
	b = append(b, `],"pagination":{"limit":`...)
	b = strconv.AppendInt(b, int64(p.page.Limit), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(p.page.Total), 10)
	b = append(b, `,"nextCursor":`...)
	b = appendNullableString(b, p.page.NextCursor)
	b = append(b, `,"previousCursor":`...)
	b = appendNullableString(b, p.page.PreviousCursor)
	return append(b, "}}"...)
}

// appendTask writes t as taskResponse's fields, in their order.
func appendTask(b []byte, t *db.Task) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, t.ID)
	b = append(b, `,"title":`...)
	b = appendString(b, t.Title)
	b = append(b, `,"text":`...)
	b = appendNullableString(b, t.Text)
	b = append(b, `,"status":`...)
	b = appendString(b, t.Status)
	b = append(b, `,"dueDate":`...)
	if t.DueDate == nil {
		b = append(b, "null"...)
	} else {
		b = appendTimestamp(b, *t.DueDate)
	}
	b = append(b, `,"workspaceId":`...)
	b = appendString(b, t.WorkspaceID)
	b = append(b, `,"createdById":`...)
	b = appendNullableString(b, t.CreatedByID)
	b = append(b, `,"actorType":`...)
	b = appendString(b, t.ActorType)
	b = append(b, `,"parentId":`...)
	b = appendNullableString(b, t.ParentID)
	b = append(b, `,"destinationFolderId":`...)
	b = appendNullableString(b, t.DestinationFolderID)
	b = append(b, `,"createdAt":`...)
	b = appendTimestamp(b, t.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = appendTimestamp(b, t.UpdatedAt)
	return append(b, '}')
}

// appendTimestamp writes t as timestampOf formats it, quoted.
func appendTimestamp(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339)
	return append(b, '"')
}

func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping off: quotes, backslashes and control characters escaped,
// each byte that is not UTF-8 as \ufffd, and U+2028 and U+2029 escaped
// (JavaScript reads them as line ends).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
