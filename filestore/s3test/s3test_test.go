package s3test

import (
	"os"
	"strings"
	"testing"
)

// TestCIInstallsThisVersion requires .ci/run to install the versitygw the
// tests name, so that CI runs them against the pinned release.
func TestCIInstallsThisVersion(t *testing.T) {
	script, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), Install+"\n") {
		t.Errorf(".ci/run does not run %q", Install)
	}
}
