package docfields

import (
	"os"
	"testing"
)

func TestDev(t *testing.T) {
	b, err := os.ReadFile(os.Getenv("DOC"))
	if err != nil {
		t.Skip()
	}
	t.Logf("%+v", Read(string(b)))
}
