package docread

// Loaded says whether the PDF engine is loaded.
func (r *Reader) Loaded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.engine != nil
}
