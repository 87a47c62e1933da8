// Package mail writes and sends the service's mails: collect links, their
// reminders and invitations. db queues them in the outbox in the
// transaction of the change; the Sender claims the due ones, writes each
// from the embedded templates in its language, and hands it to the SMTP
// relay, with retries.
package mail

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	"acctapi/db"
)

//go:embed templates
var templateFiles embed.FS

// Each language has a text and an HTML template set, one template per kind
// of mail (and one per subject in the text set).
var (
	textTemplates = map[string]*texttemplate.Template{}
	htmlTemplates = map[string]*htmltemplate.Template{}
)

func init() {
	for _, locale := range db.MailLocales {
		textTemplates[locale] = texttemplate.Must(texttemplate.New(locale).ParseFS(templateFiles, "templates/"+locale+".txt"))
		htmlTemplates[locale] = htmltemplate.Must(htmltemplate.New(locale).
			ParseFS(templateFiles, "templates/layout.html", "templates/"+locale+".html"))
	}
}

// view is what the templates see.
type view struct {
	Locale     string
	Subject    string
	FirmName   string
	ClientName string
	// Name is the invited person's name, or "".
	Name       string
	Link       string
	Title      string
	Message    string
	DueDate    string
	ExpiresAt  string
	Items      []viewItem
	Missing    []string
	Workspaces []string
}

type viewItem struct {
	Title    string
	Required bool
}

// content is a mail's words.
type content struct {
	subject, text, html string
}

// render writes the mail m in its language.
func render(m *db.OutgoingMail) (content, error) {
	locale := m.Locale
	if textTemplates[locale] == nil {
		return content{}, fmt.Errorf("no templates for locale %q", locale)
	}
	v := view{Locale: locale, FirmName: m.FirmName, ClientName: m.ClientName, Link: m.Link, Workspaces: m.Workspaces}
	v.Name = strings.TrimSpace(deref(m.FirstName) + " " + deref(m.LastName))
	if c := m.Collect; c != nil {
		v.Title, v.Message = c.Title, deref(c.Message)
		if c.DueDate != nil {
			v.DueDate = FormatDate(*c.DueDate, locale)
		}
		v.ExpiresAt = FormatDate(m.LinkExpiresAt, locale)
		for _, it := range c.Items {
			v.Items = append(v.Items, viewItem{Title: it.Title, Required: it.Required})
			if it.Required && it.Status != db.ItemReceived {
				v.Missing = append(v.Missing, it.Title)
			}
		}
	}
	var out content
	var b bytes.Buffer
	if err := textTemplates[locale].ExecuteTemplate(&b, m.Kind+".subject", v); err != nil {
		return content{}, err
	}
	out.subject = strings.Join(strings.Fields(b.String()), " ")
	v.Subject = out.subject
	b.Reset()
	if err := textTemplates[locale].ExecuteTemplate(&b, m.Kind, v); err != nil {
		return content{}, err
	}
	out.text = b.String()
	b.Reset()
	if err := htmlTemplates[locale].ExecuteTemplate(&b, m.Kind, v); err != nil {
		return content{}, err
	}
	out.html = b.String()
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var germanMonths = [...]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
	"September", "Oktober", "November", "Dezember"}

// FormatDate writes a day as people of the locale (en or de) write it, in
// UTC (the API's time zone): "2 March 2026", "2. März 2026". The mails and
// the collect page both write their dates with it.
func FormatDate(t time.Time, locale string) string {
	t = t.UTC()
	if locale == "de" {
		return fmt.Sprintf("%d. %s %d", t.Day(), germanMonths[t.Month()-1], t.Year())
	}
	return t.Format("2 January 2006")
}
