package cmd

import (
	"strings"
	"testing"
)

func TestHealthCommand(t *testing.T) {
	cfg, _, _ := testConfig(t.TempDir())
	r := startServer(t, cfg)
	addr := r.srv.Addr()

	out := mustExecute(t, "health", "--addr", addr)
	if want := "ok: acctapi dev at http://" + addr + "/v1/health\n"; out != want {
		t.Errorf("health: %q, want %q", out, want)
	}
	port := addr[strings.LastIndexByte(addr, ':'):]
	if out := mustExecute(t, "health", "--addr", "0.0.0.0"+port); !strings.HasPrefix(out, "ok:") {
		t.Errorf("health on an address of all interfaces: %q, want it asked on 127.0.0.1", out)
	}
	if out := mustExecute(t, "health", "--url", r.base+"/health"); !strings.HasPrefix(out, "ok:") {
		t.Errorf("health --url: %q", out)
	}
	if stderr := mustFail(t, "health", "--url", r.base+"/nothing"); !strings.Contains(stderr, "answered 404: no route for GET /v1/nothing") {
		t.Errorf("health of a route that is not the health route: %q", stderr)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if stderr := mustFail(t, "health", "--addr", addr); !strings.Contains(stderr, "no answer from http://"+addr+"/v1/health") {
		t.Errorf("health of a stopped server: %q", stderr)
	}
	if stderr := mustFail(t, "health", "--addr", "nonsense"); !strings.Contains(stderr, `--addr "nonsense" is not host:port`) {
		t.Errorf("health --addr nonsense: %q", stderr)
	}
}
