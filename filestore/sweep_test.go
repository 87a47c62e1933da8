package filestore_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"acctapi/filestore"
)

func TestSweep(t *testing.T) {
	s, dir := mustOpen(t)
	mustCommit(t, s, random(1, 100), "corphanorphanorphanorp0a1")
	mustCommit(t, s, random(2, 100), "cknownknownknownknown0a1")
	known := func(ids []string) (map[string]bool, error) {
		return map[string]bool{"cknownknownknownknown0a1": true}, nil
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, nil))
	if err := filestore.Sweep(s, known, logger); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if got := tree(t, dir); len(got) != 1 || !strings.HasSuffix(got[0], "/cknownknownknownknown0a1") {
		t.Errorf("after Sweep the store holds %v, want the known file alone", got)
	}
	if !strings.Contains(log.String(), `"msg":"removed unrecorded upload files","count":1`) {
		t.Errorf("Sweep logged %s, want the count removed", log.String())
	}

	log.Reset()
	if err := filestore.Sweep(s, known, logger); err != nil || log.Len() != 0 {
		t.Errorf("a Sweep with nothing to remove: %v, logged %q, want nil and nothing", err, log.String())
	}
	boom := errors.New("database locked")
	if err := filestore.Sweep(s, func([]string) (map[string]bool, error) { return nil, boom }, logger); !errors.Is(err, boom) {
		t.Errorf("Sweep with a failing lookup: got %v, want its error", err)
	}
}
