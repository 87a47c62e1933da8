package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flHeapPeak samples the heap in use every millisecond until stop is
// closed, and returns the highest sample above base. When a sample passes
// base+limit it calls over once, so that a test can stop its load before it
// exhausts the machine.
func flHeapPeak(base, limit uint64, stop <-chan struct{}, over func()) <-chan uint64 {
	peak := make(chan uint64, 1)
	go func() {
		var high uint64
		var once sync.Once
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > base {
				high = max(high, m.HeapInuse-base)
			}
			if high > limit {
				once.Do(over)
			}
			select {
			case <-stop:
				peak <- high
				return
			case <-tick.C:
			}
		}
	}()
	return peak
}

// flStream writes a body piece by piece and keeps the first error, so that
// a test can send megabytes made of a few shared slices.
type flStream struct {
	w   io.Writer
	err error
}

func (s *flStream) put(pieces ...[]byte) {
	for _, p := range pieces {
		if s.err == nil {
			_, s.err = s.w.Write(p)
		}
	}
}

// flHostileUpload sends an upload whose body write makes (ending it with a
// small file and the closing delimiter), as the request sends it: the
// client holds no copy of the body.
func flHostileUpload(ctx context.Context, api *testAPI, write func(s *flStream)) (int, error) {
	pr, pw := io.Pipe()
	go func() {
		s := &flStream{w: pw}
		write(s)
		s.put([]byte("--"+flBoundary+"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\n"),
			flPDF, []byte("\r\n--"+flBoundary+"--\r\n"))
		pw.CloseWithError(s.err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.server.URL+"/v1/files", pr)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", flMultipart)
	req.Header.Set("Authorization", "Bearer "+api.accountantKey)
	req.Header.Set("x-client-id", api.client.ID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

// TestUploadFieldsMemory sends the memory attack of the hardening issue: 24
// concurrent uploads, each with 199 form fields of 64 KiB (about 65 MB of
// heap per request and 1.9 GB in all while every field was kept and
// copied), and with part headers of 9 MiB (multipart's own limit is 10 MiB
// per part). Fields share a 64 KiB budget and part headers have a limit of
// their own, so the heap stays within 64 MiB of what it was before. This
// bounds memory, not time: the load stops as soon as the bound is broken.
func TestUploadFieldsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 24 concurrent uploads of 12 MiB each")
	}
	// The default upload limit of serve, so that the bodies fit under it.
	api := newTestAPI(t, func(c *Config) { c.MaxUploadBytes = 100 << 20 })
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	value := bytes.Repeat([]byte("x"), maxFormFields)
	const requests = 24
	// All of them may run at once: the key's bound on running uploads
	// (16) would refuse some with 429, depending on timing.
	api.handler.uploadLimits.perKey = requests
	padding := bytes.Repeat([]byte("p"), 1<<20)
	delimiter := []byte("--" + flBoundary + "\r\n")
	crlf := []byte("\r\n")
	const limit = 64 << 20

	for _, tc := range []struct {
		name  string
		write func(s *flStream)
	}{
		{"many large fields", func(s *flStream) {
			s.put(delimiter, []byte("Content-Disposition: form-data; name=workspaceId\r\n\r\n"+ws), crlf)
			for i := range maxFormParts - 2 {
				name := "labelIds"
				if i%2 == 1 {
					name = fmt.Sprintf("note%d", i)
				}
				s.put(delimiter, []byte("Content-Disposition: form-data; name="+name+"\r\n\r\n"), value, crlf)
			}
		}},
		{"large part headers", func(s *flStream) {
			for i := range 10 {
				s.put(delimiter, []byte(fmt.Sprintf("Content-Disposition: form-data; name=note%d\r\n", i)))
				for j := range 9 {
					s.put([]byte(fmt.Sprintf("X-Padding-%d: ", j)), padding, crlf)
				}
				s.put(crlf, []byte("value"), crlf)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logsBefore := len(api.logs.String())
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stop := make(chan struct{})
			peak := flHeapPeak(m.HeapInuse, limit, stop, cancel)

			var wg sync.WaitGroup
			var answered, failed atomic.Int32
			for range requests {
				wg.Go(func() {
					status, err := flHostileUpload(ctx, api, tc.write)
					switch {
					case err != nil:
						// The server may close the connection before the
						// client has sent the rest of its body.
						failed.Add(1)
					case status != http.StatusBadRequest:
						t.Errorf("hostile upload: got %d, want 400", status)
					default:
						answered.Add(1)
					}
				})
			}
			wg.Wait()
			close(stop)
			high := <-peak
			t.Logf("peak heap %.1f MiB over the baseline; %d answers, %d connections closed early",
				float64(high)/(1<<20), answered.Load(), failed.Load())
			if high > limit {
				t.Fatalf("peak heap %.0f MiB over the baseline, want at most %d MiB", float64(high)/(1<<20), limit>>20)
			}
			// Every upload reached the handler and was refused there.
			logs := api.logs.String()[logsBefore:]
			if n := strings.Count(logs, `"route":"/v1/files","status":400`); n != requests {
				t.Errorf("request log: %d uploads refused with 400, want %d:\n%s", n, requests, logs)
			}
		})
	}
}
