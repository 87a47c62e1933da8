package webhooks

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// The test vector of the Standard Webhooks reference libraries: matching it
// is what says a receiver's off-the-shelf verifier accepts our signatures.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = int64(1614265330)
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignStandardWebhooksVector(t *testing.T) {
	got, err := Sign(vectorSecret, vectorID, vectorTS, []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	if got != vectorSig {
		t.Errorf("got %q, want %q", got, vectorSig)
	}
	if err := Verify(vectorSecret, vectorID, vectorTS, []byte(vectorBody), vectorSig, time.Unix(vectorTS, 0)); err != nil {
		t.Errorf("Verify of the vector: %v", err)
	}
}

func TestNewSecret(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if a == b {
		t.Fatalf("two secrets are equal: %q", a)
	}
	enc, ok := strings.CutPrefix(a, "whsec_")
	if !ok {
		t.Fatalf("got %q, want a whsec_ prefix", a)
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(raw) != 32 {
		t.Fatalf("got %d bytes (err %v), want 32", len(raw), err)
	}
	key, err := ParseSecret(a)
	if err != nil || string(key) != string(raw) {
		t.Errorf("ParseSecret: got %x, %v, want %x", key, err, raw)
	}
}

func TestParseSecretRefuses(t *testing.T) {
	for name, s := range map[string]string{
		"empty":        "",
		"no prefix":    "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"other prefix": "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"url base64":   "whsec_" + base64.URLEncoding.EncodeToString([]byte(strings.Repeat("\xff", 32))),
		"unpadded":     "whsec_" + base64.RawStdEncoding.EncodeToString(make([]byte, 32)),
		"23 bytes":     "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 23)),
		"65 bytes":     "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65)),
		"spaces":       "whsec_ MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseSecret(s); !errors.Is(err, ErrSecret) {
				t.Errorf("got %v, want ErrSecret", err)
			}
			if _, err := Sign(s, "msg_1", 1, nil); !errors.Is(err, ErrSecret) {
				t.Errorf("Sign: got %v, want ErrSecret", err)
			}
		})
	}
	for _, n := range []int{24, 64} {
		if _, err := ParseSecret("whsec_" + base64.StdEncoding.EncodeToString(make([]byte, n))); err != nil {
			t.Errorf("%d bytes: got %v, want nil", n, err)
		}
	}
}

func TestSignRefusesAmbiguousID(t *testing.T) {
	secret := NewSecret()
	for _, id := range []string{"", "msg.1", "msg 1", "msg\n1", "msg\x001", "msg_é", strings.Repeat("a", 256)} {
		if _, err := Sign(secret, id, 1, nil); !errors.Is(err, ErrID) {
			t.Errorf("id %q: got %v, want ErrID", id, err)
		}
	}
}

func TestVerify(t *testing.T) {
	secret, previous := NewSecret(), NewSecret()
	const id = "cabc12345def"
	ts := int64(1_700_000_000)
	now := time.Unix(ts, 0)
	body := []byte(`{"type":"task.created"}`)
	sig := mustSign(t, secret, id, ts, body)
	old := mustSign(t, previous, id, ts, body)

	for _, tc := range []struct {
		name   string
		secret string
		id     string
		ts     int64
		body   string
		header string
		now    time.Time
		want   error
	}{
		{"match", secret, id, ts, string(body), sig, now, nil},
		{"rotation: new secret", secret, id, ts, string(body), sig + " " + old, now, nil},
		{"rotation: previous secret", previous, id, ts, string(body), sig + " " + old, now, nil},
		{"unknown versions skipped", secret, id, ts, string(body), "v1a,AAAA v2," + sig[3:] + " " + sig, now, nil},
		{"tolerance edge, old", secret, id, ts, string(body), sig, now.Add(Tolerance), nil},
		{"tolerance edge, new", secret, id, ts, string(body), sig, now.Add(-Tolerance), nil},
		{"other secret", NewSecret(), id, ts, string(body), sig + " " + old, now, ErrSignature},
		{"tampered body", secret, id, ts, string(body) + " ", sig, now, ErrSignature},
		{"tampered id", secret, id + "x", ts, string(body), sig, now, ErrSignature},
		{"tampered timestamp", secret, id, ts + 1, string(body), sig, now, ErrSignature},
		{"version v2", secret, id, ts, string(body), "v2," + sig[3:], now, ErrSignature},
		{"no comma", secret, id, ts, string(body), strings.Replace(sig, ",", "", 1), now, ErrSignature},
		{"empty header", secret, id, ts, string(body), "", now, ErrSignature},
		{"too old", secret, id, ts, string(body), sig, now.Add(Tolerance + time.Second), ErrTimestamp},
		{"too new", secret, id, ts, string(body), sig, now.Add(-Tolerance - time.Second), ErrTimestamp},
		{"bad secret", "whsec_x", id, ts, string(body), sig, now, ErrSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.secret, tc.id, tc.ts, []byte(tc.body), tc.header, tc.now)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func mustSign(tb testing.TB, secret, id string, ts int64, body []byte) string {
	tb.Helper()
	sig, err := Sign(secret, id, ts, body)
	if err != nil {
		tb.Fatal(err)
	}
	return sig
}
