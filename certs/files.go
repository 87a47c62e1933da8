package certs

import (
	"crypto/tls"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Files serves the certificate of a pair of PEM files and loads them again
// when they change: a handshake looks at the files' modification times and
// sizes, at most once per check interval (two stats). A pair that does not
// load, such as a new certificate whose key is not written yet, leaves the
// last good one in place until the next look.
type Files struct {
	certPath, keyPath string
	every             time.Duration
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]fileStamp // of the files cert was loaded from
	checked time.Time
}

// fileStamp is what tells a file changed.
type fileStamp struct {
	mod  time.Time
	size int64
}

// LoadFiles loads the certificate chain and key, to be looked at again
// every interval.
func LoadFiles(certPath, keyPath string, every time.Duration, log *slog.Logger) (*Files, error) {
	f := &Files{certPath: certPath, keyPath: keyPath, every: every, log: log}
	stamp, err := f.stamps()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, err
	}
	f.cert, f.stamp, f.checked = &cert, stamp, time.Now()
	return f, nil
}

// GetCertificate is the tls.Config's GetCertificate.
func (f *Files) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := time.Now(); now.Sub(f.checked) >= f.every {
		f.checked = now
		f.reload()
	}
	return f.cert, nil
}

// reload loads the files again if they changed since the last load.
func (f *Files) reload() {
	stamp, err := f.stamps()
	if err != nil {
		f.log.Warn("TLS certificate files cannot be read; serving the last certificate loaded", "error", err)
		return
	}
	if stamp == f.stamp {
		return
	}
	cert, err := tls.LoadX509KeyPair(f.certPath, f.keyPath)
	if err != nil {
		f.log.Warn("TLS certificate files changed but do not load; serving the last certificate loaded", "error", err)
		return
	}
	f.cert, f.stamp = &cert, stamp
	f.log.Info("TLS certificate loaded again", "cert", f.certPath, "not_after", cert.Leaf.NotAfter)
}

func (f *Files) stamps() ([2]fileStamp, error) {
	var stamp [2]fileStamp
	for i, path := range []string{f.certPath, f.keyPath} {
		info, err := os.Stat(path)
		if err != nil {
			return stamp, err
		}
		stamp[i] = fileStamp{info.ModTime(), info.Size()}
	}
	return stamp, nil
}
