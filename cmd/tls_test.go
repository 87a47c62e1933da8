package cmd

import (
	"testing"
)

func TestHTTPSDefaults(t *testing.T) {
	t.Setenv("ACCTAPI_ADDR", "")
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--tls-domain", "api.example.test"}, "", ":443"},
		{[]string{"--tls-domain", "api.example.test", "--addr", ":8443"}, "", ":8443"},
		{[]string{"--tls-domain", "api.example.test"}, "0.0.0.0:9443", "0.0.0.0:9443"},
		{[]string{"--tls-cert", "c.pem", "--tls-key", "k.pem"}, "", "127.0.0.1:8080"},
	} {
		t.Setenv("ACCTAPI_ADDR", c.env)
		cfg := &Config{}
		cmd := newServeCmd(cfg)
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		defaultToHTTPS(cmd, cfg)
		if cfg.Addr != c.want {
			t.Errorf("%v with ACCTAPI_ADDR=%q: --addr %q, want %q", c.args, c.env, cfg.Addr, c.want)
		}
	}
}
