-- Lookups that read one row whatever the catalog's size (issue 28).
-- A worker claims the oldest due job of a queue: the index serves the claim's whole order
-- (run_after, then created, then id), so a claim reads one row, not every queued job of the
-- queue sorted (16 ms with 10,000 queued).
DROP INDEX job_claim;
CREATE INDEX job_claim ON job(state, queue, run_after, created, id);
-- A resource named by its name (resource_show, the views, the DataStore accept an id or a
-- name): without it a lookup by a name, or by an id that matches nothing, read every resource.
CREATE INDEX resource_name ON resource(name);
