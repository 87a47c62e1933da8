package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layers places every package of the module: a package may import only
// packages of lower layers, so that data never climbs back up and each
// concern is found in one guess (docs/architecture.md). A new package must
// be placed here before it builds into the binary.
var layers = map[string]int{
	"acctapi":     6,
	"acctapi/cmd": 5,
	// The running program: open, listen, bootstrap, the workers; cmd
	// fills its Config.
	"acctapi/server":   4,
	"acctapi/handlers": 3,
	"acctapi/backup":   3,
	"acctapi/db/seed":  3,
	"acctapi/metrics":  3,
	"acctapi/webhooks": 2,
	"acctapi/mail":     2,
	// Reads the stored files in the background with the document readers,
	// and imports those that are bank statements. Beside handlers, so that
	// no request imports a background worker.
	"acctapi/analysis": 3,
	// Matches transactions to documents in the background.
	"acctapi/banking": 3,
	// Writes the DATEV exports in the background.
	"acctapi/exports": 3,
	// Turns a parsed bank statement file into the store's import; the
	// upload and the analysis share it.
	"acctapi/bankimport": 2,
	"acctapi/auth":       2,
	"acctapi/certs":      2,
	// Test support: runs the Mailpit program for the tests of the mails.
	"acctapi/mail/mailpit": 1,
	"acctapi/db":           1,
	"acctapi/filestore":    1,
	// Test support: writes small PDFs by hand; imports nothing of ours.
	"acctapi/docread/pdftest": 1,
	// Test support: draws pages and phone photos of text; imports nothing
	// of ours.
	"acctapi/ocr/ocrtest": 1,
	"acctapi/durable":     0,
	"acctapi/retry":       0,
	// Runs a queue's jobs in the background (claim, wake, poll, lanes,
	// stop), generic over the job; imports nothing of ours.
	"acctapi/jobs": 0,
	// The kinds of document and the names of their fields, which every
	// reader and the store share; imports nothing of ours.
	"acctapi/document": 0,
	// Reads CAMT.053 and MT940 bank statements: bytes in, entries out;
	// imports nothing of ours.
	"acctapi/bankstatement": 0,
	// The rules that match bank transactions to documents, without SQL.
	"acctapi/matching": 1,
	// Writes DATEV's Buchungsstapel, document.xml and their ZIP, and the
	// rules of booking a document; imports nothing of ours.
	"acctapi/datev": 1,
	// Test support: checks an export's ZIP against DATEV's format
	// description; imports nothing of ours.
	"acctapi/datev/datevtest": 1,
	// Reads e-invoice XML into header fields: bytes in, values out.
	"acctapi/einvoice": 1,
	// Reads fields from a document's text.
	"acctapi/docfields": 1,
	// Runs versitygw, a real S3 server, for the tests of the S3 file
	// store.
	"acctapi/filestore/s3test": 1,
	// Test support: finds the real programs the tests run, and imports
	// nothing of ours.
	"acctapi/testprog": 0,
	// Test support: a log buffer, a bounded client and a stopped Run for
	// the tests that run the server; imports nothing of ours.
	"acctapi/server/servertest": 0,
	// Turns a document's bytes into text and embedded files, and imports
	// nothing of ours.
	"acctapi/docread": 1,
	// Runs Tesseract as a bounded child process on images; imports nothing of ours.
	"acctapi/ocr": 1,
	// The load benchmark drives the built binary over HTTP and imports
	// nothing of ours.
	"acctapi/bench": 1,
	// The bare server bench/run measures acctapi against: the driver and
	// the router with none of acctapi's layers, so it imports nothing of ours.
	"acctapi/bench/baseline": 1,
	// The generated API client imports nothing of ours; beside main, no
	// package of the server can import it.
	"acctapi/client": 6,
}

// TestLayers reads the imports of every non-test Go file of the module and
// refuses any that points to the same layer or one above it.
func TestLayers(t *testing.T) {
	imports := map[string]map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := path.Join("acctapi", filepath.ToSlash(filepath.Dir(p)))
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, spec := range f.Imports {
			imported, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if imported == "acctapi" || strings.HasPrefix(imported, "acctapi/") {
				imports[pkg][imported] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < len(layers) {
		t.Fatalf("found %d packages, want the %d of the layer table", len(imports), len(layers))
	}
	for pkg, imported := range imports {
		layer, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s has no layer: place it in the layer table", pkg)
			continue
		}
		for dep := range imported {
			if layers[dep] >= layer {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers", pkg, layer, dep, layers[dep])
			}
		}
	}
}
