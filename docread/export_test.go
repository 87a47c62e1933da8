package docread

// Loaded says whether the PDF engine is loaded.
func (r *Reader) Loaded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.engine != nil
}

// Starting says whether the PDF engine is being started.
func (r *Reader) Starting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loading != nil
}
