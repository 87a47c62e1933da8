package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// Tests of the admin area: clients (POST, GET and PATCH /admin/clients and
// GET /admin/clients/{id}) and accountant users (GET and POST /admin/users,
// GET and PATCH /admin/users/{id}). Every call goes through api.do, so every answer is
// also checked against the served OpenAPI document.

// Well-formed ids that name nothing.
const (
	admMissingClientID = "cnoclientnoclientnoclient7"
	admMissingUserID   = "cnousernousernousernouser7"
	admMissingRoleID   = "cnorolenorolenorolenorole7"
)

var (
	// admClientFields are the fields of a Client, every one always present.
	admClientFields = []string{"archivedAt", "createdAt", "customId", "id", "ledgerClientId", "legalName", "name", "slug", "type", "updatedAt", "vatIds"}
	// admUserFields and admNamedUserFields are the fields of an Accountant
	// user, without and with the names.
	admUserFields      = []string{"createdAt", "email", "id", "roles"}
	admNamedUserFields = []string{"createdAt", "email", "firstName", "id", "lastName", "roles"}
	admRoleFields      = []string{"customName", "id", "name"}
	admClientTypes     = []string{"natural_person", "individual_enterprise", "legal_person"}
	admUserSorts       = []string{"createdAt", "updatedAt", "email", "firstName", "lastName"}
	admClientSorts     = []string{"createdAt", "updatedAt", "name"}
)

// admClient is a Client as the API answers it.
type admClient struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Slug           string   `json:"slug"`
	Type           string   `json:"type"`
	CustomID       *string  `json:"customId"`
	LegalName      *string  `json:"legalName"`
	VATIDs         []string `json:"vatIds"`
	ArchivedAt     *string  `json:"archivedAt"`
	LedgerClientID *string  `json:"ledgerClientId"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

// admRole is a role of an Accountant user.
type admRole struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CustomName *string `json:"customName"`
}

// admUser is an Accountant user as the API answers it.
type admUser struct {
	ID        string    `json:"id"`
	CreatedAt string    `json:"createdAt"`
	Email     string    `json:"email"`
	FirstName *string   `json:"firstName"`
	LastName  *string   `json:"lastName"`
	Roles     []admRole `json:"roles"`
}

// admPage is a page of a list.
type admPage[T any] struct {
	Data       []T `json:"data"`
	Pagination struct {
		Limit          int     `json:"limit"`
		Total          int     `json:"total"`
		NextCursor     *string `json:"nextCursor"`
		PreviousCursor *string `json:"previousCursor"`
	} `json:"pagination"`
}

func admStrict(t *testing.T, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// admDecodeClient checks the status and the exact fields of a Client answer
// and decodes it.
func admDecodeClient(t *testing.T, res *response, status int) admClient {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	if got := cuKeys(t, res.body); !reflect.DeepEqual(got, admClientFields) {
		t.Errorf("client fields: got %v, want %v (body %s)", got, admClientFields, res.body)
	}
	var c admClient
	admStrict(t, res.body, &c)
	return c
}

// admDecodeUser checks the status and the exact fields of an Accountant user
// answer (names only when present; each role with its three fields, a null
// customName included) and decodes it.
func admDecodeUser(t *testing.T, res *response, status int) admUser {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	if status == http.StatusCreated {
		r := *res
		r.body = takeMailed(t, res.body)
		res = &r
	}
	var raw struct {
		FirstName json.RawMessage   `json:"firstName"`
		LastName  json.RawMessage   `json:"lastName"`
		Roles     []json.RawMessage `json:"roles"`
	}
	res.decode(t, &raw)
	fields := slices.Clone(admUserFields)
	if raw.FirstName != nil {
		fields = append(fields, "firstName")
	}
	if raw.LastName != nil {
		fields = append(fields, "lastName")
	}
	sort.Strings(fields)
	if got := cuKeys(t, res.body); !reflect.DeepEqual(got, fields) {
		t.Errorf("accountant user fields: got %v, want %v (body %s)", got, fields, res.body)
	}
	for _, r := range raw.Roles {
		if got := cuKeys(t, r); !reflect.DeepEqual(got, admRoleFields) {
			t.Errorf("role fields: got %v, want %v (body %s)", got, admRoleFields, res.body)
		}
	}
	var u admUser
	admStrict(t, res.body, &u)
	return u
}

func (api *testAPI) admCreateClient(t *testing.T, key string, body any) admClient {
	t.Helper()
	return admDecodeClient(t, api.do(request{method: "POST", path: "/v1/admin/clients", key: key, body: body}), http.StatusCreated)
}

func (api *testAPI) admInviteUser(t *testing.T, key string, body any) admUser {
	t.Helper()
	return admDecodeUser(t, api.do(request{method: "POST", path: "/v1/admin/users", key: key, body: body}), http.StatusCreated)
}

// admList gets a page of a list and decodes it strictly.
func admList[T any](t *testing.T, api *testAPI, key, path, query string) admPage[T] {
	t.Helper()
	if query != "" {
		path += "?" + query
	}
	res := api.do(request{method: "GET", path: path, key: key})
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", path, res.status, res.body)
	}
	var page admPage[T]
	admStrict(t, res.body, &page)
	return page
}

// admWalk walks a list from the first page to the last by nextCursor and
// back by previousCursor, checks that both ways give the same pages with
// consistent cursors, and returns the items in order.
func admWalk[T any](t *testing.T, api *testAPI, key, path, query string, limit int, idOf func(T) string) []T {
	t.Helper()
	get := func(cursor string) admPage[T] {
		t.Helper()
		q := query + "&limit=" + strconv.Itoa(limit)
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		return admList[T](t, api, key, path, q)
	}
	ids := func(items []T) []string {
		out := make([]string, len(items))
		for i, item := range items {
			out[i] = idOf(item)
		}
		return out
	}
	var pages []admPage[T]
	for cursor := ""; ; {
		page := get(cursor)
		pages = append(pages, page)
		if page.Pagination.NextCursor == nil {
			break
		}
		if len(pages) > 50 {
			t.Fatalf("%s?%s: more than 50 pages", path, query)
		}
		cursor = *page.Pagination.NextCursor
	}
	var items []T
	total := pages[0].Pagination.Total
	for k, page := range pages {
		items = append(items, page.Data...)
		p := page.Pagination
		if p.Limit != limit || p.Total != total {
			t.Errorf("%s page %d: limit %d total %d, want %d and %d", query, k, p.Limit, p.Total, limit, total)
		}
		if k < len(pages)-1 && len(page.Data) != limit {
			t.Errorf("%s page %d: got %d items, want %d", query, k, len(page.Data), limit)
		}
		if k > 0 && (len(page.Data) == 0 || *pages[k-1].Pagination.NextCursor != idOf(page.Data[0])) {
			t.Errorf("%s page %d: nextCursor of the page before is not its first item", query, k)
		}
		wantPrevious := "<nil>"
		if k > 0 {
			wantPrevious = idOf(pages[k-1].Data[0])
		}
		if deref(p.PreviousCursor) != wantPrevious {
			t.Errorf("%s page %d: previousCursor got %s, want %s", query, k, deref(p.PreviousCursor), wantPrevious)
		}
	}
	if len(items) != total {
		t.Errorf("%s: walked %d items, total says %d", query, len(items), total)
	}
	k := len(pages) - 1
	for cursor := pages[k].Pagination.PreviousCursor; cursor != nil; {
		k--
		if k < 0 {
			t.Fatalf("%s: walking back goes past the first page", query)
		}
		page := get(*cursor)
		if !reflect.DeepEqual(page, pages[k]) {
			t.Errorf("%s: page %d walking back: got %v %+v, want %v %+v", query, k,
				ids(page.Data), page.Pagination, ids(pages[k].Data), pages[k].Pagination)
		}
		cursor = page.Pagination.PreviousCursor
	}
	if k != 0 {
		t.Errorf("%s: walking back stopped at page %d, want 0", query, k)
	}
	return items
}

// admBuiltinRoles returns the ids of the firm's built-in roles by name.
func (api *testAPI) admBuiltinRoles(t *testing.T, firmID string) map[string]string {
	t.Helper()
	roles, err := api.store.ListRoles(context.Background(), firmID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range roles {
		if r.Name != "custom" {
			out[r.Name] = r.ID
		}
	}
	if len(out) != 2 {
		t.Fatalf("built-in roles of %s: got %v, want admin and user", firmID, out)
	}
	return out
}

func (api *testAPI) admCreateRole(t *testing.T, firmID, name string) *db.Role {
	t.Helper()
	r, err := api.store.CreateRole(context.Background(), firmID, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// admAddress reads a client's stored address: line1, line2, city,
// postalCode, countryCode, nil for null.
func (api *testAPI) admAddress(t *testing.T, clientID string) []*string {
	t.Helper()
	got := api.sqlColumn(t, `SELECT json_array(address_line1, address_line2, address_city, address_postal_code, address_country_code)
		FROM clients WHERE id = ?`, clientID)
	if len(got) != 1 {
		t.Fatalf("client %s: %d rows", clientID, len(got))
	}
	var a []*string
	if err := json.Unmarshal([]byte(got[0]), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func admStrs(a []*string) []string {
	out := make([]string, len(a))
	for i, p := range a {
		out[i] = deref(p)
	}
	return out
}

// admCountryIssue is the issue of a country code that is not an assigned
// ISO 3166-1 alpha-2 code.
func admCountryIssue() issue {
	return issue{Code: "invalid_string", Path: []any{"address", "countryCode"}, Validation: "regex",
		Message: "Invalid ISO 3166-1 alpha-2 country code"}
}

// admRoleUnion is the invalid_union issue of a role that is a string but
// neither "admin", "user" nor a cuid.
func admRoleUnion(received string) issue {
	return issue{Code: "invalid_union", Path: []any{"role"}, Message: "Invalid input", UnionErrors: []unionError{
		{Issues: []issue{cuEnumValue(cuRoleOptions, received, "role")}, Name: "ZodError"},
		{Issues: []issue{cuidIssue("role")}, Name: "ZodError"},
	}}
}

// admRoleUnionType is the invalid_union issue of a role of another JSON type.
func admRoleUnionType(kind string) issue {
	return issue{Code: "invalid_union", Path: []any{"role"}, Message: "Invalid input", UnionErrors: []unionError{
		{Issues: []issue{cuEnumType(cuRoleOptions, kind, "role")}, Name: "ZodError"},
		{Issues: []issue{typeIssueAt("string", kind, "role")}, Name: "ZodError"},
	}}
}

func admQueryTooSmall() issue {
	return issue{Code: "too_small", Path: []any{"query", "limit"}, Minimum: bound(1), Type: "number", Inclusive: &yes, Exact: &no,
		Message: "Number must be greater than or equal to 1"}
}

// ---- clients ----------------------------------------------------------------

func TestAdminClientsCreate(t *testing.T) {
	api := newTestAPI(t)
	now := apiTime(api.clock.Now())
	post := func(key string, body any) *response {
		return api.do(request{method: "POST", path: "/v1/admin/clients", key: key, body: body})
	}
	clients := func(t *testing.T) int {
		t.Helper()
		return api.cuCount(t, `SELECT count(*) FROM clients`)
	}

	t.Run("a new client has every field, null until set", func(t *testing.T) {
		got := api.admCreateClient(t, api.accountantKey, map[string]any{"name": "Müller & Söhne GmbH", "type": "legal_person"})
		want := admClient{ID: got.ID, Name: "Müller & Söhne GmbH", Slug: "mueller-soehne-gmbh", Type: "legal_person", VATIDs: []string{},
			CreatedAt: now, UpdatedAt: now}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("client: got %+v, want %+v", got, want)
		}
		if !generatedID.MatchString(got.ID) {
			t.Errorf("id: got %q, want a generated cuid", got.ID)
		}
		if a := api.admAddress(t, got.ID); !reflect.DeepEqual(a, make([]*string, 5)) {
			t.Errorf("stored address: got %v, want all null", admStrs(a))
		}
		if n := api.cuCount(t, `SELECT count(*) FROM clients WHERE id = ? AND firm_id = ?`, got.ID, api.firm.ID); n != 1 {
			t.Errorf("client of firm one: got %d, want 1", n)
		}
	})

	t.Run("a second client of the same name gets another slug", func(t *testing.T) {
		second := api.admCreateClient(t, api.accountantKey, map[string]any{"name": "Müller & Söhne GmbH", "type": "natural_person"})
		if second.Slug != "mueller-soehne-gmbh-2" {
			t.Errorf("slug: got %q, want mueller-soehne-gmbh-2", second.Slug)
		}
		// Names are trimmed; the slug ignores case and punctuation.
		third := api.admCreateClient(t, api.accountantKey, map[string]any{"name": "  MÜLLER & SÖHNE GMBH ", "type": "individual_enterprise"})
		if third.Slug != "mueller-soehne-gmbh-3" || third.Name != "MÜLLER & SÖHNE GMBH" || third.Type != "individual_enterprise" {
			t.Errorf("third: got %+v, want slug mueller-soehne-gmbh-3 and the trimmed name", third)
		}
		// Slugs are unique within a firm, not across firms.
		other := api.admCreateClient(t, api.other.accountantKey, map[string]any{"name": "Müller & Söhne GmbH", "type": "legal_person"})
		if other.Slug != "mueller-soehne-gmbh" {
			t.Errorf("slug in the other firm: got %q, want mueller-soehne-gmbh", other.Slug)
		}
		if n := api.cuCount(t, `SELECT count(*) FROM clients WHERE id = ? AND firm_id = ?`, other.ID, api.other.firm.ID); n != 1 {
			t.Errorf("client of firm two: got %d, want 1", n)
		}
	})

	t.Run("a name with nothing to keep", func(t *testing.T) {
		got := api.admCreateClient(t, api.accountantKey, map[string]any{"name": "東京", "type": "legal_person"})
		if got.Slug != "client" {
			t.Errorf("slug: got %q, want client", got.Slug)
		}
	})

	t.Run("every field, the address stored and not returned", func(t *testing.T) {
		res := post(api.accountantKey, map[string]any{"name": "Kunde", "type": "individual_enterprise", "customId": " K-100 ",
			"legalName": " Kunde e.K. ", "address": map[string]any{"line1": " Hauptstraße 1 ", "line2": "Hinterhaus",
				"city": "Berlin", "postalCode": "10115", "countryCode": "de"}})
		got := admDecodeClient(t, res, http.StatusCreated)
		if deref(got.CustomID) != "K-100" || deref(got.LegalName) != "Kunde e.K." || got.ArchivedAt != nil || got.LedgerClientID != nil {
			t.Errorf("client: got %+v, want customId K-100, legalName Kunde e.K., archivedAt and ledgerClientId null", got)
		}
		want := []string{"Hauptstraße 1", "Hinterhaus", "Berlin", "10115", "DE"}
		if a := admStrs(api.admAddress(t, got.ID)); !reflect.DeepEqual(a, want) {
			t.Errorf("stored address: got %v, want %v", a, want)
		}
		for _, leak := range []string{"address", "Hauptstra", "Berlin", "10115"} {
			if strings.Contains(string(res.body), leak) {
				t.Errorf("answer %s shows the address (%s)", res.body, leak)
			}
		}
	})

	t.Run("null optional fields", func(t *testing.T) {
		got := api.admCreateClient(t, api.accountantKey, map[string]any{"name": "Nulls", "type": "legal_person",
			"customId": nil, "legalName": nil, "address": map[string]any{"city": nil, "countryCode": nil}})
		if got.CustomID != nil || got.LegalName != nil {
			t.Errorf("client: got %+v, want customId and legalName null", got)
		}
	})

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			name string
			body any
			want []issue
		}{
			{"missing name and type", map[string]any{}, []issue{requiredIssue("name"), cuRequiredEnum(admClientTypes, "type")}},
			{"blank name", map[string]any{"name": "   ", "type": "legal_person"}, []issue{cuTooSmall(1, "name")}},
			{"name of 201 characters", map[string]any{"name": strings.Repeat("ü", 201), "type": "legal_person"}, []issue{cuTooBig(200, "name")}},
			{"name null", map[string]any{"name": nil, "type": "legal_person"}, []issue{typeIssueAt("string", "null", "name")}},
			{"unknown type", map[string]any{"name": "X", "type": "robot"}, []issue{cuEnumValue(admClientTypes, "robot", "type")}},
			{"type null", map[string]any{"name": "X", "type": nil}, []issue{cuEnumType(admClientTypes, "null", "type")}},
			{"empty customId and legalName", map[string]any{"name": "X", "type": "legal_person", "customId": " ", "legalName": ""},
				[]issue{cuTooSmall(1, "customId"), cuTooSmall(1, "legalName")}},
			{"customId of 101 characters", map[string]any{"name": "X", "type": "legal_person", "customId": strings.Repeat("k", 101)},
				[]issue{cuTooBig(100, "customId")}},
			{"address not an object", map[string]any{"name": "X", "type": "legal_person", "address": "Berlin"},
				[]issue{typeIssueAt("object", "string", "address")}},
			{"address null", map[string]any{"name": "X", "type": "legal_person", "address": nil},
				[]issue{typeIssueAt("object", "null", "address")}},
			{"address fields", map[string]any{"name": "X", "type": "legal_person", "address": map[string]any{
				"line1": 5, "line2": strings.Repeat("l", 201), "postalCode": strings.Repeat("1", 21), "countryCode": "XX"}},
				[]issue{typeIssueAt("string", "number", "address", "line1"), cuTooBig(200, "address", "line2"),
					cuTooBig(20, "address", "postalCode"), admCountryIssue()}},
			{"three-letter country code", map[string]any{"name": "X", "type": "legal_person", "address": map[string]any{"countryCode": "DEU"}},
				[]issue{admCountryIssue()}},
			{"everything wrong at once", map[string]any{"name": "", "type": "robot", "customId": 1, "address": map[string]any{"countryCode": "xx"}},
				[]issue{cuTooSmall(1, "name"), cuEnumValue(admClientTypes, "robot", "type"), typeIssueAt("string", "number", "customId"), admCountryIssue()}},
		}
		before := clients(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantIssues(t, post(api.accountantKey, c.body), "ValidationError", c.want)
			})
		}
		if after := clients(t); after != before {
			t.Errorf("clients after the 422s: got %d, want %d", after, before)
		}
	})
}

func TestAdminClientsReadAndList(t *testing.T) {
	api := newTestAPI(t)
	// Firm one has Client One and Client Three from the harness, created in
	// the same second; more come a second apart, names in mixed case.
	for _, name := range []string{"bravo", "Alpha", "alpha", "Charlie", "ALPHA", "delta"} {
		api.clock.Advance(time.Second)
		api.admCreateClient(t, api.accountantKey, map[string]any{"name": name, "type": "legal_person"})
	}
	all := admList[admClient](t, api, api.accountantKey, "/v1/admin/clients", "limit=100").Data
	if len(all) != 8 {
		t.Fatalf("clients of firm one: got %d, want 8", len(all))
	}
	byName := map[string]admClient{}
	for _, c := range all {
		byName[c.Name] = c
	}
	// Renames move updatedAt; the slug stays.
	for _, name := range []string{"bravo", "Client One"} {
		api.clock.Advance(time.Minute)
		res := api.do(request{method: "PATCH", path: "/v1/admin/clients/" + byName[name].ID, key: api.accountantKey,
			body: map[string]any{"legalName": name + " Ltd."}})
		admDecodeClient(t, res, http.StatusOK)
	}
	all = admList[admClient](t, api, api.accountantKey, "/v1/admin/clients", "limit=100").Data

	t.Run("GET by id answers the client as listed", func(t *testing.T) {
		for _, c := range all {
			got := admDecodeClient(t, api.do(request{method: "GET", path: "/v1/admin/clients/" + strings.ToUpper(c.ID), key: api.accountantKey}), http.StatusOK)
			if !reflect.DeepEqual(got, c) {
				t.Errorf("GET %s: got %+v, want %+v", c.ID, got, c)
			}
		}
	})

	t.Run("every sort in both orders, walked both ways", func(t *testing.T) {
		for _, sortKey := range admClientSorts {
			for _, order := range []string{"asc", "desc"} {
				want := slices.Clone(all)
				slices.SortFunc(want, func(a, b admClient) int {
					var c int
					switch sortKey {
					case "createdAt":
						c = strings.Compare(a.CreatedAt, b.CreatedAt)
					case "updatedAt":
						c = strings.Compare(a.UpdatedAt, b.UpdatedAt)
					case "name":
						c = strings.Compare(admASCIILower(a.Name), admASCIILower(b.Name))
					}
					if c == 0 {
						c = strings.Compare(a.ID, b.ID)
					}
					if order == "desc" {
						c = -c
					}
					return c
				})
				query := "sort=" + sortKey + "&order=" + order
				got := admList[admClient](t, api, api.accountantKey, "/v1/admin/clients", query+"&limit=100")
				if !reflect.DeepEqual(got.Data, want) {
					t.Errorf("%s: got %v, want %v", query, admClientNames(got.Data), admClientNames(want))
				}
				walked := admWalk(t, api, api.accountantKey, "/v1/admin/clients", query, 3, func(c admClient) string { return c.ID })
				if !reflect.DeepEqual(walked, want) {
					t.Errorf("%s walked by 3: got %v, want %v", query, admClientNames(walked), admClientNames(want))
				}
			}
		}
	})

	t.Run("defaults: newest first, 20 a page", func(t *testing.T) {
		got := admList[admClient](t, api, api.accountantKey, "/v1/admin/clients", "")
		want := admList[admClient](t, api, api.accountantKey, "/v1/admin/clients", "sort=createdAt&order=desc&limit=20")
		if !reflect.DeepEqual(got, want) || got.Pagination.Limit != 20 || got.Pagination.Total != 8 {
			t.Errorf("defaults: got %v %+v, want %v", admClientNames(got.Data), got.Pagination, admClientNames(want.Data))
		}
	})

	t.Run("the other firm sees its own clients only", func(t *testing.T) {
		got := admList[admClient](t, api, api.other.accountantKey, "/v1/admin/clients", "limit=100")
		if len(got.Data) != 1 || got.Data[0].ID != api.other.client.ID || got.Pagination.Total != 1 {
			t.Errorf("firm two's clients: got %v (total %d), want only %s", admClientNames(got.Data), got.Pagination.Total, api.other.client.ID)
		}
	})

	t.Run("another firm's client is not found, as an unknown one", func(t *testing.T) {
		unknown := api.do(request{method: "GET", path: "/v1/admin/clients/" + admMissingClientID, key: api.accountantKey})
		wantError(t, unknown, http.StatusNotFound, "not_found", "not_found", "client not found")
		res := api.do(request{method: "GET", path: "/v1/admin/clients/" + api.client.ID, key: api.other.accountantKey})
		sameBodyButID(t, res, api.client.ID, unknown, admMissingClientID)
		res = api.do(request{method: "GET", path: "/v1/admin/clients/" + api.other.client.ID, key: api.accountantKey})
		sameBodyButID(t, res, api.other.client.ID, unknown, admMissingClientID)
	})

	t.Run("a cursor of another firm's client", func(t *testing.T) {
		for _, cursor := range []string{api.other.client.ID, admMissingClientID} {
			res := api.do(request{method: "GET", path: "/v1/admin/clients?cursor=" + cursor, key: api.accountantKey})
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", "the cursor names no item of this list")
		}
	})

	t.Run("validation", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/admin/clients?limit=0&sort=email&order=up&cursor=x", key: api.accountantKey})
		wantIssues(t, res, "ValidationError", []issue{admQueryTooSmall(), cuidIssue("query", "cursor"),
			cuEnumValue(admClientSorts, "email", "query", "sort"), cuEnumValue([]string{"asc", "desc"}, "up", "query", "order")})
		res = api.do(request{method: "GET", path: "/v1/admin/clients/nope", key: api.accountantKey})
		wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id")})
	})
}

func admClientNames(cs []admClient) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// admASCIILower lower-cases ASCII letters only, as SQLite's NOCASE does.
func admASCIILower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func TestAdminClientsUpdate(t *testing.T) {
	api := newTestAPI(t)
	created := api.admCreateClient(t, api.accountantKey, map[string]any{"name": "Kunde", "type": "legal_person",
		"customId": "K-1", "legalName": "Kunde GmbH", "address": map[string]any{"line1": "Hauptstraße 1", "line2": "Hinterhaus",
			"city": "Berlin", "postalCode": "10115", "countryCode": "DE"}})
	patch := func(key, id string, body any) *response {
		return api.do(request{method: "PATCH", path: "/v1/admin/clients/" + id, key: key, body: body})
	}
	current := created
	address := []string{"Hauptstraße 1", "Hinterhaus", "Berlin", "10115", "DE"}

	steps := []struct {
		name    string
		body    any
		change  func(c *admClient)
		address []string
	}{
		{"rename: the slug stays", map[string]any{"name": "  Renamed Kunde  "}, func(c *admClient) { c.Name = "Renamed Kunde" }, nil},
		{"type", map[string]any{"type": "natural_person"}, func(c *admClient) { c.Type = "natural_person" }, nil},
		{"customId, trimmed", map[string]any{"customId": " K-2 "}, func(c *admClient) { c.CustomID = ptr("K-2") }, nil},
		{"legalName", map[string]any{"legalName": "Kunde AG"}, func(c *admClient) { c.LegalName = ptr("Kunde AG") }, nil},
		{"customId and legalName null clear", map[string]any{"customId": nil, "legalName": nil},
			func(c *admClient) { c.CustomID, c.LegalName = nil, nil }, nil},
		{"one address field leaves the others", map[string]any{"address": map[string]any{"city": " München "}}, nil,
			[]string{"Hauptstraße 1", "Hinterhaus", "München", "10115", "DE"}},
		{"countryCode in lower case is stored in upper case", map[string]any{"address": map[string]any{"line2": nil, "countryCode": " at"}}, nil,
			[]string{"Hauptstraße 1", "<nil>", "München", "10115", "AT"}},
		{"every field at once", map[string]any{"name": "Kunde", "type": "individual_enterprise", "customId": "K-3", "legalName": "Kunde e.K.",
			"address": map[string]any{"line1": "Marktplatz 2", "line2": "2. OG", "city": "Wien", "postalCode": "1010", "countryCode": "de"}},
			func(c *admClient) {
				c.Name, c.Type, c.CustomID, c.LegalName = "Kunde", "individual_enterprise", ptr("K-3"), ptr("Kunde e.K.")
			}, []string{"Marktplatz 2", "2. OG", "Wien", "1010", "DE"}},
		{"null clears every address field", map[string]any{"address": map[string]any{"line1": nil, "line2": nil, "city": nil,
			"postalCode": nil, "countryCode": nil}}, nil, []string{"<nil>", "<nil>", "<nil>", "<nil>", "<nil>"}},
		{"vatIds, written as people do, stored as the standard writes them", map[string]any{"vatIds": []any{"de 811.223-344", "ATU12345678", "DE811223344"}},
			func(c *admClient) { c.VATIDs = []string{"DE811223344", "ATU12345678"} }, nil},
		{"vatIds empty clears them", map[string]any{"vatIds": []any{}}, func(c *admClient) { c.VATIDs = []string{} }, nil},
		{"an empty address changes nothing", map[string]any{"address": map[string]any{}}, nil, nil},
		{"an empty body only touches updatedAt", map[string]any{}, nil, nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			api.clock.Advance(time.Minute)
			res := patch(api.accountantKey, created.ID, s.body)
			got := admDecodeClient(t, res, http.StatusOK)
			want := current
			if s.change != nil {
				s.change(&want)
			}
			want.UpdatedAt = apiTime(api.clock.Now())
			if !reflect.DeepEqual(got, want) {
				t.Errorf("client: got %+v, want %+v", got, want)
			}
			if got.Slug != "kunde" || got.CreatedAt != created.CreatedAt {
				t.Errorf("slug and createdAt: got %s %s, want kunde %s", got.Slug, got.CreatedAt, created.CreatedAt)
			}
			if strings.Contains(string(res.body), "address") {
				t.Errorf("answer %s shows the address", res.body)
			}
			if s.address != nil {
				address = s.address
			}
			if a := admStrs(api.admAddress(t, created.ID)); !reflect.DeepEqual(a, address) {
				t.Errorf("stored address: got %v, want %v", a, address)
			}
			current = got
			read := admDecodeClient(t, api.do(request{method: "GET", path: "/v1/admin/clients/" + created.ID, key: api.accountantKey}), http.StatusOK)
			if !reflect.DeepEqual(read, got) {
				t.Errorf("GET after PATCH: got %+v, want %+v", read, got)
			}
		})
	}

	t.Run("validation: nothing changes", func(t *testing.T) {
		cases := []struct {
			name string
			id   string
			body any
			want []issue
		}{
			{"name null", created.ID, map[string]any{"name": nil}, []issue{typeIssueAt("string", "null", "name")}},
			{"type null", created.ID, map[string]any{"type": nil}, []issue{cuEnumType(admClientTypes, "null", "type")}},
			{"blank name", created.ID, map[string]any{"name": " "}, []issue{cuTooSmall(1, "name")}},
			{"unknown type", created.ID, map[string]any{"type": "company"}, []issue{cuEnumValue(admClientTypes, "company", "type")}},
			{"empty customId", created.ID, map[string]any{"customId": ""}, []issue{cuTooSmall(1, "customId")}},
			{"legalName a number", created.ID, map[string]any{"legalName": 1}, []issue{typeIssueAt("string", "number", "legalName")}},
			{"unassigned country code", created.ID, map[string]any{"address": map[string]any{"countryCode": "XX"}}, []issue{admCountryIssue()}},
			{"three-letter country code", created.ID, map[string]any{"address": map[string]any{"countryCode": "DEU"}}, []issue{admCountryIssue()}},
			{"one-letter country code", created.ID, map[string]any{"address": map[string]any{"countryCode": "D"}}, []issue{admCountryIssue()}},
			{"digits as country code", created.ID, map[string]any{"address": map[string]any{"countryCode": "49"}}, []issue{admCountryIssue()}},
			{"empty country code", created.ID, map[string]any{"address": map[string]any{"countryCode": ""}}, []issue{admCountryIssue()}},
			{"country code a number", created.ID, map[string]any{"address": map[string]any{"countryCode": 49}},
				[]issue{typeIssueAt("string", "number", "address", "countryCode")}},
			{"address null", created.ID, map[string]any{"address": nil}, []issue{typeIssueAt("object", "null", "address")}},
			{"a VAT id without its country", created.ID, map[string]any{"vatIds": []any{"DE811223344", "811223344"}},
				[]issue{{Code: "invalid_string", Path: []any{"vatIds", 1}, Validation: "regex",
					Message: "Invalid VAT id: a country's two letters, then 2 to 13 letters and digits"}}},
			{"vatIds a string", created.ID, map[string]any{"vatIds": "DE811223344"}, []issue{typeIssueAt("array", "string", "vatIds")}},
			{"bad id, bad name and bad country, all at once", "nope", map[string]any{"name": "", "address": map[string]any{"countryCode": "XX"}},
				[]issue{cuidIssue("params", "id"), cuTooSmall(1, "name"), admCountryIssue()}},
		}
		before := admDecodeClient(t, api.do(request{method: "GET", path: "/v1/admin/clients/" + created.ID, key: api.accountantKey}), http.StatusOK)
		beforeAddress := admStrs(api.admAddress(t, created.ID))
		api.clock.Advance(time.Minute)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantIssues(t, patch(api.accountantKey, c.id, c.body), "ValidationError", c.want)
			})
		}
		after := admDecodeClient(t, api.do(request{method: "GET", path: "/v1/admin/clients/" + created.ID, key: api.accountantKey}), http.StatusOK)
		if !reflect.DeepEqual(after, before) {
			t.Errorf("client after the 422s: got %+v, want %+v", after, before)
		}
		if a := admStrs(api.admAddress(t, created.ID)); !reflect.DeepEqual(a, beforeAddress) {
			t.Errorf("address after the 422s: got %v, want %v", a, beforeAddress)
		}
	})

	t.Run("another firm's client is not found, as an unknown one", func(t *testing.T) {
		unknown := patch(api.accountantKey, admMissingClientID, map[string]any{"name": "Hijacked"})
		wantError(t, unknown, http.StatusNotFound, "not_found", "not_found", "client "+admMissingClientID+" not found")
		sameBodyButID(t, patch(api.other.accountantKey, created.ID, map[string]any{"name": "Hijacked"}), created.ID, unknown, admMissingClientID)
		sameBodyButID(t, patch(api.accountantKey, api.other.client.ID, map[string]any{"name": "Hijacked"}), api.other.client.ID, unknown, admMissingClientID)
		if n := api.cuCount(t, `SELECT count(*) FROM clients WHERE name = 'Hijacked'`); n != 0 {
			t.Errorf("clients renamed across firms: got %d, want 0", n)
		}
	})
}

// ---- access ---------------------------------------------------------------

func TestAdminEndpointsAccess(t *testing.T) {
	api := newTestAPI(t)
	acct := api.admInviteUser(t, api.accountantKey, map[string]any{"email": "acct@example.com", "role": "admin"})
	endpoints := []struct {
		method, path string
		body         any
		perm         auth.Permission
	}{
		{"POST", "/v1/admin/clients", map[string]any{"name": "By a client key", "type": "legal_person"}, auth.ClientsWrite},
		{"GET", "/v1/admin/clients", nil, auth.ClientsRead},
		{"GET", "/v1/admin/clients/" + api.client.ID, nil, auth.ClientsRead},
		{"PATCH", "/v1/admin/clients/" + api.client.ID, map[string]any{"name": "Renamed by a client key"}, auth.ClientsWrite},
		{"GET", "/v1/admin/users", nil, auth.AccountantUsersRead},
		{"POST", "/v1/admin/users", map[string]any{"email": "by.client.key@example.com", "role": "admin"}, auth.AccountantUsersWrite},
		{"GET", "/v1/admin/users/" + acct.ID, nil, auth.AccountantUsersRead},
		{"PATCH", "/v1/admin/users/" + acct.ID, map[string]any{"role": "user"}, auth.AccountantUsersWrite},
	}
	// An accountant key holding every permission but the one each endpoint needs.
	without := func(p auth.Permission) string {
		var perms []string
		for _, q := range auth.PermissionsFor(auth.Accountant) {
			if q != p {
				perms = append(perms, string(q))
			}
		}
		return api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: perms})
	}
	for _, e := range endpoints {
		t.Run(e.method+" "+e.path, func(t *testing.T) {
			message := "this API key lacks the permission " + string(e.perm)
			for _, key := range []string{api.clientKey, api.otherClientClientKey, api.other.clientKey} {
				res := api.do(request{method: e.method, path: e.path, key: key, body: e.body})
				wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", message)
				// With an x-client-id naming the key's own client, too.
				res = api.do(request{method: e.method, path: e.path, key: key, clientID: api.client.ID, body: e.body})
				wantError(t, res, http.StatusForbidden, "auth_error", "missing_scope", message)
			}
			wantError(t, api.do(request{method: e.method, path: e.path, key: without(e.perm), body: e.body}),
				http.StatusForbidden, "auth_error", "missing_scope", message)
			wantError(t, api.do(request{method: e.method, path: e.path, body: e.body}),
				http.StatusUnauthorized, "auth_error", "unauthorized", "")
			wantError(t, api.do(request{method: e.method, path: e.path, key: "ak_nope_" + strings.Repeat("0", 64), body: e.body}),
				http.StatusUnauthorized, "auth_error", "unauthorized", "")
		})
	}
	t.Run("nothing changed", func(t *testing.T) {
		if n := api.cuCount(t, `SELECT count(*) FROM clients WHERE name LIKE '%client key%'`); n != 0 {
			t.Errorf("clients written by refused calls: got %d, want 0", n)
		}
		if n := api.cuCount(t, `SELECT count(*) FROM users WHERE email = 'by.client.key@example.com'`); n != 0 {
			t.Errorf("users written by refused calls: got %d, want 0", n)
		}
		got := admDecodeUser(t, api.do(request{method: "GET", path: "/v1/admin/users/" + acct.ID, key: api.accountantKey}), http.StatusOK)
		if !reflect.DeepEqual(got, acct) {
			t.Errorf("accountant user after refused calls: got %+v, want %+v", got, acct)
		}
	})
}

// ---- accountant users ------------------------------------------------------

func TestAdminUsersInvite(t *testing.T) {
	api := newTestAPI(t)
	ctx := context.Background()
	roles := api.admBuiltinRoles(t, api.firm.ID)
	senior := api.admCreateRole(t, api.firm.ID, "Senior accountant")
	otherFirmRole := api.admCreateRole(t, api.other.firm.ID, "Partner")
	now := apiTime(api.clock.Now())
	post := func(key string, body any) *response {
		return api.do(request{method: "POST", path: "/v1/admin/users", key: key, body: body})
	}
	users := func(t *testing.T) int {
		t.Helper()
		return api.cuCount(t, `SELECT count(*) FROM users`)
	}

	var admin admUser
	t.Run("role admin", func(t *testing.T) {
		res := post(api.accountantKey, map[string]any{"email": "  Anna.Admin@Example.COM ", "role": "admin"})
		admin = admDecodeUser(t, res, http.StatusCreated)
		if got := cuKeys(t, takeMailed(t, res.body)); !reflect.DeepEqual(got, admUserFields) {
			t.Errorf("fields: got %v, want %v", got, admUserFields)
		}
		if !strings.Contains(string(res.body), `"customName":null`) {
			t.Errorf("answer %s lacks customName null", res.body)
		}
		want := admUser{ID: admin.ID, CreatedAt: now, Email: "anna.admin@example.com",
			Roles: []admRole{{ID: roles["admin"], Name: "admin", CustomName: nil}}}
		if !reflect.DeepEqual(admin, want) {
			t.Errorf("user: got %+v, want %+v", admin, want)
		}
		if !generatedID.MatchString(admin.ID) {
			t.Errorf("id: got %q, want a generated cuid", admin.ID)
		}
		row := api.sqlColumn(t, `SELECT firm_id || ' ' || coalesce(client_id, 'NULL') || ' ' || role_id || ' ' || coalesce(client_role, 'NULL')
			|| ' ' || invited_at FROM users WHERE id = ?`, admin.ID)
		wantRow := api.firm.ID + " NULL " + roles["admin"] + " NULL " + strconv.FormatInt(api.clock.Now().Unix(), 10)
		if !reflect.DeepEqual(row, []string{wantRow}) {
			t.Errorf("stored user: got %v, want [%s]", row, wantRow)
		}
	})

	t.Run("role user, with names", func(t *testing.T) {
		res := post(api.accountantKey, map[string]any{"email": "bob@example.com", "role": "user", "firstName": " Bob ", "lastName": "Berg"})
		got := admDecodeUser(t, res, http.StatusCreated)
		if keys := cuKeys(t, takeMailed(t, res.body)); !reflect.DeepEqual(keys, admNamedUserFields) {
			t.Errorf("fields: got %v, want %v", keys, admNamedUserFields)
		}
		want := admUser{ID: got.ID, CreatedAt: now, Email: "bob@example.com", FirstName: ptr("Bob"), LastName: ptr("Berg"),
			Roles: []admRole{{ID: roles["user"], Name: "user"}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("user: got %+v, want %+v", got, want)
		}
	})

	t.Run("a custom role by its id, in any case", func(t *testing.T) {
		got := api.admInviteUser(t, api.accountantKey, map[string]any{"email": "carl@example.com", "role": strings.ToUpper(senior.ID)})
		want := []admRole{{ID: senior.ID, Name: "custom", CustomName: ptr("Senior accountant")}}
		if !reflect.DeepEqual(got.Roles, want) {
			t.Errorf("roles: got %+v, want %+v", got.Roles, want)
		}
	})

	t.Run("a built-in role by its id", func(t *testing.T) {
		got := api.admInviteUser(t, api.accountantKey, map[string]any{"email": "dora@example.com", "role": roles["user"]})
		if want := []admRole{{ID: roles["user"], Name: "user"}}; !reflect.DeepEqual(got.Roles, want) {
			t.Errorf("roles: got %+v, want %+v", got.Roles, want)
		}
	})

	t.Run("the same email in another firm, or as a client user", func(t *testing.T) {
		other := api.admInviteUser(t, api.other.accountantKey, map[string]any{"email": "anna.admin@example.com", "role": "admin"})
		otherRoles := api.admBuiltinRoles(t, api.other.firm.ID)
		if other.ID == admin.ID || !reflect.DeepEqual(other.Roles, []admRole{{ID: otherRoles["admin"], Name: "admin"}}) {
			t.Errorf("firm two's user: got %+v, want a new user with firm two's admin role %s", other, otherRoles["admin"])
		}
		api.cuInvite(t, api.accountantKey, api.client.ID, map[string]any{"email": "anna.admin@example.com", "role": "admin"})
	})

	t.Run("the same email twice in the firm is a conflict", func(t *testing.T) {
		before := users(t)
		for _, body := range []map[string]any{
			{"email": "anna.admin@example.com", "role": "user"},
			{"email": " ANNA.ADMIN@example.com ", "role": senior.ID},
		} {
			wantError(t, post(api.accountantKey, body), http.StatusConflict, "conflict", "conflict",
				"the firm has a user with the email anna.admin@example.com")
		}
		if after := users(t); after != before {
			t.Errorf("users after the conflicts: got %d, want %d", after, before)
		}
	})

	t.Run("a role id that is not the firm's is not found", func(t *testing.T) {
		before := users(t)
		unknown := post(api.accountantKey, map[string]any{"email": "eve@example.com", "role": admMissingRoleID})
		wantError(t, unknown, http.StatusNotFound, "not_found", "not_found", "role "+admMissingRoleID+" not found")
		otherBuiltin := api.admBuiltinRoles(t, api.other.firm.ID)["admin"]
		for _, id := range []string{otherFirmRole.ID, otherBuiltin, api.client.ID, admin.ID} {
			sameBodyButID(t, post(api.accountantKey, map[string]any{"email": "eve@example.com", "role": id}), id, unknown, admMissingRoleID)
		}
		if after := users(t); after != before {
			t.Errorf("users after the 404s: got %d, want %d", after, before)
		}
		// The other firm uses its own custom role.
		got := api.admInviteUser(t, api.other.accountantKey, map[string]any{"email": "eve@example.com", "role": otherFirmRole.ID})
		if want := []admRole{{ID: otherFirmRole.ID, Name: "custom", CustomName: ptr("Partner")}}; !reflect.DeepEqual(got.Roles, want) {
			t.Errorf("firm two's custom role: got %+v, want %+v", got.Roles, want)
		}
	})

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			name string
			body any
			want []issue
		}{
			{"missing email and role", map[string]any{}, []issue{requiredIssue("email"), requiredIssue("role")}},
			{"role a number", map[string]any{"email": "f@example.com", "role": 5}, []issue{admRoleUnionType("number")}},
			{"role a boolean", map[string]any{"email": "f@example.com", "role": true}, []issue{admRoleUnionType("boolean")}},
			{"role an object", map[string]any{"email": "f@example.com", "role": map[string]any{"id": senior.ID}}, []issue{admRoleUnionType("object")}},
			{"role owner", map[string]any{"email": "f@example.com", "role": "owner"}, []issue{admRoleUnion("owner")}},
			{"role with a hyphen", map[string]any{"email": "f@example.com", "role": "cxyz-bad"}, []issue{admRoleUnion("cxyz-bad")}},
			{"role Admin", map[string]any{"email": "f@example.com", "role": "Admin"}, []issue{admRoleUnion("Admin")}},
			{"role custom", map[string]any{"email": "f@example.com", "role": "custom"}, []issue{admRoleUnion("custom")}},
			{"role empty", map[string]any{"email": "f@example.com", "role": ""}, []issue{admRoleUnion("")}},
			{"bad email and bad role", map[string]any{"email": "f@", "role": "owner"}, []issue{cuEmailIssue("email"), admRoleUnion("owner")}},
			{"names", map[string]any{"email": "f@example.com", "role": "user", "firstName": "", "lastName": strings.Repeat("x", 101)},
				[]issue{cuTooSmall(1, "firstName"), cuTooBig(100, "lastName")}},
			{"not an object", "[]", []issue{typeIssueAt("object", "array")}},
		}
		before := users(t)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				wantIssues(t, post(api.accountantKey, c.body), "ZodError", c.want)
			})
		}
		if after := users(t); after != before {
			t.Errorf("users after the 422s: got %d, want %d", after, before)
		}
	})

	t.Run("the role of a stored user is read back", func(t *testing.T) {
		u, err := api.store.FindAccountantUser(ctx, api.firm.ID, admin.ID)
		if err != nil || u.Role == nil || u.Role.ID != roles["admin"] {
			t.Errorf("FindAccountantUser: got %+v, %v", u, err)
		}
	})
}

// TestAdminUsersRoleNullIsInvalidUnion: a null role is not "admin", "user"
// or a cuid, so it is one invalid_union issue, like a number.
func TestAdminUsersRoleNullIsInvalidUnion(t *testing.T) {
	api := newTestAPI(t)
	acct := api.admInviteUser(t, api.accountantKey, map[string]any{"email": "acct@example.com", "role": "admin"})
	want := []issue{admRoleUnionType("null")}
	res := api.do(request{method: "POST", path: "/v1/admin/users", key: api.accountantKey, body: map[string]any{"email": "g@example.com", "role": nil}})
	wantIssues(t, res, "ZodError", want)
	res = api.do(request{method: "PATCH", path: "/v1/admin/users/" + acct.ID, key: api.accountantKey, body: map[string]any{"role": nil}})
	wantIssues(t, res, "ZodError", want)
}

func TestAdminUsersGetAndUpdate(t *testing.T) {
	api := newTestAPI(t)
	roles := api.admBuiltinRoles(t, api.firm.ID)
	senior := api.admCreateRole(t, api.firm.ID, "Senior accountant")
	otherFirmRole := api.admCreateRole(t, api.other.firm.ID, "Partner")
	user := api.admInviteUser(t, api.accountantKey, map[string]any{"email": "anna@example.com", "role": "user", "firstName": "Anna", "lastName": "Alt"})
	plain := api.admInviteUser(t, api.accountantKey, map[string]any{"email": "plain@example.com", "role": "admin"})
	otherFirmUser := api.admInviteUser(t, api.other.accountantKey, map[string]any{"email": "other@example.com", "role": "admin"})
	clientUser := api.cuInvite(t, api.accountantKey, api.client.ID, map[string]any{"email": "client.user@example.com", "role": "admin"})
	get := func(key, id string) *response {
		return api.do(request{method: "GET", path: "/v1/admin/users/" + id, key: key})
	}
	patch := func(key, id string, body any) *response {
		return api.do(request{method: "PATCH", path: "/v1/admin/users/" + id, key: key, body: body})
	}
	stored := func(t *testing.T, id string) string {
		t.Helper()
		got := api.sqlColumn(t, `SELECT coalesce(role_id, 'NULL') || ' ' || updated_at FROM users WHERE id = ?`, id)
		if len(got) != 1 {
			t.Fatalf("user %s: %d rows", id, len(got))
		}
		return got[0]
	}

	t.Run("GET answers the user as invited", func(t *testing.T) {
		for _, u := range []admUser{user, plain} {
			if got := admDecodeUser(t, get(api.accountantKey, strings.ToUpper(u.ID)), http.StatusOK); !reflect.DeepEqual(got, u) {
				t.Errorf("GET %s: got %+v, want %+v", u.ID, got, u)
			}
		}
	})

	t.Run("GET of anything but the firm's accountant user is not found", func(t *testing.T) {
		unknown := get(api.accountantKey, admMissingUserID)
		wantError(t, unknown, http.StatusNotFound, "not_found", "not_found", "user "+admMissingUserID+" not found")
		sameBodyButID(t, get(api.accountantKey, clientUser.ID), clientUser.ID, unknown, admMissingUserID)
		sameBodyButID(t, get(api.accountantKey, otherFirmUser.ID), otherFirmUser.ID, unknown, admMissingUserID)
		sameBodyButID(t, get(api.other.accountantKey, user.ID), user.ID, unknown, admMissingUserID)
		wantIssues(t, get(api.accountantKey, "nope"), "ZodError", []issue{cuidIssue("params", "id")})
	})

	steps := []struct {
		name string
		role string
		want admRole
	}{
		{"to a custom role", senior.ID, admRole{ID: senior.ID, Name: "custom", CustomName: ptr("Senior accountant")}},
		{"to admin", "admin", admRole{ID: roles["admin"], Name: "admin"}},
		{"to user by its id, upper case", strings.ToUpper(roles["user"]), admRole{ID: roles["user"], Name: "user"}},
		{"to the same role", "user", admRole{ID: roles["user"], Name: "user"}},
	}
	for _, s := range steps {
		t.Run("PATCH "+s.name, func(t *testing.T) {
			api.clock.Advance(time.Minute)
			got := admDecodeUser(t, patch(api.accountantKey, user.ID, map[string]any{"role": s.role}), http.StatusOK)
			want := user
			want.Roles = []admRole{s.want}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("user: got %+v, want %+v", got, want)
			}
			if st, w := stored(t, user.ID), s.want.ID+" "+strconv.FormatInt(api.clock.Now().Unix(), 10); st != w {
				t.Errorf("stored role and updated_at: got %s, want %s", st, w)
			}
			if read := admDecodeUser(t, get(api.accountantKey, user.ID), http.StatusOK); !reflect.DeepEqual(read, got) {
				t.Errorf("GET after PATCH: got %+v, want %+v", read, got)
			}
		})
	}

	t.Run("PATCH refused", func(t *testing.T) {
		before := stored(t, user.ID)
		api.clock.Advance(time.Minute)
		cases := []struct {
			name  string
			res   *response
			check func(*testing.T, *response)
		}{
			{"role absent", patch(api.accountantKey, user.ID, map[string]any{}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ZodError", []issue{requiredIssue("role")})
			}},
			{"role owner", patch(api.accountantKey, user.ID, map[string]any{"role": "owner"}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ZodError", []issue{admRoleUnion("owner")})
			}},
			{"role 5", patch(api.accountantKey, user.ID, map[string]any{"role": 5}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ZodError", []issue{admRoleUnionType("number")})
			}},
			{"role cxyz-bad", patch(api.accountantKey, user.ID, map[string]any{"role": "cxyz-bad"}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ZodError", []issue{admRoleUnion("cxyz-bad")})
			}},
			{"bad id and no role", patch(api.accountantKey, "nope", map[string]any{}), func(t *testing.T, res *response) {
				wantIssues(t, res, "ZodError", []issue{cuidIssue("params", "id"), requiredIssue("role")})
			}},
			{"another firm's custom role", patch(api.accountantKey, user.ID, map[string]any{"role": otherFirmRole.ID}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "role "+otherFirmRole.ID+" not found")
			}},
			{"an unknown role", patch(api.accountantKey, user.ID, map[string]any{"role": admMissingRoleID}), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", "role "+admMissingRoleID+" not found")
			}},
			{"malformed JSON", patch(api.accountantKey, user.ID, `{"role":`), func(t *testing.T, res *response) {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_json", "")
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { c.check(t, c.res) })
		}
		if after := stored(t, user.ID); after != before {
			t.Errorf("stored role and updated_at: got %s, want %s (unchanged)", after, before)
		}
	})

	t.Run("PATCH of anything but the firm's accountant user is not found", func(t *testing.T) {
		unknown := patch(api.accountantKey, admMissingUserID, map[string]any{"role": "admin"})
		wantError(t, unknown, http.StatusNotFound, "not_found", "not_found", "user "+admMissingUserID+" not found")
		beforeOther, beforePlain := stored(t, otherFirmUser.ID), stored(t, plain.ID)
		sameBodyButID(t, patch(api.accountantKey, clientUser.ID, map[string]any{"role": "admin"}), clientUser.ID, unknown, admMissingUserID)
		sameBodyButID(t, patch(api.accountantKey, otherFirmUser.ID, map[string]any{"role": "user"}), otherFirmUser.ID, unknown, admMissingUserID)
		sameBodyButID(t, patch(api.other.accountantKey, plain.ID, map[string]any{"role": "user"}), plain.ID, unknown, admMissingUserID)
		if got := api.sqlColumn(t, `SELECT coalesce(role_id, 'NULL') || ' ' || client_role FROM users WHERE id = ?`, clientUser.ID); !reflect.DeepEqual(got, []string{"NULL admin"}) {
			t.Errorf("client user: got %v, want [NULL admin] (unchanged)", got)
		}
		if stored(t, otherFirmUser.ID) != beforeOther || stored(t, plain.ID) != beforePlain {
			t.Errorf("users of the other firm's calls changed")
		}
	})
}

// admSortUser is an accountant user with what the sorts order it by.
type admSortUser struct {
	admUser
	updatedAt int64
}

func admCompareUsers(sortKey string, desc bool, a, b admSortUser) int {
	dir := 1
	if desc {
		dir = -1
	}
	var c int
	switch sortKey {
	case "createdAt":
		c = strings.Compare(a.CreatedAt, b.CreatedAt)
	case "updatedAt":
		c = int(a.updatedAt - b.updatedAt)
	case "email":
		c = strings.Compare(a.Email, b.Email)
	case "firstName", "lastName":
		x, y := a.FirstName, b.FirstName
		if sortKey == "lastName" {
			x, y = a.LastName, b.LastName
		}
		// Users without the name come last in both orders.
		switch {
		case x == nil && y != nil:
			return 1
		case x != nil && y == nil:
			return -1
		case x != nil && y != nil:
			c = strings.Compare(admASCIILower(*x), admASCIILower(*y))
		}
	}
	if c == 0 {
		c = strings.Compare(a.ID, b.ID)
	}
	return c * dir
}

func admUserLabels(us []admUser) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Email + "(" + deref(u.FirstName) + " " + deref(u.LastName) + ")"
	}
	return out
}

func TestAdminUsersList(t *testing.T) {
	api := newTestAPI(t)
	senior := api.admCreateRole(t, api.firm.ID, "Senior accountant")
	// Twelve users created in the same second (ties broken by id), with
	// names in mixed case, shared in all but case, prefixes of each other,
	// and missing.
	specs := []struct {
		email, first, last, role string
	}{
		{"Zed@Example.com", "anna", "Zeta", "admin"},
		{"yan@example.com", "Anna", "zeta", "user"},
		{"xia@example.com", "ANNA", "", senior.ID},
		{"will@example.com", "bob", "Young", "user"},
		{"vic@example.com", "", "Xavier", "admin"},
		{"uma@example.com", "", "", "user"},
		{"tom@example.com", "b", "y", "user"},
		{"sam@example.com", "carl", "adams", senior.ID},
		{"ray@example.com", "Carl", "Adams", "admin"},
		{"quinn@example.com", "", "", "admin"},
		{"paul@example.com", "dora", "ADAMS", "user"},
		{"otto@example.com", "Zoë", "", "user"},
	}
	var users []admUser
	for _, s := range specs {
		body := map[string]any{"email": s.email, "role": s.role}
		if s.first != "" {
			body["firstName"] = s.first
		}
		if s.last != "" {
			body["lastName"] = s.last
		}
		users = append(users, api.admInviteUser(t, api.accountantKey, body))
	}
	// Role changes move updatedAt for some.
	for i, k := range []int{2, 6, 10, 4} {
		api.clock.Advance(time.Duration(1+i%2) * time.Minute)
		admDecodeUser(t, api.do(request{method: "PATCH", path: "/v1/admin/users/" + users[k].ID, key: api.accountantKey,
			body: map[string]any{"role": "admin"}}), http.StatusOK)
	}
	// Neither client users of the firm nor the other firm's users are listed.
	api.cuInvite(t, api.accountantKey, api.client.ID, map[string]any{"email": "client.user@example.com", "role": "admin", "firstName": "Aaron"})
	otherFirmUser := api.admInviteUser(t, api.other.accountantKey, map[string]any{"email": "aaa@example.com", "role": "admin", "firstName": "Aaron"})

	all := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "limit=100")
	if all.Pagination.Total != 12 || len(all.Data) != 12 {
		t.Fatalf("accountant users: got %d (total %d), want 12", len(all.Data), all.Pagination.Total)
	}
	var model []admSortUser
	for _, u := range all.Data {
		got := api.sqlColumn(t, `SELECT updated_at FROM users WHERE id = ?`, u.ID)
		updated, _ := strconv.ParseInt(got[0], 10, 64)
		model = append(model, admSortUser{admUser: u, updatedAt: updated})
	}
	byID := map[string]admUser{}
	for _, u := range all.Data {
		byID[u.ID] = u
	}
	for _, u := range users {
		if _, ok := byID[u.ID]; !ok {
			t.Errorf("user %s is not listed", u.Email)
		}
	}
	if byID[users[2].ID].Roles[0].Name != "admin" || byID[users[0].ID].Roles[0].ID != api.admBuiltinRoles(t, api.firm.ID)["admin"] {
		t.Errorf("listed roles: got %+v and %+v", byID[users[2].ID].Roles, byID[users[0].ID].Roles)
	}
	if r := byID[users[7].ID].Roles; !reflect.DeepEqual(r, []admRole{{ID: senior.ID, Name: "custom", CustomName: ptr("Senior accountant")}}) {
		t.Errorf("listed custom role: got %+v", r)
	}

	for _, sortKey := range admUserSorts {
		for _, order := range []string{"asc", "desc"} {
			query := "sort=" + sortKey + "&order=" + order
			t.Run(query, func(t *testing.T) {
				sorted := slices.Clone(model)
				slices.SortFunc(sorted, func(a, b admSortUser) int { return admCompareUsers(sortKey, order == "desc", a, b) })
				want := make([]admUser, len(sorted))
				for i, u := range sorted {
					want[i] = u.admUser
				}
				got := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", query+"&limit=100")
				if !reflect.DeepEqual(got.Data, want) {
					t.Errorf("got  %v\nwant %v", admUserLabels(got.Data), admUserLabels(want))
				}
				for _, limit := range []int{5, 4, 1} {
					walked := admWalk(t, api, api.accountantKey, "/v1/admin/users", query, limit, func(u admUser) string { return u.ID })
					if !reflect.DeepEqual(walked, want) {
						t.Errorf("walked by %d:\n got  %v\nwant %v", limit, admUserLabels(walked), admUserLabels(want))
					}
				}
			})
		}
	}

	t.Run("missing names come last in both orders", func(t *testing.T) {
		for _, sortKey := range []string{"firstName", "lastName"} {
			name := func(u admUser) *string {
				if sortKey == "firstName" {
					return u.FirstName
				}
				return u.LastName
			}
			missing := 0
			for _, u := range all.Data {
				if name(u) == nil {
					missing++
				}
			}
			if missing < 3 {
				t.Fatalf("%s: %d users without it, want at least 3", sortKey, missing)
			}
			for _, order := range []string{"asc", "desc"} {
				got := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "limit=100&sort="+sortKey+"&order="+order).Data
				for i, u := range got {
					if (name(u) == nil) != (i >= len(got)-missing) {
						t.Errorf("sort %s order %s: got %v, want the %d users without it last", sortKey, order, admUserLabels(got), missing)
						break
					}
				}
			}
		}
		got := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "sort=firstName&order=desc&limit=1").Data
		if deref(got[0].FirstName) != "Zoë" {
			t.Errorf("first name, descending: first is %s, want Zoë", deref(got[0].FirstName))
		}
		got = admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "sort=lastName&order=asc&limit=3").Data
		for _, u := range got {
			if admASCIILower(deref(u.LastName)) != "adams" {
				t.Errorf("last name, ascending: got %v, want the three Adams first", admUserLabels(got))
				break
			}
		}
	})

	t.Run("defaults: newest first, 20 a page", func(t *testing.T) {
		got := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "")
		want := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "sort=createdAt&order=desc&limit=20")
		if !reflect.DeepEqual(got, want) || got.Pagination.Limit != 20 {
			t.Errorf("defaults: got %v %+v, want %v", admUserLabels(got.Data), got.Pagination, admUserLabels(want.Data))
		}
	})

	t.Run("a cursor in the middle, under another sort", func(t *testing.T) {
		byEmail := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "sort=email&order=asc&limit=100").Data
		page := admList[admUser](t, api, api.accountantKey, "/v1/admin/users", "sort=email&order=asc&limit=3&cursor="+byEmail[5].ID)
		if !reflect.DeepEqual(page.Data, byEmail[5:8]) || deref(page.Pagination.NextCursor) != byEmail[8].ID ||
			deref(page.Pagination.PreviousCursor) != byEmail[2].ID {
			t.Errorf("page at %s: got %v next %s previous %s", byEmail[5].Email, admUserLabels(page.Data),
				deref(page.Pagination.NextCursor), deref(page.Pagination.PreviousCursor))
		}
	})

	t.Run("the other firm sees its own users only", func(t *testing.T) {
		got := admList[admUser](t, api, api.other.accountantKey, "/v1/admin/users", "limit=100")
		if len(got.Data) != 1 || got.Data[0].ID != otherFirmUser.ID || got.Pagination.Total != 1 {
			t.Errorf("firm two's users: got %v (total %d), want only %s", admUserLabels(got.Data), got.Pagination.Total, otherFirmUser.Email)
		}
	})

	t.Run("a cursor that is no accountant user of the firm", func(t *testing.T) {
		clientUserID := api.sqlColumn(t, `SELECT id FROM users WHERE email = 'client.user@example.com'`)[0]
		for _, cursor := range []string{clientUserID, otherFirmUser.ID, admMissingUserID} {
			res := api.do(request{method: "GET", path: "/v1/admin/users?cursor=" + cursor, key: api.accountantKey})
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_cursor", "the cursor names no item of this list")
		}
	})

	t.Run("validation", func(t *testing.T) {
		res := api.do(request{method: "GET", path: "/v1/admin/users?limit=0&cursor=x&sort=name&order=up", key: api.accountantKey})
		wantIssues(t, res, "ZodError", []issue{admQueryTooSmall(), cuidIssue("query", "cursor"),
			cuEnumValue(admUserSorts, "name", "query", "sort"), cuEnumValue([]string{"asc", "desc"}, "up", "query", "order")})
		res = api.do(request{method: "GET", path: "/v1/admin/users?limit=101", key: api.accountantKey})
		wantIssues(t, res, "ZodError", []issue{{Code: "too_big", Path: []any{"query", "limit"}, Maximum: bound(100), Type: "number",
			Inclusive: &yes, Exact: &no, Message: "Number must be less than or equal to 100"}})
	})
}

// TestAdminClientsCountryCodeNotASCII: letters that strings.ToUpper folds to
// ASCII ("ı" to "I") do not make a country code ("ıe" is not Ireland).
func TestAdminClientsCountryCodeNotASCII(t *testing.T) {
	api := newTestAPI(t)
	for _, code := range []string{"ıe", "ſe"} {
		t.Run(code, func(t *testing.T) {
			res := api.do(request{method: "PATCH", path: "/v1/admin/clients/" + api.client.ID, key: api.accountantKey,
				body: map[string]any{"address": map[string]any{"countryCode": code}}})
			if res.status != http.StatusUnprocessableEntity {
				t.Errorf("countryCode %q: got %d %s, stored %v; want 422 invalid_string at [address countryCode]",
					code, res.status, res.body, admStrs(api.admAddress(t, api.client.ID)))
				return
			}
			wantIssues(t, res, "ValidationError", []issue{admCountryIssue()})
		})
	}
}
