package mail

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a mailbox, in octets (RFC 5321, section 4.5.3.1): a path holds
// at most 256 with its angle brackets.
const (
	maxLocalPart = 64
	maxDomain    = 253
	maxMailbox   = 254
)

// ValidMailbox reports whether addr is a mailbox as RFC 5321 writes it in
// MAIL FROM and RCPT TO (section 4.1.2): a dot-string local part, an @, and
// a domain of at least two labels of letters, digits and inner hyphens.
// Quoted local parts, address literals, display names, comments, spaces and
// control characters are refused, so that what is accepted goes into the
// SMTP commands and the To header as it is. UTF-8 letters are allowed
// beyond ASCII (RFC 6531); such an address goes only to a relay that offers
// SMTPUTF8 (see Relay.Send).
func ValidMailbox(addr string) bool {
	if len(addr) > maxMailbox || !utf8.ValidString(addr) {
		return false
	}
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || len(local) > maxLocalPart || len(domain) > maxDomain {
		return false
	}
	for atom := range strings.SplitSeq(local, ".") {
		if atom == "" || strings.IndexFunc(atom, func(r rune) bool { return !atext(r) }) >= 0 {
			return false
		}
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, label := range labels {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' ||
			strings.IndexFunc(label, func(r rune) bool { return !letDig(r) && r != '-' }) >= 0 {
			return false
		}
	}
	return true
}

// atext is a character of an atom (RFC 5322, section 3.2.3), and any
// UTF-8 letter, digit or mark beyond ASCII (RFC 6531).
func atext(r rune) bool {
	if r >= utf8.RuneSelf {
		return unicode.In(r, unicode.L, unicode.M, unicode.N)
	}
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r)
}

// letDig is a letter or digit of a domain label, in ASCII or, for an
// internationalized domain's U-label, beyond it.
func letDig(r rune) bool {
	if r >= utf8.RuneSelf {
		return unicode.In(r, unicode.L, unicode.M, unicode.N)
	}
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// ascii reports whether s is ASCII only.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
