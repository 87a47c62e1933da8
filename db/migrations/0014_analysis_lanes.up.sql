-- Reading runs in two lanes: every job starts in the fast one (XML, text,
-- a PDF's text layer), and a document that needs OCR is handed to the ocr
-- lane, so that cheap documents never wait behind photos. Within a lane
-- the jobs are taken in the order of their turn: a job's turn is one past
-- its client's last job in the lane, and never before the lane's turn (the
-- turn of the job last claimed in it), so clients take turns and one
-- client's thousand photos do not delay another's one invoice. The jobs
-- queued before lanes keep their order: turn 0, then the time they are due.
ALTER TABLE analysis_jobs ADD COLUMN lane TEXT NOT NULL DEFAULT 'fast' CHECK (lane IN ('fast', 'ocr'));
ALTER TABLE analysis_jobs ADD COLUMN turn INTEGER NOT NULL DEFAULT 0;
DROP INDEX analysis_jobs_due;
CREATE INDEX analysis_jobs_turns ON analysis_jobs (lane, claimed_at, turn, next_attempt_at, file_id);
CREATE INDEX analysis_jobs_client_turns ON analysis_jobs (client_id, lane, turn);

CREATE TABLE analysis_lanes (
    lane TEXT    NOT NULL PRIMARY KEY CHECK (lane IN ('fast', 'ocr')),
    turn INTEGER NOT NULL
);
INSERT INTO analysis_lanes (lane, turn) VALUES ('fast', 0), ('ocr', 0);
