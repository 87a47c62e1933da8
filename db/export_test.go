package db

import "database/sql"

// NewIDAt exposes newIDAt so that tests can make ids at chosen times.
var NewIDAt = newIDAt

// Handles exposes the store's writer and reader pools, so that tests can read
// the pragmas each connection was opened with.
func (db *DB) Handles() (write, read *sql.DB) { return db.write, db.read }
