package mail_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acctapi/mail"
	"acctapi/mail/mailpit"
)

func TestParseRelay(t *testing.T) {
	for _, tc := range []struct {
		url, addr, err string
	}{
		{"smtp://mail.example.com", "mail.example.com:587", ""},
		{"smtp://user:p%40ss@mail.example.com:2525", "mail.example.com:2525", ""},
		{"smtps://mail.example.com", "mail.example.com:465", ""},
		{"smtp://127.0.0.1:1025?insecure=true", "127.0.0.1:1025", ""},
		{"smtp://127.0.0.1:1025?insecure=false", "127.0.0.1:1025", ""},
		{"smtps://mail.example.com?insecure=true", "", "insecure=true is for smtp://"},
		{"smtp://mail.example.com?insecure=yes", "", "insecure must be true or false"},
		{"smtp://mail.example.com?tls=off", "", "unknown parameter"},
		{"http://mail.example.com", "", "want smtp or smtps"},
		{"smtp://", "", "no host"},
		{"::", "", "not a URL"},
	} {
		r, err := mail.ParseRelay(tc.url)
		switch {
		case tc.err == "" && (err != nil || r.Addr() != tc.addr):
			t.Errorf("%s: got %v, %v, want %s", tc.url, r, err, tc.addr)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, want an error with %q", tc.url, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "p@ss"):
			t.Errorf("%s: the error shows the password", tc.url)
		}
	}
}

func TestParseFrom(t *testing.T) {
	if a, err := mail.ParseFrom("office@kanzlei.example"); err != nil || a != "office@kanzlei.example" {
		t.Errorf("bare address: got %q, %v", a, err)
	}
	for _, bad := range []string{"", "office", "Kanzlei <office@kanzlei.example>", "office@kanzlei.example, b@c.example"} {
		if _, err := mail.ParseFrom(bad); err == nil {
			t.Errorf("%q: got nil, want an error", bad)
		}
	}
	if d := mail.Domain("office@kanzlei.example"); d != "kanzlei.example" {
		t.Errorf("Domain: got %q", d)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their files and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

var testMessage = []byte("From: office@kanzlei.example\r\nTo: anna@client.example\r\nSubject: test\r\n" +
	"Message-ID: <1@kanzlei.example>\r\n\r\nHello.\r\n")

// TestRelayTLS sends through Mailpit over STARTTLS and over implicit TLS,
// with AUTH PLAIN, and checks that smtp:// refuses a relay without
// STARTTLS unless insecure=true, and that an untrusted certificate fails.
func TestRelayTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	send := func(url string, roots *x509.CertPool) error {
		r, err := mail.ParseRelay(url)
		if err != nil {
			t.Fatal(err)
		}
		r.RootCAs = roots
		return r.Send(context.Background(), "office@kanzlei.example", "anna@client.example", testMessage)
	}

	starttls := mailpit.Start(t, "--smtp-tls-cert", certFile, "--smtp-tls-key", keyFile, "--smtp-require-starttls")
	if err := send("smtp://user:secret@"+starttls.SMTP, pool); err != nil {
		t.Errorf("STARTTLS with AUTH PLAIN: %v", err)
	}
	if err := send("smtp://user:secret@"+starttls.SMTP, nil); err == nil {
		t.Error("STARTTLS to an untrusted certificate: got nil, want an error")
	}
	if n := len(starttls.WaitFor(t, 1, 5*time.Second)); n != 1 {
		t.Errorf("STARTTLS relay: %d mails, want 1", n)
	}

	implicit := mailpit.Start(t, "--smtp-tls-cert", certFile, "--smtp-tls-key", keyFile, "--smtp-require-tls")
	if err := send("smtps://user:secret@"+implicit.SMTP, pool); err != nil {
		t.Errorf("smtps with AUTH PLAIN: %v", err)
	}
	if n := len(implicit.WaitFor(t, 1, 5*time.Second)); n != 1 {
		t.Errorf("smtps relay: %d mails, want 1", n)
	}

	plain := mailpit.Start(t)
	if err := send("smtp://"+plain.SMTP, nil); err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("smtp:// to a relay without STARTTLS: got %v, want a refusal naming STARTTLS", err)
	}
	if err := send("smtp://"+plain.SMTP+"?insecure=true", nil); err != nil {
		t.Errorf("insecure=true to a local relay: %v", err)
	}
	if n := len(plain.WaitFor(t, 1, 5*time.Second)); n != 1 {
		t.Errorf("plain relay: %d mails, want 1 (the insecure one)", n)
	}
}
