package mail

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"
)

// message is one mail as it goes to the relay.
type message struct {
	from      mail.Address
	to        string
	subject   string
	date      time.Time
	messageID string
	text      string
	html      string
}

// bytes writes the mail in RFC 5322 form, with a plain-text and an HTML
// part in one multipart/alternative body (the reader shows the last one it
// can), each quoted-printable so that long lines and umlauts travel safely.
func (m message) bytes() ([]byte, error) {
	var b bytes.Buffer
	body := multipart.NewWriter(&b)
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	header("From", m.from.String())
	header("To", (&mail.Address{Address: m.to}).String())
	header("Subject", encodeWords(m.subject))
	header("Date", m.date.Format(time.RFC1123Z))
	header("Message-ID", m.messageID)
	header("MIME-Version", "1.0")
	// Mails the service writes on its own: auto-responders do not answer.
	header("Auto-Submitted", "auto-generated")
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": body.Boundary()}))
	b.WriteString("\r\n")
	for _, part := range []struct{ typ, content string }{{"text/plain", m.text}, {"text/html", m.html}} {
		w, err := body.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(crlf(part.content))); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := body.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// maxWordBytes is the most text one encoded word of encodeWords carries: 45
// bytes are 60 in base64, and with "=?utf-8?b?" and "?=" the word stays
// within RFC 2047's 75 characters.
const maxWordBytes = 45

// encodeWords writes s as RFC 2047 encoded words, always: a subject holds
// what people wrote (a collect's title, a firm's name), and text that only
// looks like an encoded word ("=?utf-8?q?...?=") would be decoded by mail
// readers into something else if it went as it is. Words are cut between
// characters and folded onto lines of their own.
func encodeWords(s string) string {
	var words []string
	for len(s) > 0 {
		n := 0
		for n < len(s) {
			_, size := utf8.DecodeRuneInString(s[n:])
			if n+size > maxWordBytes {
				break
			}
			n += size
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, "\r\n ")
}

// crlf ends every line with CRLF, as SMTP wants.
func crlf(s string) string {
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			b.WriteByte('\r')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
