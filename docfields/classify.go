package docfields

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"
)

// A firm's kind classifier: multinomial naive Bayes over the hashed words
// and word pairs of the documents whose kind a person set. It is asked
// only where the reader's own kind is weak, and answers only when it is
// sure and the document's words are mostly ones it has seen for that kind.

// Classifier limits.
const (
	// maxFeatures bounds the features kept of one document: its first
	// words say what it is.
	maxFeatures = 512
	// featureSpace is the number of hash buckets.
	featureSpace = 1 << 20
	// kindSure is the posterior a kind needs.
	kindSure = 0.9
	// kindSeen is the share of a document's features the kind's examples
	// must hold: a document unlike every example is not classified.
	kindSeen = 0.5
)

// KindFeatures are the hashed words (letters only, lower-case) and word
// pairs of a document, each once.
func KindFeatures(pages []string) []uint32 {
	words := strings.FieldsFunc(strings.ToLower(strings.Join(pages, "\n")), func(r rune) bool { return !unicode.IsLetter(r) })
	seen := map[uint32]bool{}
	var out []uint32
	add := func(s string) {
		h := fnv.New32a()
		h.Write([]byte(s))
		f := h.Sum32() % featureSpace
		if !seen[f] && len(out) < maxFeatures {
			seen[f] = true
			out = append(out, f)
		}
	}
	prev := ""
	for _, w := range words {
		if len([]rune(w)) < 2 {
			prev = ""
			continue
		}
		add(w)
		if prev != "" {
			add(prev + " " + w)
		}
		prev = w
	}
	return out
}

// EncodeFeatures writes features as the store keeps them.
func EncodeFeatures(features []uint32) []byte {
	out := make([]byte, 4*len(features))
	for i, f := range features {
		binary.LittleEndian.PutUint32(out[4*i:], f)
	}
	return out
}

// DecodeFeatures reads what EncodeFeatures wrote.
func DecodeFeatures(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// KindExample is a document whose kind a person set.
type KindExample struct {
	Kind     string
	Features []uint32
}

// ClassifyKind returns the kind the examples say a document of these
// features is, and its posterior; "" when no kind is sure.
func ClassifyKind(features []uint32, examples []KindExample) (string, float64) {
	if len(features) == 0 || len(examples) == 0 {
		return "", 0
	}
	counts := map[string]map[uint32]int{}
	totals, docs := map[string]int{}, map[string]int{}
	vocabulary := map[uint32]bool{}
	for _, e := range examples {
		if counts[e.Kind] == nil {
			counts[e.Kind] = map[uint32]int{}
		}
		for _, f := range e.Features {
			counts[e.Kind][f]++
			vocabulary[f] = true
		}
		totals[e.Kind] += len(e.Features)
		docs[e.Kind]++
	}
	kinds := slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	})
	scores := make([]float64, len(kinds))
	for i, k := range kinds {
		s := math.Log(float64(docs[k]) / float64(len(examples)))
		for _, f := range features {
			s += math.Log(float64(counts[k][f]+1) / float64(totals[k]+len(vocabulary)+1))
		}
		scores[i] = s
	}
	best := 0
	for i := range scores {
		if scores[i] > scores[best] {
			best = i
		}
	}
	var sum float64
	for _, s := range scores {
		sum += math.Exp(s - scores[best])
	}
	p := 1 / sum
	seen := 0
	for _, f := range features {
		if counts[kinds[best]][f] > 0 {
			seen++
		}
	}
	if p < kindSure || float64(seen) < kindSeen*float64(len(features)) {
		return "", p
	}
	return kinds[best], p
}
