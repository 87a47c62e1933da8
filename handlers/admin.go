package handlers

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// Limits on client fields, documented in the OpenAPI document.
const (
	maxCustomID   = 100
	maxPostalCode = 20
)

type clientResponse struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Slug           string     `json:"slug"`
	Type           string     `json:"type"`
	CustomID       *string    `json:"customId"`
	LegalName      *string    `json:"legalName"`
	VATIDs         []string   `json:"vatIds"`
	ArchivedAt     *timestamp `json:"archivedAt"`
	LedgerClientID *string    `json:"ledgerClientId"`
	CreatedAt      timestamp  `json:"createdAt"`
	UpdatedAt      timestamp  `json:"updatedAt"`
}

func newClientResponse(c *db.Client) clientResponse {
	return clientResponse{
		ID: c.ID, Name: c.Name, Slug: c.Slug, Type: c.Type, CustomID: c.CustomID, LegalName: c.LegalName, VATIDs: c.VATIDs,
		ArchivedAt: timestampPtr(c.ArchivedAt), LedgerClientID: c.LedgerClientID,
		CreatedAt: timestampOf(c.CreatedAt), UpdatedAt: timestampOf(c.UpdatedAt),
	}
}

type roleResponse struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CustomName *string `json:"customName"`
}

// accountantUserResponse is an accountant user as the API answers it.
type accountantUserResponse struct {
	ID        string         `json:"id"`
	CreatedAt timestamp      `json:"createdAt"`
	Email     string         `json:"email"`
	FirstName *string        `json:"firstName,omitempty"`
	LastName  *string        `json:"lastName,omitempty"`
	Roles     []roleResponse `json:"roles"`
}

func newAccountantUserResponse(u *db.AccountantUser) accountantUserResponse {
	return accountantUserResponse{
		ID: u.ID, CreatedAt: timestampOf(u.CreatedAt), Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Roles: []roleResponse{{ID: u.Role.ID, Name: u.Role.Name, CustomName: u.Role.CustomName}},
	}
}

var (
	clientName = stringRule{trim: true, name: true, min: 1, max: maxName}
	customID   = stringRule{presence: nullable, trim: true, min: 1, max: maxCustomID}
	legalName  = stringRule{presence: nullable, trim: true, name: true, min: 1, max: maxName}
	addressRow = stringRule{presence: nullable, trim: true, max: maxName}
	postalCode = stringRule{presence: nullable, trim: true, max: maxPostalCode}
)

// clientFields reads the client fields of a create (p required: name and
// type must be sent) or an update (p optional).
func clientFields(body *object, p presence) db.ClientUpdate {
	name := clientName
	name.presence = p
	u := db.ClientUpdate{
		Name:      update(body.string("name", name)),
		Type:      update(body.enum("type", db.ClientTypes, p)),
		CustomID:  update(body.string("customId", customID)),
		LegalName: update(body.string("legalName", legalName)),
		VATIDs:    update(vatIDs(body)),
	}
	address, ok := body.object("address", optional)
	if !ok {
		return u
	}
	u.Address = db.AddressUpdate{
		Line1:       update(address.string("line1", addressRow)),
		Line2:       update(address.string("line2", addressRow)),
		City:        update(address.string("city", addressRow)),
		PostalCode:  update(address.string("postalCode", postalCode)),
		CountryCode: update(countryCode(address)),
	}
	return u
}

// maxVATIDs bounds a client's VAT ids: one per country it is registered
// in, and its tax number.
const maxVATIDs = 30

// vatIDPattern is a VAT id once spaces, dots and dashes are gone: a
// country's two letters and 2 to 13 letters and digits ("DE123456789",
// "ATU12345678", "FRXX123456789").
var vatIDPattern = regexp.MustCompile(`^[A-Z]{2}[0-9A-Z]{2,13}$`)

// vatIDs reads a client's VAT ids, each in upper case without spaces,
// dots and dashes.
func vatIDs(body *object) field[[]string] {
	return body.stringArray("vatIds", optional, 0, maxVATIDs, func(path []any, s string) (string, bool) {
		id := strings.ToUpper(strings.NewReplacer(" ", "", ".", "", "-", "").Replace(s))
		if !vatIDPattern.MatchString(id) {
			body.v.add(issue{Code: "invalid_string", Path: path, Validation: "regex",
				Message: "Invalid VAT id: a country's two letters, then 2 to 13 letters and digits"})
			return "", false
		}
		return id, true
	})
}

// countryCode reads an ISO 3166-1 alpha-2 country code, in upper case.
func countryCode(address *object) field[string] {
	f := address.string("countryCode", stringRule{presence: nullable, trim: true})
	if !f.Set || f.Null {
		return f
	}
	// Upper-casing first would turn some non-ASCII letters into ASCII ones
	// ("ı" into "I"): the length in bytes keeps those out.
	code := strings.ToUpper(f.Value)
	if len(f.Value) != 2 || !strings.Contains(isoCountryCodes, " "+code+" ") {
		address.v.add(issue{Code: "invalid_string", Path: address.at("countryCode"), Validation: "regex",
			Message: "Invalid ISO 3166-1 alpha-2 country code"})
		return field[string]{}
	}
	f.Value = code
	return f
}

// isoCountryCodes are the officially assigned ISO 3166-1 alpha-2 codes.
const isoCountryCodes = " AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS" +
	" BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET" +
	" FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO" +
	" IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH" +
	" MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM" +
	" PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG" +
	" TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW "

// createClient answers POST /v1/admin/clients.
func (h *Handler) createClient(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var f db.ClientUpdate
	if !h.readBody(w, r, func(body *object) { f = clientFields(body, required) }) {
		return
	}
	a := f.Address
	var vatIDs []string
	if f.VATIDs.Value != nil {
		vatIDs = *f.VATIDs.Value
	}
	c, err := h.store.CreateClient(r.Context(), stateOf(r).principal.FirmID, db.ClientCreate{
		Name: *f.Name.Value, Type: *f.Type.Value, CustomID: f.CustomID.Value, LegalName: f.LegalName.Value, VATIDs: vatIDs,
		Address: db.Address{Line1: a.Line1.Value, Line2: a.Line2.Value, City: a.City.Value,
			PostalCode: a.PostalCode.Value, CountryCode: a.CountryCode.Value},
	})
	respond(h, w, r, http.StatusCreated, c, err, newClientResponse)
}

// listClients answers GET /v1/admin/clients.
func (h *Handler) listClients(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	serveList(h, w, r, firmOf, db.ClientSorts, h.store.ListClients, newClientResponse)
}

// getClient answers GET /v1/admin/clients/{id}.
func (h *Handler) getClient(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, firmOf, h.store.FindClient, newClientResponse)
}

// updateClient answers PATCH /v1/admin/clients/{id}.
func (h *Handler) updateClient(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var u db.ClientUpdate
	id, ok := h.readIDAndBody(w, r, p, func(body *object) { u = clientFields(body, optional) })
	if !ok {
		return
	}
	c, err := h.store.UpdateClient(r.Context(), stateOf(r).principal.FirmID, id, u)
	respond(h, w, r, http.StatusOK, c, err, newClientResponse)
}

// roleField reads a role: "admin", "user" or a custom role's id, as a Zod
// union of an enum and a cuid. Anything else is one invalid_union issue
// holding each alternative's failure.
func roleField(body *object) db.RoleRef {
	raw, null, ok := body.get("role", "string", required|nullable)
	if null {
		raw, ok = json.RawMessage("null"), true
	}
	if !ok {
		return db.RoleRef{}
	}
	path := body.at("role")
	var asName, asID validator
	if kind := jsonKind(raw); kind != "string" {
		asName.add(typeIssue(path, enumExpected(db.ClientRoles), kind))
		asID.add(typeIssue(path, "string", kind))
	} else if s, ok := body.decodeString("role", raw); ok {
		if checkEnum(&asName, path, s, db.ClientRoles) {
			return db.RoleRef{Name: s}
		}
		if id, ok := checkID(&asID, path, s); ok {
			return db.RoleRef{ID: id}
		}
	}
	body.v.add(issue{Code: "invalid_union", Path: path, Message: "Invalid input", UnionErrors: []unionError{
		{Issues: asName.issues, Name: "ZodError"}, {Issues: asID.issues, Name: "ZodError"},
	}})
	return db.RoleRef{}
}

// listAccountantUsers answers GET /v1/admin/users.
func (h *Handler) listAccountantUsers(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	serveList(h, w, r, firmOf, db.AccountantUserSorts, h.store.ListAccountantUsers, newAccountantUserResponse)
}

// invitedAccountantUserResponse is a new accountant user, and whether the
// invitation was queued for mailing.
type invitedAccountantUserResponse struct {
	accountantUserResponse
	Mailed bool `json:"mailed"`
}

// inviteAccountantUser answers POST /v1/admin/users.
func (h *Handler) inviteAccountantUser(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var email, first, last, locale field[string]
	var role db.RoleRef
	if !h.readBody(w, r, func(body *object) {
		email = body.email("email", required)
		role = roleField(body)
		first = body.string("firstName", personName)
		last = body.string("lastName", personName)
		locale = body.enum("locale", mailLocales, optional)
	}) {
		return
	}
	invitation, err := h.invitation(r, locale)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	in := db.AccountantUserInvite{
		Email: email.Value, Role: role, FirstName: valueOrNil(first), LastName: valueOrNil(last), Mail: invitation,
	}
	u, err := h.store.InviteAccountantUser(r.Context(), stateOf(r).principal.FirmID, in)
	respond(h, w, r, http.StatusCreated, u, err, func(u *db.AccountantUser) invitedAccountantUserResponse {
		return invitedAccountantUserResponse{newAccountantUserResponse(u), in.Mail != nil}
	})
}

// getAccountantUser answers GET /v1/admin/users/{id}.
func (h *Handler) getAccountantUser(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, firmOf, h.store.FindAccountantUser, newAccountantUserResponse)
}

// updateAccountantUser answers PATCH /v1/admin/users/{id}.
func (h *Handler) updateAccountantUser(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	var role db.RoleRef
	id, ok := h.readIDAndBody(w, r, p, func(body *object) { role = roleField(body) })
	if !ok {
		return
	}
	u, err := h.store.SetAccountantUserRole(r.Context(), stateOf(r).principal.FirmID, id, role)
	respond(h, w, r, http.StatusOK, u, err, newAccountantUserResponse)
}
