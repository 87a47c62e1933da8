package cmd

import (
	"testing"
)

func TestServeAllowPrivateWebhooksFlag(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, false},
		{"true", nil, true},
		{"1", nil, true},
		{"", []string{"--allow-private-webhooks"}, true},
		{"true", []string{"--allow-private-webhooks=false"}, false},
	} {
		t.Setenv("ACCTAPI_ALLOW_PRIVATE_WEBHOOKS", tc.env)
		cfg := &Config{}
		if err := newServeCmd(cfg).ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		if cfg.AllowPrivateWebhooks != tc.want {
			t.Errorf("env %q, args %v: AllowPrivateWebhooks %v, want %v", tc.env, tc.args, cfg.AllowPrivateWebhooks, tc.want)
		}
	}
}
