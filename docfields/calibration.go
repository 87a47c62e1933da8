package docfields

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"

	"acctapi/document"
)

// margin is how a value won: its score, and the best score of another
// value for the same field (0 when there was none).
type margin struct{ best, other float64 }

// calibratedFields are the fields whose confidence is looked up by the
// class of their margin: those a score chooses among candidates.
var calibratedFields = []string{document.IssueDate, document.DueDate, document.DocumentNumber, document.TotalAmount}

// evidenceClass names what speaks for a value: the document's group (a
// receipt or any other), the field, and its score and lead over the
// runner-up, each in one of three bands.
func evidenceClass(group, field string, m margin) string {
	band := func(x, lo, hi float64) string {
		switch {
		case x >= hi:
			return "high"
		case x >= lo:
			return "mid"
		}
		return "low"
	}
	lead := m.best - m.other
	if m.other == 0 {
		lead = math.Inf(1)
	}
	return fmt.Sprintf("%s/%s/score-%s/lead-%s", group, field, band(m.best, 1.5, 3), band(lead, 0.5, 1.5))
}

// calibration maps an evidence class to the share of values of that class
// read right on real documents no one here wrote, each read by a fit that
// never saw its family (seller or shop): the lower bound of its 95%
// interval, and no more than its share on any tier that saw it often.
// TestFitWeights with ACCTAPI_EVAL_FIT=1 measures and rewrites it.
//
//go:embed calibration.json
var calibrationJSON []byte

var calibration = func() map[string]float64 {
	var m map[string]float64
	if err := json.Unmarshal(calibrationJSON, &m); err != nil {
		panic("docfields: calibration.json: " + err.Error())
	}
	return m
}()
