package mail

import (
	"strings"
	"testing"
	"time"

	"acctapi/db"
)

// TestRenderPlurals checks that the mails' counted lines agree with the
// count: one missing document "fehlt", two "fehlen".
func TestRenderPlurals(t *testing.T) {
	due := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	reminder := func(locale string, missing int) content {
		t.Helper()
		c := &db.Collect{Title: "Oktober", DueDate: &due}
		for i := range 3 {
			status := db.ItemReceived
			if i < missing {
				status = db.ItemPending
			}
			c.Items = append(c.Items, &db.CollectItem{Title: "Item " + string(rune('A'+i)), Required: true, Status: status})
		}
		out, err := render(&db.OutgoingMail{Kind: "collect_reminder", Locale: locale, FirmName: "Kanzlei", ClientName: "Client", Collect: c})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		locale  string
		missing int
		want    string
	}{
		{"de", 1, "Es fehlt noch:"}, {"de", 2, "Es fehlen noch:"},
		{"en", 1, "Upload it here:"}, {"en", 2, "Upload them here:"},
	} {
		out := reminder(c.locale, c.missing)
		if !strings.Contains(out.text, c.want) {
			t.Errorf("%s, %d missing: the text lacks %q:\n%s", c.locale, c.missing, c.want, out.text)
		}
		if c.locale == "de" && !strings.Contains(out.html, c.want) {
			t.Errorf("%s, %d missing: the HTML lacks %q", c.locale, c.missing, c.want)
		}
	}
	for _, c := range []struct {
		workspaces []string
		want       string
	}{
		{[]string{"Buchhaltung"}, "Mitglied dieses Arbeitsbereichs:"},
		{[]string{"Buchhaltung", "Lohn"}, "Mitglied dieser Arbeitsbereiche:"},
	} {
		out, err := render(&db.OutgoingMail{Kind: "client_invitation", Locale: "de", FirmName: "Kanzlei", ClientName: "Client", Workspaces: c.workspaces})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.text, c.want) || !strings.Contains(out.html, c.want) {
			t.Errorf("%d workspaces: lacks %q:\n%s", len(c.workspaces), c.want, out.text)
		}
	}
}
