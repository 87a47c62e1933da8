package cmd

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFirmCommands(t *testing.T) {
	dir := t.TempDir()
	seedDataDir(t, dir, false)
	dd := []string{"--data-dir", dir}
	show := func(t *testing.T) firmJSON {
		t.Helper()
		var f firmJSON
		if err := json.Unmarshal([]byte(mustExecute(t, append([]string{"firm", "show", "--json"}, dd...)...)), &f); err != nil {
			t.Fatal(err)
		}
		return f
	}

	t.Run("show", func(t *testing.T) {
		if f := show(t); f.Name != "Test firm" || f.MailFromName != nil || f.Locale != "en" {
			t.Errorf("firm show: got %+v, want Test firm, no sender name, en", f)
		}
		out := mustExecute(t, append([]string{"firm", "show"}, dd...)...)
		if !strings.Contains(out, "name        Test firm\n") || !strings.Contains(out, "mail from   Test firm (the firm's name)\n") {
			t.Errorf("firm show:\n%s", out)
		}
	})

	t.Run("set", func(t *testing.T) {
		mustExecute(t, append([]string{"firm", "set", "--name", " Steuerkanzlei Weber ", "--mail-from-name", "Kanzlei Weber", "--locale", "de"}, dd...)...)
		f := show(t)
		if f.Name != "Steuerkanzlei Weber" || f.MailFromName == nil || *f.MailFromName != "Kanzlei Weber" || f.Locale != "de" {
			t.Errorf("after firm set: got %+v", f)
		}
		mustExecute(t, append([]string{"firm", "set", "--mail-from-name", ""}, dd...)...)
		if f := show(t); f.MailFromName != nil || f.Name != "Steuerkanzlei Weber" {
			t.Errorf(`after --mail-from-name "": got %+v, want no sender name`, f)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"firm", "set"}, "nothing to change"},
			{[]string{"firm", "set", "--name", " "}, "--name must be 1 to 200 characters"},
			{[]string{"firm", "set", "--mail-from-name", "a\r\nBcc: x@example.com"}, "--mail-from-name must not contain control characters"},
			{[]string{"firm", "set", "--locale", "fr"}, `--locale must be en or de, not "fr"`},
		} {
			if stderr := mustFail(t, append(c.args, dd...)...); !strings.Contains(stderr, c.want) {
				t.Errorf("acctapi %v: stderr %q, want %q", c.args, stderr, c.want)
			}
		}
		if f := show(t); f.Name != "Steuerkanzlei Weber" || f.Locale != "de" {
			t.Errorf("after refused changes: got %+v", f)
		}
	})

	t.Run("serve --firm-name keeps the firm's name and says so", func(t *testing.T) {
		cfg, _, stderr := testConfig(dir)
		cfg.FirmName = "Another name"
		srv := openServer(t, cfg)
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		if f := show(t); f.Name != "Steuerkanzlei Weber" {
			t.Errorf("after serve --firm-name: name %q, want it kept", f.Name)
		}
		if out := stderr.String(); !strings.Contains(out, "names the firm on the first start only") || !strings.Contains(out, "acctapi firm set") {
			t.Errorf("serve --firm-name on an existing firm said nothing of it:\n%s", out)
		}
	})
}
