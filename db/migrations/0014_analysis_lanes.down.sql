DROP TABLE analysis_lanes;
DROP INDEX analysis_jobs_client_turns;
DROP INDEX analysis_jobs_turns;
ALTER TABLE analysis_jobs DROP COLUMN turn;
ALTER TABLE analysis_jobs DROP COLUMN lane;
CREATE INDEX analysis_jobs_due ON analysis_jobs (claimed_at, next_attempt_at);
