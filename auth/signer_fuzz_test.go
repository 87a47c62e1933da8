package auth_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
)

// FuzzSignerVerify verifies fuzzed links with a signer whose secret was
// rotated once. Only a signature of the current or the previous secret over
// that very id and expiry (hex, of either case) is accepted, and then only
// before the expiry; a genuine but expired link is ErrLinkExpired; anything
// else is ErrInvalidSignature. A link the signer signs for the id verifies.
func FuzzSignerVerify(f *testing.F) {
	c := newClock()
	previous, current := bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{9}, 32)
	store := &secretStore{current: previous}
	store.rotate(current)
	s := auth.NewSigner(store, c.Now)
	now := c.Now().Unix()
	later := now + int64(auth.LinkLifetime/time.Second)
	for _, in := range []struct {
		id      string
		expires int64
		sig     string
	}{
		{signedFile, later, linkMAC(current, signedFile, later)},
		{signedFile, later, linkMAC(previous, signedFile, later)},
		{signedFile, later, strings.ToUpper(linkMAC(current, signedFile, later))},
		{signedFile, now, linkMAC(current, signedFile, now)},
		{signedFile, now - 1, linkMAC(previous, signedFile, now-1)},
		{signedFile + "x", later, linkMAC(current, signedFile, later)},
		{signedFile, later + 1, linkMAC(current, signedFile, later)},
		{signedFile, later, linkMAC(current, signedFile, later)[:62]},
		{signedFile, later, linkMAC(current, signedFile, later) + "00"},
		{signedFile, later, " " + linkMAC(current, signedFile, later)},
		{signedFile, later, linkMAC(bytes.Repeat([]byte{8}, 32), signedFile, later)},
		{"", 0, ""},
		{"a\nb", -1 << 63, strings.Repeat("g", 64)},
		{"\xff", 1<<63 - 1, strings.Repeat("0", 64)},
		// Ids with a NUL or bytes that are not UTF-8, as a path id ending in
		// %00 or %FF reaches the signer, signed for that id or for another.
		{signedFile + "\x00", later, linkMAC(current, signedFile+"\x00", later)},
		{signedFile + "\x00", later, linkMAC(current, signedFile, later)},
		{signedFile + "%00", later, linkMAC(previous, signedFile+"%00", later)},
		{signedFile + "\xff", later, linkMAC(current, signedFile+"\xff", later)},
	} {
		f.Add(in.id, in.expires, in.sig)
	}
	f.Fuzz(func(t *testing.T, id string, expires int64, sig string) {
		err := s.Verify(context.Background(), id, expires, sig)
		lower := strings.ToLower(sig)
		var want error
		switch {
		case lower != linkMAC(current, id, expires) && lower != linkMAC(previous, id, expires):
			want = auth.ErrInvalidSignature
		case now >= expires:
			want = auth.ErrLinkExpired
		}
		if !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("Verify(%q, %d, %q): got %v, want %v", id, expires, sig, err, want)
		}
		signedExpires, signed := mustSign(t, s, id)
		if signedExpires != later || signed != linkMAC(current, id, later) {
			t.Fatalf("Sign(%q): got %d %s, want %d %s", id, signedExpires, signed, later, linkMAC(current, id, later))
		}
		wantVerify(t, s, id, signedExpires, signed, nil)
	})
}
