package db

import (
	"context"
	"strings"
	"testing"
)

// A claim walks the lane's index in turn order, and a job's turn is found
// in the client's index: neither sorts nor scans the queue, so both stay
// cheap with 100,000 jobs queued.
func TestAnalysisQueuePlans(t *testing.T) {
	d := openWriterTestDB(t)
	ctx := context.Background()
	tx, err := d.beginRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rec := &planRecorder{poolTx: poolTx{tx}, t: t}
	rec.plan(ctx, claimAnalyses, []any{LaneFast, 0, 4})
	rec.plan(ctx, `SELECT `+nextTurn, []any{"client", LaneOCR})
	for i, index := range []string{"USING INDEX analysis_jobs_turns (lane=? AND claimed_at=?)", "USING COVERING INDEX analysis_jobs_client_turns (client_id=? AND lane=?)"} {
		plan := rec.plans[i]
		if !strings.Contains(plan, index) || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN j") ||
			strings.Contains(plan, "SCAN analysis_jobs") {
			t.Errorf("plan:\n%s\nwant it %s, with no scan and no sort", plan, index)
		}
	}
}
