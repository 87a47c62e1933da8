package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/testprog"
)

// openapiTypescript is pinned as the linters are (openapi_test.go).
const openapiTypescript = "openapi-typescript@7.9.1"

// requestSchemas returns the schemas of the document that request bodies
// use, directly or inside one another, by name.
func requestSchemas(t *testing.T) map[string]map[string]any {
	t.Helper()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPISource, &doc); err != nil {
		t.Fatal(err)
	}
	ref := regexp.MustCompile(`"#/components/schemas/([A-Za-z0-9]+)"`)
	found := map[string]map[string]any{}
	var visit func(raw []byte)
	visit = func(raw []byte) {
		for _, m := range ref.FindAllSubmatch(raw, -1) {
			name := string(m[1])
			if found[name] != nil {
				continue
			}
			found[name] = doc.Components.Schemas[name]
			next, _ := json.Marshal(found[name])
			visit(next)
		}
	}
	for _, item := range doc.Paths {
		for _, op := range item {
			var o struct {
				RequestBody json.RawMessage `json:"requestBody"`
			}
			if json.Unmarshal(op, &o) == nil && o.RequestBody != nil {
				visit(o.RequestBody)
			}
		}
	}
	return found
}

// TestRequestFieldsHaveNoDefault: openapi-typescript 7 (defaultNonNullable,
// on by default) makes a field with a default required, so a request field
// that may be left out says its default in its description instead.
func TestRequestFieldsHaveNoDefault(t *testing.T) {
	schemas := requestSchemas(t)
	if schemas["CollectSessionCreate"] == nil || schemas["ClientUserInvite"] == nil {
		t.Fatalf("request schemas: %d, without CollectSessionCreate or ClientUserInvite", len(schemas))
	}
	for name, s := range schemas {
		raw, _ := json.Marshal(s)
		if bytes.Contains(raw, []byte(`"default":`)) {
			t.Errorf("request schema %s has a default: %s", name, raw)
		}
	}
}

// TestTypeScriptClientRequestFields generates the TypeScript types of the
// document with openapi-typescript 7, as integrators do, and checks that a
// request field is required in them exactly when the document requires it.
// Without Node.js it skips.
func TestTypeScriptClientRequestFields(t *testing.T) {
	testprog.SkipShort(t, "generates and compiles the TypeScript client with Node.js")
	npx, err := exec.LookPath("npx")
	if err != nil {
		msg := "npx not found: install Node.js and npm (apt-get install nodejs npm) to generate the TypeScript client"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	doc, err := openAPIDocument("http://localhost/v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc, 0o600); err != nil {
		t.Fatal(err)
	}
	// The first run downloads the generator: give it time.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, "-y", openapiTypescript, "openapi.json", "-o", "schema.d.ts")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npx %s: %v\n%s", openapiTypescript, err, out)
	}
	ts, err := os.ReadFile(filepath.Join(dir, "schema.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	generated := tsSchemaFields(ts)
	checked := 0
	for name, s := range requestSchemas(t) {
		props, ok := s["properties"].(map[string]any)
		if !ok {
			continue
		}
		var required []string
		list, _ := s["required"].([]any)
		for _, r := range list {
			required = append(required, r.(string))
		}
		fields := generated[name]
		for prop := range props {
			optional, ok := fields[prop]
			if !ok {
				t.Errorf("%s.%s: not in the generated types", name, prop)
				continue
			}
			if want := !slices.Contains(required, prop); optional != want {
				t.Errorf("%s.%s: optional %v in the generated TypeScript, want %v", name, prop, optional, want)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("checked %d request fields, want the lot", checked)
	}
}

// tsSchemaFields reads the properties of each schema of
// components["schemas"] in openapi-typescript's output, and whether each
// is optional (name?:).
func tsSchemaFields(ts []byte) map[string]map[string]bool {
	schema := regexp.MustCompile(`^        "?([A-Za-z0-9]+)"?: \{$`)
	field := regexp.MustCompile(`^            "?([A-Za-z0-9_]+)"?(\??):`)
	out := map[string]map[string]bool{}
	var current map[string]bool
	inSchemas := false
	sc := bufio.NewScanner(bytes.NewReader(ts))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "    schemas: {":
			inSchemas = true
		case inSchemas && line == "    };":
			return out
		case inSchemas && schema.MatchString(line):
			current = map[string]bool{}
			out[schema.FindStringSubmatch(line)[1]] = current
		case inSchemas && current != nil && field.MatchString(line):
			m := field.FindStringSubmatch(line)
			current[m[1]] = m[2] == "?"
		case strings.HasPrefix(line, "        };"):
			current = nil
		}
	}
	return out
}
