package analysis

import (
	"context"
	"encoding/json"
	"maps"
	"strings"

	"acctapi/db"
	"acctapi/docfields"
	"acctapi/document"
)

// anchoredConfidence is the confidence of a value read where a person's
// correction of the same supplier's document pointed (TestLearningEval
// measures it).
const anchoredConfidence = 0.95

// Teach is the store's db.Teacher: where each corrected value stands in the
// document's text, the supplier's keys, and the document's words for the
// firm's kind classifier.
func Teach(text string, fields map[string]string, corrected []string) db.Lesson {
	pages := strings.Split(text, "\f")
	l := db.Lesson{Suppliers: docfields.SupplierKeys(fields), Anchors: map[string]string{},
		KindFeatures: docfields.EncodeFeatures(docfields.KindFeatures(pages))}
	for _, name := range corrected {
		v, ok := fields[name]
		if !ok {
			continue
		}
		if a, ok := docfields.FindAnchor(pages, name, v); ok {
			if b, err := json.Marshal(a); err == nil {
				l.Anchors[name] = string(b)
			}
		}
	}
	return l
}

// lessonsSource finds what a firm learnt; the store's FindLessons.
type lessonsSource interface {
	FindLessons(ctx context.Context, clientID string, suppliers []string, kinds bool) (*db.Lessons, error)
}

// withLessons reads a document read from its text again with what its
// client's firm learnt: each field a correction of the same supplier's
// documents anchored, where the anchor finds a value, and the kind from
// the firm's classifier where the reader's own is none or other. An
// e-invoice states its own values and is left as it is.
func withLessons(ctx context.Context, store lessonsSource, clientID string, r db.AnalysisResult) (db.AnalysisResult, error) {
	if r.Status != db.AnalysisDone || r.Text == nil || r.Fields == nil ||
		r.Source != nil && *r.Source == db.TextFromEInvoice {
		return r, nil
	}
	weakKind := r.Kind == nil || *r.Kind == document.Other
	suppliers := docfields.SupplierKeys(r.Fields.Values)
	if len(suppliers) == 0 && !weakKind {
		return r, nil
	}
	lessons, err := store.FindLessons(ctx, clientID, suppliers, weakKind)
	if err != nil {
		return r, err
	}
	pages := strings.Split(r.Text.Text, "\f")
	var anchors []docfields.Anchor
	for _, encoded := range lessons.Anchors {
		var a docfields.Anchor
		if json.Unmarshal([]byte(encoded), &a) == nil && document.IsField(a.Field) {
			anchors = append(anchors, a)
		}
	}
	if found := docfields.ReadAnchors(pages, anchors); len(found) > 0 {
		r.Fields = &db.DocumentFields{Values: maps.Clone(r.Fields.Values), EInvoice: r.Fields.EInvoice, Terms: r.Fields.Terms}
		r.Confidence = maps.Clone(r.Confidence)
		if r.Confidence == nil {
			r.Confidence = map[string]float64{}
		}
		for name, v := range found {
			r.Fields.Values[name] = v
			r.Confidence[name] = anchoredConfidence
		}
	}
	if weakKind && len(lessons.KindExamples) > 0 {
		examples := make([]docfields.KindExample, len(lessons.KindExamples))
		for i, e := range lessons.KindExamples {
			examples[i] = docfields.KindExample{Kind: e.Kind, Features: docfields.DecodeFeatures(e.Features)}
		}
		if kind, _ := docfields.ClassifyKind(docfields.KindFeatures(pages), examples); kind != "" {
			r.Kind = &kind
		}
	}
	return r, nil
}
