package auth

// MaxUnknownKeys is maxUnknownKeys, for the tests of package auth_test.
const MaxUnknownKeys = maxUnknownKeys

// UnknownKeys is how many unknown key ids a remembers.
func (a *Authenticator) UnknownKeys() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.unknown)
}

// Windows is how many windows l remembers.
func (l *Limiter) Windows() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.windows)
}
