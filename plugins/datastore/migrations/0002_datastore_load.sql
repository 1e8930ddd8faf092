-- The loader's record of each resource's latest load (XLoader's task_status row): its job,
-- state (pending, running, complete, error), the hash of the file it loaded last, the
-- table it is filling (dropped if the load dies before swapping it in), rows, messages.
CREATE TABLE datastore_load (
    resource_id TEXT PRIMARY KEY,
    job_id TEXT,
    load_id TEXT,
    state TEXT NOT NULL,
    file_hash TEXT,
    loading_table TEXT,
    rows_loaded BIGINT,
    error TEXT,
    logs TEXT NOT NULL DEFAULT '[]',
    requested TEXT NOT NULL,
    finished TEXT,
    last_updated TEXT NOT NULL
);
