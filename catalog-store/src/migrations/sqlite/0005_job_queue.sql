-- The queues background jobs were ever enqueued on (CKAN's `rq.Queue.all()`): job_clear
-- without `queues` answers every known queue, including those emptied since.
CREATE TABLE job_queue (
    name TEXT PRIMARY KEY,
    created TEXT NOT NULL
);
INSERT INTO job_queue (name, created) SELECT queue, MIN(created) FROM job GROUP BY queue;
-- Running jobs by heartbeat: the stale-job check looks them up.
CREATE INDEX job_heartbeat ON job(state, heartbeat);
