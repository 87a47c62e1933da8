package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"acctapi/document"
	"acctapi/mail"
)

// Validation follows Zod's issue model, so that callers who know Zod errors
// read ours: a validator collects every issue of a request (path parameters,
// query, x-client-id, body) and its err answers 422 with all of them at once.

// issue is one problem with a request, as a Zod issue.
type issue struct {
	Code        string       `json:"code"`
	Path        []any        `json:"path"`
	Message     string       `json:"message"`
	Expected    string       `json:"expected,omitempty"`
	Received    string       `json:"received,omitempty"`
	Minimum     *int64       `json:"minimum,omitempty"`
	Maximum     *int64       `json:"maximum,omitempty"`
	Type        string       `json:"type,omitempty"`
	Inclusive   *bool        `json:"inclusive,omitempty"`
	Exact       *bool        `json:"exact,omitempty"`
	Options     []string     `json:"options,omitempty"`
	Validation  string       `json:"validation,omitempty"`
	UnionErrors []unionError `json:"unionErrors,omitempty"`
}

// unionError is the ZodError of one alternative of a union.
type unionError struct {
	Issues []issue `json:"issues"`
	Name   string  `json:"name"`
}

// validationError is a failed validation: answered 422.
type validationError struct {
	issues []issue
}

func (e *validationError) Error() string {
	return fmt.Sprintf("validation failed: %d issue(s), first: %s", len(e.issues), e.issues[0].Message)
}

type validationBody struct {
	Success bool             `json:"success"`
	Error   validationDetail `json:"error"`
}

type validationDetail struct {
	Name   string  `json:"name"`
	Issues []issue `json:"issues"`
}

// Limits on input, documented in docs/decisions.md.
const (
	maxIDLength = 64
	maxIDList   = 100
)

// validator collects issues.
type validator struct {
	issues []issue
}

// add records an issue.
func (v *validator) add(i issue) { v.issues = append(v.issues, i) }

// err returns a *validationError holding every issue, or nil when there is none.
func (v *validator) err() error {
	if len(v.issues) == 0 {
		return nil
	}
	return &validationError{issues: v.issues}
}

// field is a decoded body field: Set when the field was sent, Null when it was
// sent as null. A partial update tells "absent" from "null" by them. They stay
// exported so that a field encodes as JSON, as the machinery tests' probe
// echoes it.
type field[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// object is a JSON object of the request body (or nested in it).
type object struct {
	v      *validator
	fields map[string]json.RawMessage
	path   []any
}

// body returns the validator of a decoded body object.
func (v *validator) body(raw json.RawMessage) *object {
	return v.object(raw, []any{})
}

func (v *validator) object(raw json.RawMessage, path []any) *object {
	o := &object{v: v, path: path}
	if kind := jsonKind(raw); kind != "object" {
		v.add(typeIssue(path, "object", kind))
		return o
	}
	if err := json.Unmarshal(raw, &o.fields); err != nil {
		v.add(typeIssue(path, "object", "unknown"))
	}
	return o
}

// only records an issue for each key of the object that is none of names:
// for a body whose unknown keys would otherwise change nothing unseen.
func (o *object) only(names ...string) {
	for _, key := range slices.Sorted(maps.Keys(o.fields)) {
		if !slices.Contains(names, key) {
			o.v.add(issue{Code: "unrecognized_keys", Path: o.at(key),
				Message: fmt.Sprintf("Unrecognized key '%s': the keys are %s", key, strings.Join(names, ", "))})
		}
	}
}

func (o *object) at(name string) []any {
	return append(append(make([]any, 0, len(o.path)+1), o.path...), name)
}

// presence says whether a body field must be sent and whether it may be
// null, so that a call site names it instead of passing two bare booleans.
// Arrays, booleans, objects and emails are never null: their readers ignore
// nullable.
type presence uint8

const (
	optional presence = 0      // may be left out, but not sent as null
	required presence = 1 << 0 // must be sent
	nullable presence = 1 << 1 // may be sent as null
)

// get returns the raw value of a field and whether to go on decoding it: not
// when it is absent or null (recording Required, or a null where none is
// allowed) or when the object itself was not an object.
func (o *object) get(name, expected string, p presence) (json.RawMessage, bool, bool) {
	if o.fields == nil {
		return nil, false, false
	}
	raw, present := o.fields[name]
	if !present {
		if p&required != 0 {
			o.v.add(typeIssue(o.at(name), expected, "undefined"))
		}
		return nil, false, false
	}
	if jsonKind(raw) == "null" {
		if p&nullable == 0 {
			o.v.add(typeIssue(o.at(name), expected, "null"))
			return nil, false, false
		}
		return nil, true, false
	}
	return raw, false, true
}

// stringRule constrains a string field. Lengths count characters, after
// trimming when trim is set. No string may hold a control character, but
// free text (text set) keeps its tabs and line breaks. A name (name set)
// loses its format characters and line and paragraph separators.
type stringRule struct {
	presence presence
	trim     bool
	text     bool
	name     bool
	min, max int
}

// string reads a string field.
func (o *object) string(name string, rule stringRule) field[string] {
	raw, null, ok := o.get(name, "string", rule.presence)
	if !ok {
		return field[string]{Set: null, Null: null}
	}
	s, ok := o.decodeString(name, raw)
	if !ok {
		return field[string]{}
	}
	if rule.name {
		s = document.CleanField(s)
	}
	if rule.trim {
		s = strings.TrimSpace(s)
	}
	if path := o.at(name); !checkLength(o.v, path, s, rule.min, rule.max) || !checkControls(o.v, path, s, rule.text) {
		return field[string]{}
	}
	return field[string]{Set: true, Value: s}
}

func (o *object) decodeString(name string, raw json.RawMessage) (string, bool) {
	if kind := jsonKind(raw); kind != "string" {
		o.v.add(typeIssue(o.at(name), "string", kind))
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		o.v.add(typeIssue(o.at(name), "string", "unknown"))
		return "", false
	}
	return s, true
}

func checkLength(v *validator, path []any, s string, min, max int) bool {
	n := utf8.RuneCountInString(s)
	if min > 0 && n < min {
		v.add(sizeIssue("too_small", path, "string", min, fmt.Sprintf("String must contain at least %d character(s)", min)))
		return false
	}
	if max > 0 && n > max {
		v.add(sizeIssue("too_big", path, "string", max, fmt.Sprintf("String must contain at most %d character(s)", max)))
		return false
	}
	return true
}

// checkControls refuses control characters (C0, DEL and C1). In a name they
// are never meant; a NUL ends strings in C and in many logs, and a line
// break or a terminal escape forges lines wherever the string is shown. Free
// text keeps tab, line feed and carriage return.
func checkControls(v *validator, path []any, s string, text bool) bool {
	for _, r := range s {
		if unicode.IsControl(r) && !(text && (r == '\t' || r == '\n' || r == '\r')) {
			message := "String must not contain control characters"
			if text {
				message += " other than tab, line feed and carriage return"
			}
			v.add(issue{Code: "invalid_string", Path: path, Validation: "regex", Message: message})
			return false
		}
	}
	return true
}

// maxEmail is the longest address SMTP carries.
const maxEmail = 254

// email reads an email address, trimmed and lower-cased: a mailbox as SMTP
// carries it (mail.ValidMailbox), which goes into RCPT TO and the To header
// as it is.
func (o *object) email(name string, p presence) field[string] {
	f := o.string(name, stringRule{presence: p &^ nullable, trim: true, max: maxEmail})
	if !f.Set {
		return f
	}
	f.Value = strings.ToLower(f.Value)
	if !mail.ValidMailbox(f.Value) {
		o.v.add(issue{Code: "invalid_string", Path: o.at(name), Validation: "email", Message: "Invalid email"})
		return field[string]{}
	}
	return f
}

// enum reads a string that must be one of options.
func (o *object) enum(name string, options []string, p presence) field[string] {
	expected := enumExpected(options)
	raw, null, ok := o.get(name, expected, p)
	if !ok {
		return field[string]{Set: null, Null: null}
	}
	if kind := jsonKind(raw); kind != "string" {
		o.v.add(typeIssue(o.at(name), expected, kind))
		return field[string]{}
	}
	s, ok := o.decodeString(name, raw)
	if !ok {
		return field[string]{}
	}
	if !checkEnum(o.v, o.at(name), s, options) {
		return field[string]{}
	}
	return field[string]{Set: true, Value: s}
}

func checkEnum(v *validator, path []any, s string, options []string) bool {
	for _, opt := range options {
		if s == opt {
			return true
		}
	}
	v.add(issue{Code: "invalid_enum_value", Path: path, Options: options, Received: s,
		Message: fmt.Sprintf("Invalid enum value. Expected %s, received '%s'", enumExpected(options), s)})
	return false
}

func enumExpected(options []string) string {
	quoted := make([]string, len(options))
	for i, o := range options {
		quoted[i] = "'" + o + "'"
	}
	return strings.Join(quoted, " | ")
}

// id reads a record id (cuid). IDs are case-insensitive and returned in the
// lower case every stored id has.
func (o *object) id(name string, p presence) field[string] {
	raw, null, ok := o.get(name, "string", p)
	if !ok {
		return field[string]{Set: null, Null: null}
	}
	s, ok := o.decodeString(name, raw)
	if !ok {
		return field[string]{}
	}
	id, ok := checkID(o.v, o.at(name), s)
	return field[string]{Set: ok, Value: id}
}

// ids reads an array of at most maxIDList record ids, without duplicates.
func (o *object) ids(name string, p presence) field[[]string] {
	return o.stringArray(name, p, 0, maxIDList, func(path []any, s string) (string, bool) { return checkID(o.v, path, s) })
}

// enums reads an array of 1 to maxIDList of options, without duplicates.
func (o *object) enums(name string, options []string, p presence) field[[]string] {
	return o.stringArray(name, p, 1, maxIDList, func(path []any, s string) (string, bool) {
		return s, checkEnum(o.v, path, s, options)
	})
}

// stringArray reads an array of min to max strings, each checked by item,
// without duplicates (counted before they are dropped).
func (o *object) stringArray(name string, p presence, min, max int, item func(path []any, s string) (string, bool)) field[[]string] {
	raw, _, ok := o.get(name, "array", p&^nullable)
	if !ok {
		return field[[]string]{}
	}
	if kind := jsonKind(raw); kind != "array" {
		o.v.add(typeIssue(o.at(name), "array", kind))
		return field[[]string]{}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.v.add(typeIssue(o.at(name), "array", "unknown"))
		return field[[]string]{}
	}
	if len(items) < min {
		o.v.add(sizeIssue("too_small", o.at(name), "array", min, fmt.Sprintf("Array must contain at least %d element(s)", min)))
		return field[[]string]{}
	}
	if len(items) > max {
		o.v.add(sizeIssue("too_big", o.at(name), "array", max, fmt.Sprintf("Array must contain at most %d element(s)", max)))
		return field[[]string]{}
	}
	values := make([]string, 0, len(items))
	seen := map[string]bool{}
	valid := true
	for i, raw := range items {
		path := append(o.at(name), i)
		if kind := jsonKind(raw); kind != "string" {
			o.v.add(typeIssue(path, "string", kind))
			valid = false
			continue
		}
		var s string
		json.Unmarshal(raw, &s)
		value, ok := item(path, s)
		if !ok {
			valid = false
			continue
		}
		if !seen[value] {
			seen[value] = true
			values = append(values, value)
		}
	}
	if !valid {
		return field[[]string]{}
	}
	return field[[]string]{Set: true, Value: values}
}

// dateTime is the form of the date-times accepted: RFC 3339 with an upper-case
// T and Z, a fraction after a point, and an offset within ±23:59. time.Parse
// alone also takes an offset of 24 hours or of 60 minutes, a comma before the
// fraction and a one-digit hour; it still checks the calendar (February 30).
var dateTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`)

// time reads an RFC 3339 date-time (with Z or an offset), returned in UTC.
func (o *object) time(name string, p presence) field[time.Time] {
	raw, null, ok := o.get(name, "string", p)
	if !ok {
		return field[time.Time]{Set: null, Null: null}
	}
	s, ok := o.decodeString(name, raw)
	if !ok {
		return field[time.Time]{}
	}
	t, err := time.Parse(time.RFC3339, s)
	// An offset can carry a date past a four-digit year once in UTC, which the
	// answer's YYYY-MM-DDTHH:MM:SSZ form cannot show.
	if err != nil || len(s) > 40 || !dateTime.MatchString(s) || t.UTC().Year() < 0 || t.UTC().Year() > 9999 {
		o.v.add(issue{Code: "invalid_string", Path: o.at(name), Validation: "datetime", Message: "Invalid datetime"})
		return field[time.Time]{}
	}
	return field[time.Time]{Set: true, Value: t.UTC()}
}

// bool reads a boolean field.
func (o *object) bool(name string, p presence) field[bool] {
	raw, _, ok := o.get(name, "boolean", p&^nullable)
	if !ok {
		return field[bool]{}
	}
	if kind := jsonKind(raw); kind != "boolean" {
		o.v.add(typeIssue(o.at(name), "boolean", kind))
		return field[bool]{}
	}
	return field[bool]{Set: true, Value: raw[0] == 't'}
}

// object reads a nested object field; its fields are read from the result.
// An absent, null or mistyped field gives an object that reads as empty.
func (o *object) object(name string, p presence) (*object, bool) {
	raw, _, ok := o.get(name, "object", p&^nullable)
	if !ok {
		return &object{v: o.v, path: o.at(name)}, false
	}
	nested := o.v.object(raw, o.at(name))
	return nested, nested.fields != nil
}

// query reads query parameters; issues name the path ["query", name].
type query struct {
	v      *validator
	values url.Values
}

// query returns the reader of the request's query parameters.
func (v *validator) query(values url.Values) *query {
	return &query{v: v, values: values}
}

// int reads an integer parameter within [min, max]; def when absent.
func (q *query) int(name string, min, max, def int) int {
	s, present := q.get(name)
	if !present {
		return def
	}
	path := []any{"query", name}
	f, err := strconv.ParseFloat(s, 64)
	// Decimal notation only (not Go's hex floats, Inf or NaN); a number too
	// large for a float is ±Inf, which the bounds below refuse.
	if !decimalNumber.MatchString(s) || (err != nil && !errors.Is(err, strconv.ErrRange)) {
		q.v.add(typeIssue(path, "number", "nan"))
		return def
	}
	if f != math.Trunc(f) {
		q.v.add(typeIssue(path, "integer", "float"))
		return def
	}
	if f < float64(min) {
		q.v.add(sizeIssue("too_small", path, "number", min, fmt.Sprintf("Number must be greater than or equal to %d", min)))
		return def
	}
	if f > float64(max) {
		q.v.add(sizeIssue("too_big", path, "number", max, fmt.Sprintf("Number must be less than or equal to %d", max)))
		return def
	}
	return int(f)
}

// decimalNumber is a number in decimal notation, as a query may write one.
var decimalNumber = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// enum reads a parameter that must be one of options; def when absent.
func (q *query) enum(name string, options []string, def string) string {
	s, present := q.get(name)
	if !present {
		return def
	}
	if !checkEnum(q.v, []any{"query", name}, s, options) {
		return def
	}
	return s
}

// id reads an id parameter; "" when absent or invalid.
func (q *query) id(name string) string {
	s, present := q.get(name)
	if !present {
		return ""
	}
	id, _ := checkID(q.v, []any{"query", name}, s)
	return id
}

func (q *query) get(name string) (string, bool) {
	vals, ok := q.values[name]
	if !ok || len(vals) == 0 {
		return "", false
	}
	return vals[0], true
}

// pathID reads the id path parameter; issues name the path ["params", name].
func (v *validator) pathID(p httprouter.Params, name string) string {
	id, _ := checkID(v, []any{"params", name}, p.ByName(name))
	return id
}

// idPattern is the cuid shape inputs accept: "c" and at least 8 characters
// that are neither white space, control characters nor hyphens,
// case-insensitive. Bytes that are not UTF-8 are refused before it, as
// regexp would read them as U+FFFD.
var idPattern = regexp.MustCompile(`^[cC][^\s\p{Cc}-]{8,}$`)

func checkID(v *validator, path []any, s string) (string, bool) {
	if len(s) > maxIDLength || !utf8.ValidString(s) || !idPattern.MatchString(s) {
		v.add(issue{Code: "invalid_string", Path: path, Validation: "cuid", Message: "Invalid cuid"})
		return "", false
	}
	return asciiLower(s), true
}

// asciiLower lower-cases the ASCII letters of s only: our ids are ASCII, and
// Unicode lower-casing would let another spelling (the Kelvin sign for k)
// name the same record.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

func typeIssue(path []any, expected, received string) issue {
	msg := "Expected " + expected + ", received " + received
	if received == "undefined" {
		msg = "Required"
	}
	return issue{Code: "invalid_type", Path: path, Expected: expected, Received: received, Message: msg}
}

func sizeIssue(code string, path []any, typ string, bound int, message string) issue {
	b, yes, no := int64(bound), true, false
	out := issue{Code: code, Path: path, Type: typ, Inclusive: &yes, Exact: &no, Message: message}
	if code == "too_small" {
		out.Minimum = &b
	} else {
		out.Maximum = &b
	}
	return out
}

// jsonKind names the JSON type of a valid raw value as Zod names types.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "undefined"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// int reads an integer field within [min, max].
func (o *object) int(name string, p presence, min, max int) field[int] {
	raw, _, ok := o.get(name, "number", p&^nullable)
	if !ok {
		return field[int]{}
	}
	if kind := jsonKind(raw); kind != "number" {
		o.v.add(typeIssue(o.at(name), "number", kind))
		return field[int]{}
	}
	// A JSON number too large for a float is refused by the bounds, as ±Inf.
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		o.v.add(typeIssue(o.at(name), "number", "nan"))
		return field[int]{}
	}
	if f != math.Trunc(f) {
		o.v.add(typeIssue(o.at(name), "integer", "float"))
		return field[int]{}
	}
	if f < float64(min) {
		o.v.add(sizeIssue("too_small", o.at(name), "number", min, fmt.Sprintf("Number must be greater than or equal to %d", min)))
		return field[int]{}
	}
	if f > float64(max) {
		o.v.add(sizeIssue("too_big", o.at(name), "number", max, fmt.Sprintf("Number must be less than or equal to %d", max)))
		return field[int]{}
	}
	return field[int]{Set: true, Value: int(f)}
}

// objects reads an array of min to max objects; the fields of each are read
// from the result. It returns false when the field is absent or is not such
// an array.
func (o *object) objects(name string, p presence, min, max int) ([]*object, bool) {
	raw, _, ok := o.get(name, "array", p&^nullable)
	if !ok {
		return nil, false
	}
	if kind := jsonKind(raw); kind != "array" {
		o.v.add(typeIssue(o.at(name), "array", kind))
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		o.v.add(typeIssue(o.at(name), "array", "unknown"))
		return nil, false
	}
	if len(items) < min {
		o.v.add(sizeIssue("too_small", o.at(name), "array", min, fmt.Sprintf("Array must contain at least %d element(s)", min)))
		return nil, false
	}
	if len(items) > max {
		o.v.add(sizeIssue("too_big", o.at(name), "array", max, fmt.Sprintf("Array must contain at most %d element(s)", max)))
		return nil, false
	}
	out := make([]*object, len(items))
	for i, item := range items {
		out[i] = o.v.object(item, append(o.at(name), i))
	}
	return out, true
}
