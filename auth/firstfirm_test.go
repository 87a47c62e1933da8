package auth_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"acctapi/auth"
)

func TestFirstFirm(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t, time.Now)
	firm, key, stored, err := auth.FirstFirm(ctx, d, "Muster & Partner")
	if err != nil {
		t.Fatalf("FirstFirm: got %v, want nil", err)
	}
	if found, err := d.DeploymentFirm(ctx); err != nil || found.ID != firm.ID || found.Name != "Muster & Partner" {
		t.Errorf("the deployment's firm: got %+v, %v, want the firm made, by its name", found, err)
	}
	p, err := auth.NewAuthenticator(d, time.Now).Authenticate(ctx, key)
	if err != nil {
		t.Fatalf("Authenticate(the first key): got %v, want nil", err)
	}
	if stored.ClientID != nil || stored.Name != "first accountant key" || p.FirmID != firm.ID ||
		!slices.Equal(p.Permissions, auth.DefaultPermissions(auth.Accountant)) {
		t.Errorf("the first key: got %+v, %+v, want an accountant key of the firm with every permission", stored, p)
	}
}
