package handlers

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// uploadLimits bound uploads, documented in docs/security.md: each holds a
// socket, a goroutine and a temporary file for as long as it runs, so an
// upload must end, and only so many may run at once.
type uploadLimits struct {
	// After grace an upload must have averaged minRate bytes a second: a
	// byte every 30 s no longer keeps it open.
	grace   time.Duration
	minRate int64
	// perLink, perKey and perServer bound the uploads running at once
	// through one collect link, under one API key and on the server.
	perLink, perKey, perServer int
}

// defaultUploadLimits: 16 KiB/s is a slow mobile line's upload, at which a
// 100 MiB file takes under two hours, the longest any upload can last.
var defaultUploadLimits = uploadLimits{grace: 30 * time.Second, minRate: 16 << 10, perLink: 4, perKey: 16, perServer: 128}

// uploadBusyRetryAfter is the Retry-After, in seconds, of an upload refused
// because too many run at once.
const uploadBusyRetryAfter = 10

// uploadSlots counts the uploads running, per owner (a link or an API key)
// and in all.
type uploadSlots struct {
	mu     sync.Mutex
	total  int
	owners map[string]int
}

// take claims a slot for an upload of owner, which may run max at once on a
// server that runs at most server, or refuses it with a 429. The caller
// calls release once the upload's body is read.
func (s *uploadSlots) take(owner string, max, server int, what string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.owners[owner] >= max:
		return nil, errTooManyUploads(fmt.Sprintf("%d uploads are running %s, the most at once", max, what))
	case s.total >= server:
		return nil, errTooManyUploads(fmt.Sprintf("%d uploads are running on the server, the most at once", server))
	}
	if s.owners == nil {
		s.owners = map[string]int{}
	}
	s.owners[owner]++
	s.total++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.total--
		if s.owners[owner]--; s.owners[owner] == 0 {
			delete(s.owners, owner)
		}
	}, nil
}

func errTooManyUploads(why string) *apiError {
	return &apiError{http.StatusTooManyRequests, "rate_limit", "too_many_uploads",
		fmt.Sprintf("%s: retry in %d s, once one has ended", why, uploadBusyRetryAfter)}
}
