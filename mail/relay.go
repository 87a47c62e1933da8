package mail

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// sendTimeout bounds one attempt: connecting, the dialogue and the data.
const sendTimeout = time.Minute

// Relay is an SMTP server that accepts the mails for delivery.
type Relay struct {
	addr     string // host:port
	host     string
	implicit bool // smtps: TLS from the first byte
	insecure bool // smtp without STARTTLS, for a relay on the same machine
	user     string
	password string
	// RootCAs verifies the relay's certificate; the system's roots when nil.
	RootCAs *x509.CertPool
	// hello is the name given in EHLO: the sender address's domain.
	hello string
}

// ParseRelay reads an --smtp-url: smtp://[user:pass@]host[:port] (port 587
// by default, STARTTLS required unless ?insecure=true) or
// smtps://[user:pass@]host[:port] (port 465, TLS at once).
func ParseRelay(raw string) (*Relay, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	r := &Relay{host: u.Hostname()}
	port := u.Port()
	switch u.Scheme {
	case "smtp":
		port = cmp.Or(port, "587")
	case "smtps":
		port, r.implicit = cmp.Or(port, "465"), true
	default:
		return nil, fmt.Errorf("scheme %q: want smtp or smtps", u.Scheme)
	}
	if r.host == "" {
		return nil, errors.New("no host")
	}
	q := u.Query()
	for k := range q {
		if k != "insecure" {
			return nil, fmt.Errorf("unknown parameter %q", k)
		}
	}
	switch q.Get("insecure") {
	case "", "false":
	case "true":
		if r.implicit {
			return nil, errors.New("insecure=true is for smtp://, not smtps://")
		}
		r.insecure = true
	default:
		return nil, errors.New("insecure must be true or false")
	}
	if u.User != nil {
		r.user = u.User.Username()
		r.password, _ = u.User.Password()
	}
	r.addr = net.JoinHostPort(r.host, port)
	return r, nil
}

// Addr is the relay's host:port, without its credentials.
func (r *Relay) Addr() string { return r.addr }

// Answer is a relay's refusal: its reply code and text.
type Answer struct {
	Code int
	Text string
}

func (a *Answer) Error() string { return fmt.Sprintf("%d %s", a.Code, a.Text) }

// Permanent reports whether err is a refusal for good (a 5xx reply): the
// relay will not take the mail however often it is sent again.
func Permanent(err error) bool {
	var a *Answer
	return errors.As(err, &a) && a.Code >= 500
}

// Send hands msg, from the envelope sender from, to the relay for to. A
// refusal comes back as an *Answer; other errors are the connection's.
func (r *Relay) Send(ctx context.Context, from, to string, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	tlsConfig := &tls.Config{ServerName: r.host, RootCAs: r.RootCAs, MinVersion: tls.VersionTLS12}
	var conn net.Conn
	var err error
	if r.implicit {
		conn, err = (&tls.Dialer{Config: tlsConfig}).DialContext(ctx, "tcp", r.addr)
	} else {
		conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", r.addr)
	}
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	err = r.dialogue(conn, tlsConfig, from, to, msg)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return answerOf(err)
}

func (r *Relay) dialogue(conn net.Conn, tlsConfig *tls.Config, from, to string, msg []byte) error {
	c, err := smtp.NewClient(conn, r.host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if err := c.Hello(cmp.Or(r.hello, "localhost")); err != nil {
		return err
	}
	if !r.implicit {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConfig); err != nil {
				return err
			}
		} else if !r.insecure {
			return errors.New("the relay does not offer STARTTLS (add ?insecure=true only for a relay on this machine)")
		}
	}
	if r.user != "" {
		if err := c.Auth(smtp.PlainAuth("", r.user, r.password, r.host)); err != nil {
			return err
		}
	}
	if !ascii(from) || !ascii(to) {
		// net/smtp asks for SMTPUTF8 when the relay offers it; one that
		// does not would take the address's bytes for something else.
		if ok, _ := c.Extension("SMTPUTF8"); !ok {
			return &Answer{Code: 553, Text: "the relay does not offer SMTPUTF8, which an address beyond ASCII needs"}
		}
	}
	if err := c.Mail(from); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// answerOf turns a reply error of net/smtp into an *Answer.
func answerOf(err error) error {
	var te *textproto.Error
	if errors.As(err, &te) {
		return &Answer{Code: te.Code, Text: strings.TrimSpace(te.Msg)}
	}
	return err
}
