package client_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"acctapi/client"
)

// TestRequestFieldsOptional: in the generated Go client a request field is
// a pointer, left out of the JSON when nil, exactly when the document does
// not require it, so that a caller may leave out what the API does not need.
func TestRequestFieldsOptional(t *testing.T) {
	raw, err := os.ReadFile("../handlers/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required []string `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"CollectSessionCreate": client.CollectSessionCreate{}, "CollectItemCreate": client.CollectItemCreate{},
		"CollectCreate": client.CollectCreate{}, "ClientUserInvite": client.ClientUserInvite{},
		"AccountantUserInvite": client.AccountantUserInvite{}, "FirmUpdate": client.FirmUpdate{},
		"TaskCreate": client.TaskCreate{},
	} {
		required := doc.Components.Schemas[name].Required
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			optional := opts == "omitempty"
			if want := !slices.Contains(required, tag); optional != want {
				t.Errorf("%s.%s: optional %v, want %v", name, f.Name, optional, want)
			}
			if optional && !slices.Contains([]reflect.Kind{reflect.Pointer, reflect.Slice, reflect.Map}, f.Type.Kind()) {
				t.Errorf("%s.%s: optional but a %s, which cannot be left out", name, f.Name, f.Type)
			}
		}
	}
}
