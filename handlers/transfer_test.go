package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// slowReader hands out its bytes in small chunks with a pause before each.
type slowReader struct {
	r     io.Reader
	chunk int
	pause time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.pause)
	return s.r.Read(p[:min(len(p), s.chunk)])
}

// A slow but steady upload outlives the server's whole-request timeouts: the
// upload's deadline moves with each chunk.
func TestSlowUploadOutlivesServerTimeouts(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about a second")
	}
	api := newTestAPI(t)
	server := httptest.NewUnstartedServer(api.handler)
	server.Config.ReadTimeout = 200 * time.Millisecond
	server.Config.WriteTimeout = 200 * time.Millisecond
	server.Start()
	defer server.Close()

	workspace := api.mustCreateWorkspace(api.client.ID, "Uploads")
	content := make([]byte, 64<<10)
	body := &slowReader{
		r:     io.MultiReader(flReader(t, flField("workspaceId", workspace), flFilePart("slow.bin", "", content))),
		chunk: 8 << 10, pause: 80 * time.Millisecond,
	}
	req, err := http.NewRequest("POST", server.URL+"/v1/files", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", flMultipart)
	req.Header.Set("Authorization", "Bearer "+api.accountantKey)
	req.Header.Set("x-client-id", api.client.ID)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("slow upload over %v against 200 ms server timeouts: got %d, want 201", time.Since(start), res.StatusCode)
	}
}

// flReader is the multipart body of the parts, as a reader.
func flReader(t *testing.T, parts ...flPart) io.Reader {
	t.Helper()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(flWriteParts(pw, parts...)) }()
	return pr
}
