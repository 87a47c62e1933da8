package mail

import (
	"bufio"
	"context"
	"errors"
	"mime"
	"net"
	"strings"
	"testing"
	"time"
)

func TestValidMailbox(t *testing.T) {
	for addr, want := range map[string]bool{
		"anna@client.example":                       true,
		"a.b+tag@sub.client.example":                true,
		"o'brien!#$%&*/=?^_`{|}~-@x.example":        true,
		"ünal@büro.example":                         true,
		"a@evil.com>":                               false,
		"a@evil.com>,b@x.example":                   false,
		"anna\u2028@client.example":                 false,
		"anna@client.example\u2028":                 false,
		"anna@client.example\r\nBcc: x@y.z":         false,
		"Anna <anna@client.example>":                false,
		"\"a b\"@client.example":                    false,
		"a@[127.0.0.1]":                             false,
		"a@localhost":                               false,
		".a@x.example":                              false,
		"a..b@x.example":                            false,
		"a@-x.example":                              false,
		"a@x..example":                              false,
		"a@x.example (comment)":                     false,
		"a@@x.example":                              false,
		"@x.example":                                false,
		"a\u202E@x.example":                         false,
		strings.Repeat("a", 65) + "@x.example":      false,
		"a@" + strings.Repeat("b", 64) + ".example": false,
	} {
		if got := ValidMailbox(addr); got != want {
			t.Errorf("ValidMailbox(%+q): got %v, want %v", addr, got, want)
		}
	}
}

// TestSubjectAlwaysEncoded: a subject holds what people wrote; it goes out
// as encoded words even when it is ASCII, so that a title that looks like
// an encoded word reads as written, never as what it would decode to.
func TestSubjectAlwaysEncoded(t *testing.T) {
	for _, subject := range []string{
		"=?utf-8?q?Urgent=3A_pay_to_IBAN_X?=",
		"Plain title",
		"Unterlagen März: " + strings.Repeat("Kontoauszüge ", 12),
	} {
		raw, err := message{subject: subject, to: "anna@client.example", date: time.Now()}.bytes()
		if err != nil {
			t.Fatal(err)
		}
		header := string(raw[strings.Index(string(raw), "\r\nSubject: ")+len("\r\nSubject: "):])
		header = header[:strings.Index(header, "\r\nDate:")]
		for line := range strings.SplitSeq(header, "\r\n") {
			word := strings.TrimPrefix(line, " ")
			if !strings.HasPrefix(word, "=?utf-8?b?") || !strings.HasSuffix(word, "?=") || len(word) > 75 {
				t.Errorf("%q: subject line %q, want one encoded word of at most 75 characters", subject, line)
			}
		}
		decoded, err := new(mime.WordDecoder).DecodeHeader(strings.ReplaceAll(header, "\r\n ", " "))
		if err != nil || strings.ReplaceAll(decoded, " ", "") != strings.ReplaceAll(subject, " ", "") {
			t.Errorf("%q: decodes to %q, %v", subject, decoded, err)
		}
	}
}

// TestRelaySMTPUTF8: an address beyond ASCII goes only to a relay that
// offers SMTPUTF8; another refuses it for good before MAIL FROM.
func TestRelaySMTPUTF8(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	commands := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		conn.Write([]byte("220 relay ESMTP\r\n"))
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			commands <- strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "EHLO"):
				conn.Write([]byte("250-relay\r\n250 8BITMIME\r\n"))
			case strings.HasPrefix(line, "QUIT"):
				conn.Write([]byte("221 bye\r\n"))
				return
			default:
				conn.Write([]byte("250 ok\r\n"))
			}
		}
	}()
	relay, err := ParseRelay("smtp://" + l.Addr().String() + "?insecure=true")
	if err != nil {
		t.Fatal(err)
	}
	err = relay.Send(context.Background(), "office@kanzlei.example", "ünal@büro.example", []byte("Subject: x\r\n\r\nx\r\n"))
	var answer *Answer
	if !errors.As(err, &answer) || !Permanent(err) {
		t.Fatalf("got %v, want a permanent refusal", err)
	}
	<-done
	close(commands)
	for c := range commands {
		if strings.HasPrefix(c, "MAIL") || strings.HasPrefix(c, "RCPT") {
			t.Errorf("sent %q to a relay without SMTPUTF8", c)
		}
	}
}
