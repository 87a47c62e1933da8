package document

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestFields checks that the names, the struct's JSON and Field agree:
// each name reaches its own member, and the JSON calls it by that name.
func TestFields(t *testing.T) {
	if n := reflect.TypeFor[Fields]().NumField(); n != len(FieldNames) {
		t.Fatalf("Fields has %d members, want the %d of FieldNames", n, len(FieldNames))
	}
	var f Fields
	for _, name := range FieldNames {
		p := f.Field(name)
		if p == nil {
			t.Fatalf("Field(%q): got nil", name)
		}
		*p = "v-" + name
	}
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var byName map[string]string
	if err := json.Unmarshal(raw, &byName); err != nil {
		t.Fatal(err)
	}
	for _, name := range FieldNames {
		if got := byName[name]; got != "v-"+name {
			t.Errorf("JSON %s: got %q, want %q", name, got, "v-"+name)
		}
	}
	if got := f.Values(); !reflect.DeepEqual(got, byName) {
		t.Errorf("Values: got %v, want %v", got, byName)
	}
	if f.Field("total") != nil {
		t.Errorf("Field(total): got a member, want nil")
	}
	types := []string{TypeText, TypeDate, TypeCurrency, TypeAmount, TypeID}
	for _, spec := range FieldSpecs {
		if got, ok := SpecOf(spec.Name); !ok || got != spec || !slices.Contains(types, spec.Type) || spec.Max <= 0 {
			t.Errorf("SpecOf(%q): got %+v, %v, want %+v of a known type", spec.Name, got, ok, spec)
		}
	}
}
