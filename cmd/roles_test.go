package cmd

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// rolesRoleJSON is the --json form of a role.
type rolesRoleJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CustomName *string `json:"customName"`
}

var rolesIDRE = regexp.MustCompile(`^c[0-9a-z]{24}$`)

// rolesDecode decodes --json output strictly: exactly the three fields.
func rolesDecode(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
}

func rolesList(t *testing.T, dir string) []rolesRoleJSON {
	t.Helper()
	out := mustExecute(t, "roles", "list", "--json", "--data-dir", dir)
	var roles []rolesRoleJSON
	rolesDecode(t, out, &roles)
	// customName is always present, null for the built-in roles.
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		if _, ok := r["customName"]; !ok || len(r) != 3 {
			t.Errorf("roles list --json item %v: want exactly id, name and customName", r)
		}
	}
	return roles
}

func TestRolesCommands(t *testing.T) {
	dir := t.TempDir()
	seedDataDir(t, dir, false)
	dd := []string{"--data-dir", dir}

	var builtin []rolesRoleJSON
	t.Run("a new firm has admin and user", func(t *testing.T) {
		builtin = rolesList(t, dir)
		if len(builtin) != 2 || builtin[0].Name != "admin" || builtin[1].Name != "user" ||
			builtin[0].CustomName != nil || builtin[1].CustomName != nil {
			t.Fatalf("roles: got %+v, want admin and user without custom names", builtin)
		}
		for _, r := range builtin {
			if !rolesIDRE.MatchString(r.ID) {
				t.Errorf("role id %q is not a cuid", r.ID)
			}
		}
	})

	var senior rolesRoleJSON
	t.Run("create --json prints the role", func(t *testing.T) {
		out := mustExecute(t, append([]string{"roles", "create", "--name", "  Senior accountant ", "--json"}, dd...)...)
		rolesDecode(t, out, &senior)
		if !rolesIDRE.MatchString(senior.ID) || senior.Name != "custom" || senior.CustomName == nil || *senior.CustomName != "Senior accountant" {
			t.Errorf("roles create --json: got %s, want {id, name custom, customName Senior accountant}", out)
		}
	})

	t.Run("create prints the id alone", func(t *testing.T) {
		out := strings.TrimSpace(mustExecute(t, append([]string{"roles", "create", "--name", "Assistant"}, dd...)...))
		if !rolesIDRE.MatchString(out) {
			t.Errorf("roles create: got %q, want the new role's id", out)
		}
	})

	t.Run("refused", func(t *testing.T) {
		for _, c := range []struct {
			name string
			args []string
		}{
			{"a name taken", []string{"roles", "create", "--name", "Senior accountant"}},
			{"a name taken, once trimmed", []string{"roles", "create", "--name", " Senior accountant\t", "--json"}},
			{"no name", []string{"roles", "create"}},
			{"an empty name", []string{"roles", "create", "--name", ""}},
			{"a blank name", []string{"roles", "create", "--name", "   "}},
			{"a name of 101 characters", []string{"roles", "create", "--name", strings.Repeat("x", 101)}},
			{"an argument", []string{"roles", "create", "--name", "X", "extra"}},
			{"list with an argument", []string{"roles", "list", "extra"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				mustFail(t, append(c.args, dd...)...)
			})
		}
		if got := rolesList(t, dir); len(got) != 4 {
			t.Errorf("roles after refused creates: got %+v, want 4", got)
		}
	})

	t.Run("a name taken names the conflict", func(t *testing.T) {
		stderr := mustFail(t, append([]string{"roles", "create", "--name", "Senior accountant"}, dd...)...)
		if !strings.Contains(stderr, "Senior accountant") {
			t.Errorf("stderr %q does not name the role", stderr)
		}
	})

	t.Run("list --json: built-in first, then the custom roles", func(t *testing.T) {
		got := rolesList(t, dir)
		if len(got) != 4 {
			t.Fatalf("roles: got %+v, want 4", got)
		}
		if got[0] != builtin[0] || got[1] != builtin[1] {
			t.Errorf("built-in roles: got %+v, want %+v first", got[:2], builtin)
		}
		var customs []string
		for _, r := range got[2:] {
			if r.Name != "custom" || r.CustomName == nil {
				t.Errorf("custom role %+v", r)
				continue
			}
			customs = append(customs, *r.CustomName)
			if *r.CustomName == "Senior accountant" && r.ID != senior.ID {
				t.Errorf("Senior accountant: got id %s, want %s", r.ID, senior.ID)
			}
		}
		if strings.Join(customs, ",") != "Assistant,Senior accountant" {
			t.Errorf("custom roles: got %v, want Assistant, Senior accountant", customs)
		}
	})

	t.Run("list as a table", func(t *testing.T) {
		out := mustExecute(t, append([]string{"roles", "list"}, dd...)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 5 || !strings.HasPrefix(lines[0], "ID") {
			t.Fatalf("roles list: got %q, want a header and four rows", out)
		}
		for _, want := range []string{builtin[0].ID, builtin[1].ID, senior.ID, "Senior accountant", "Assistant"} {
			if !strings.Contains(out, want) {
				t.Errorf("roles list lacks %s:\n%s", want, out)
			}
		}
	})

	t.Run("without a database", func(t *testing.T) {
		empty := t.TempDir()
		mustFail(t, "roles", "list", "--data-dir", empty)
		mustFail(t, "roles", "create", "--name", "X", "--data-dir", empty)
	})
}

// TestRolesCreateCountsCharacters: the 100-character limit on a role name
// counts characters, not bytes, as the API does everywhere.
func TestRolesCreateCountsCharacters(t *testing.T) {
	dir := t.TempDir()
	seedDataDir(t, dir, false)
	name := strings.Repeat("ä", 60)
	code, stdout, stderr := execute("roles", "create", "--name", name, "--json", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("roles create --name <60 × ä>: exit %d (%s), want 0: 60 characters are within 1 to 100", code, strings.TrimSpace(stderr))
	}
	var r rolesRoleJSON
	rolesDecode(t, stdout, &r)
	if r.CustomName == nil || *r.CustomName != name {
		t.Errorf("customName: got %v, want the 60 characters", r.CustomName)
	}
	mustFail(t, "roles", "create", "--name", strings.Repeat("ä", 101), "--data-dir", dir)
}
