package db

import (
	"strings"
	"unicode"
)

// Limits of a search, documented with the list's q parameter.
const (
	MaxSearchLength = 500 // characters of q
	MaxSearchWords  = 32  // terms (words and phrases) of q
)

// SearchQuery is a full-text search as the index runs it. Every term must
// match a word of a file's name, text or fields; case and accents do not
// matter; the last term also matches as a prefix; "quoted words" are a
// phrase; a term with punctuation inside (RE-2026-0042) is the phrase of
// its parts, so that it is found as written.
type SearchQuery struct {
	match string
}

// ParseSearch turns q into a search. ok is false when q holds no letter or
// digit, or more than MaxSearchWords terms.
func ParseSearch(q string) (query *SearchQuery, ok bool) {
	var terms [][]string
	prefix := false
	for i, part := range strings.Split(q, `"`) {
		if i%2 == 1 {
			// A quoted phrase: its words in order, never a prefix.
			if words := searchWords(part); len(words) > 0 {
				terms, prefix = append(terms, words), false
			}
			continue
		}
		for _, field := range strings.Fields(part) {
			if words := searchWords(field); len(words) > 0 {
				terms, prefix = append(terms, words), true
			}
		}
	}
	if len(terms) == 0 || len(terms) > MaxSearchWords {
		return nil, false
	}
	var b strings.Builder
	for i, words := range terms {
		if i > 0 {
			b.WriteString(" AND ")
		}
		// Each word is quoted, and holds only letters and digits, so no
		// word can be read as an operator or a column.
		b.WriteByte('"')
		b.WriteString(strings.Join(words, " "))
		b.WriteByte('"')
		if prefix && i == len(terms)-1 {
			b.WriteByte('*')
		}
	}
	return &SearchQuery{match: b.String()}, true
}

// searchWords splits s into its words: the runs of letters, digits and the
// marks that combine with them, as the index's tokenizer does.
func searchWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.In(r, unicode.L, unicode.N, unicode.M, unicode.Co)
	})
}
