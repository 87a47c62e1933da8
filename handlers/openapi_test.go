package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"acctapi/testprog"
)

// The linters are pinned so that a rule added upstream cannot fail a build
// that changed nothing; npx keeps them in its cache after the first run.
// Redocly stays on 1.x, which runs on Node.js 18 (Debian 12's nodejs, which
// .ci/run installs); 2.x needs 20.19 or later.
const (
	redoclyCLI  = "@redocly/cli@1.34.20"
	spectralCLI = "@stoplight/spectral-cli@6.16.3"
)

// TestOpenAPILint runs Redocly (its recommended rules) and Spectral
// (spectral:oas) on the document as served, and fails on any finding of
// either, warnings and hints included.
func TestOpenAPILint(t *testing.T) {
	testprog.SkipShort(t, "runs the Node.js OpenAPI linters")
	npx, err := exec.LookPath("npx")
	if err != nil {
		msg := "npx not found: install Node.js and npm (apt-get install nodejs npm) to lint openapi.json with Redocly and Spectral"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	api := newTestAPI(t)
	res := api.do(request{method: "GET", path: "/v1/openapi.json"})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), res.body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spectral.yaml"), []byte("extends: [\"spectral:oas\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The first run downloads the linters: give it time.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(t *testing.T, args ...string) (stdout []byte, err error) {
		t.Helper()
		cmd := exec.CommandContext(ctx, npx, args...)
		// The temp dir holds no linter configuration but ours.
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err = cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("npx %s: %v\n%s", strings.Join(args, " "), ctx.Err(), errOut.Bytes())
		}
		if err != nil {
			t.Logf("stderr of npx %s:\n%s", strings.Join(args, " "), errOut.Bytes())
		}
		return out.Bytes(), err
	}

	t.Run("redocly", func(t *testing.T) {
		// Redocly exits 0 on warnings, so its totals are read instead.
		out, err := run(t, "-y", redoclyCLI, "lint", "--extends=recommended", "--format=json", "openapi.json")
		var report struct {
			Totals struct{ Errors, Warnings int } `json:"totals"`
		}
		if jerr := json.Unmarshal(out, &report); jerr != nil {
			t.Fatalf("redocly: %v; output %s: %v", err, out, jerr)
		}
		if err != nil || report.Totals.Errors+report.Totals.Warnings > 0 {
			t.Errorf("redocly: %d errors, %d warnings (%v):\n%s", report.Totals.Errors, report.Totals.Warnings, err, out)
		}
	})
	t.Run("spectral", func(t *testing.T) {
		// --fail-severity=hint makes any finding a failing exit.
		out, err := run(t, "-y", "-p", spectralCLI, "spectral", "lint", "-r", "spectral.yaml", "-f", "json", "--fail-severity=hint", "openapi.json")
		if err != nil {
			t.Errorf("spectral: %v:\n%s", err, out)
		}
	})
}

// TestMethodNotAllowed sends every method a documented path does not list,
// and checks that each answers 405 with Allow and the error body, and that
// every operation of the path documents the 405.
func TestMethodNotAllowed(t *testing.T) {
	api := newTestAPI(t)
	res := api.do(request{method: "GET", path: "/v1/openapi.json"})
	doc, err := openapi3.NewLoader().LoadFromData(res.body)
	if err != nil {
		t.Fatal(err)
	}
	methodNotAllowed := doc.Components.Responses["MethodNotAllowed"]
	if methodNotAllowed == nil || methodNotAllowed.Value.Headers["Allow"] == nil {
		t.Fatal("components.responses has no MethodNotAllowed with an Allow header")
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	for path, item := range doc.Paths.Map() {
		served := item.Operations()
		for method, op := range served {
			if r := op.Responses.Value("405"); r == nil || r.Ref != "#/components/responses/MethodNotAllowed" {
				t.Errorf("%s %s does not document 405 as MethodNotAllowed", method, path)
			}
		}
		urlPath := "/v1" + param.ReplaceAllString(path, "x1")
		for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
			if served[method] != nil {
				continue
			}
			t.Run(method+" "+path, func(t *testing.T) {
				var status int
				var header http.Header
				if method == http.MethodHead {
					// A HEAD answer has no body to check, and api.do wants one.
					req, err := http.NewRequest(method, api.server.URL+urlPath, nil)
					if err != nil {
						t.Fatal(err)
					}
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					res.Body.Close()
					status, header = res.StatusCode, res.Header
				} else {
					res := api.do(request{method: method, path: urlPath})
					wantError(t, res, http.StatusMethodNotAllowed, "bad_request", "method_not_allowed", "")
					var body any
					res.decode(t, &body)
					schema := methodNotAllowed.Value.Content.Get("application/json").Schema.Value
					if err := schema.VisitJSON(body); err != nil {
						t.Errorf("body %s does not match MethodNotAllowed: %v", res.body, err)
					}
					status, header = res.status, res.header
				}
				if status != http.StatusMethodNotAllowed {
					t.Fatalf("status: got %d, want 405", status)
				}
				allow := strings.Split(header.Get("Allow"), ", ")
				for m := range served {
					if !slices.Contains(allow, m) {
						t.Errorf("Allow: got %q, want %s in it", header.Get("Allow"), m)
					}
				}
				if !slices.Contains(allow, "OPTIONS") {
					t.Errorf("Allow: got %q, want OPTIONS in it", header.Get("Allow"))
				}
			})
		}
	}
}
