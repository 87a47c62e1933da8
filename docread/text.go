package docread

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	xunicode "golang.org/x/text/encoding/unicode"
)

// inputFactor bounds the bytes of a text or XML file read, as a multiple of
// Limits.MaxText: UTF-16 takes two bytes a letter, and XML's markup more.
const inputFactor = 8

// readText decodes a plain-text file: UTF-8, UTF-16 with a byte order mark,
// else Windows-1252 (which reads Latin-1 too).
func readText(src io.Reader, maxText int) (*Document, error) {
	limit := int64(maxText) * inputFactor
	raw, err := io.ReadAll(io.LimitReader(src, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read text: %w", err)
	}
	truncated := int64(len(raw)) > limit
	if truncated {
		raw = raw[:limit]
	}
	text, err := decodeText(raw, truncated)
	if err != nil {
		return nil, &Error{Reason: "the text file could not be decoded", Err: err}
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text, cut := cutText(text, maxText)
	return &Document{
		Format:    FormatText,
		Pages:     []Page{{Text: text, HasText: hasText(text)}},
		PageCount: 1,
		Truncated: truncated || cut,
	}, nil
}

func decodeText(raw []byte, truncated bool) (string, error) {
	switch {
	case bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")):
		return strings.ToValidUTF8(string(raw[3:]), "\uFFFD"), nil
	case bytes.HasPrefix(raw, []byte("\xff\xfe")), bytes.HasPrefix(raw, []byte("\xfe\xff")):
		if truncated {
			raw = raw[:len(raw)&^1]
		}
		b, err := xunicode.UTF16(xunicode.BigEndian, xunicode.ExpectBOM).NewDecoder().Bytes(raw)
		return string(b), err
	}
	valid := raw
	if truncated {
		// A cut may split the last letter of valid UTF-8.
		for i := 0; i < utf8.UTFMax && len(valid) > 0 && !utf8.Valid(valid); i++ {
			valid = valid[:len(valid)-1]
		}
	}
	if utf8.Valid(valid) {
		return string(valid), nil
	}
	b, err := charmap.Windows1252.NewDecoder().Bytes(raw)
	return string(b), err
}

// cutText cuts s to at most max bytes, at a letter's boundary.
func cutText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max], true
}

// hasText tells whether s holds a letter or a digit.
func hasText(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}
