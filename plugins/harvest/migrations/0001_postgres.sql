-- ckanext-harvest's tables (harvest_source, harvest_job, harvest_object and their errors),
-- with what a durable, resumable run adds: a job's paging state and options, an object's
-- content hash, and unique keys that make "one job running per source" and "one current
-- object (one dataset) per source and guid" rules of the database.
CREATE TABLE harvest_source (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    config TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    type TEXT NOT NULL,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    user_id TEXT NOT NULL DEFAULT '',
    publisher_id TEXT NOT NULL DEFAULT '',
    frequency TEXT NOT NULL DEFAULT 'MANUAL',
    next_run TEXT,
    api_key TEXT
);

CREATE TABLE harvest_job (
    id TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    gather_started TEXT,
    gather_finished TEXT,
    finished TEXT,
    source_id TEXT NOT NULL,
    status TEXT NOT NULL,
    force_all BOOLEAN NOT NULL DEFAULT FALSE,
    force_delete BOOLEAN NOT NULL DEFAULT FALSE,
    gather_complete BOOLEAN NOT NULL DEFAULT FALSE,
    gather_state TEXT NOT NULL DEFAULT '{}',
    last_action TEXT
);
CREATE UNIQUE INDEX harvest_job_one_active ON harvest_job (source_id)
    WHERE status IN ('New', 'Running');
CREATE INDEX harvest_job_source ON harvest_job (source_id, created);

CREATE TABLE harvest_object (
    id TEXT PRIMARY KEY,
    guid TEXT NOT NULL DEFAULT '',
    current BOOLEAN NOT NULL DEFAULT FALSE,
    gathered TEXT NOT NULL,
    fetch_started TEXT,
    content TEXT,
    fetch_finished TEXT,
    import_started TEXT,
    import_finished TEXT,
    state TEXT NOT NULL DEFAULT 'WAITING',
    metadata_modified_date TEXT,
    retry_times INTEGER NOT NULL DEFAULT 0,
    harvest_job_id TEXT NOT NULL,
    harvest_source_id TEXT NOT NULL,
    package_id TEXT,
    report_status TEXT,
    content_hash TEXT
);
CREATE UNIQUE INDEX harvest_object_job_guid ON harvest_object (harvest_job_id, guid);
CREATE UNIQUE INDEX harvest_object_current ON harvest_object (harvest_source_id, guid)
    WHERE current = TRUE;
CREATE INDEX harvest_object_package ON harvest_object (package_id);
-- Every lookup of a source's record (its current object, the objects of a guid) goes through
-- this one: without it, marking an import current scans the source's whole history.
CREATE INDEX harvest_object_source_guid ON harvest_object (harvest_source_id, guid);

CREATE TABLE harvest_gather_error (
    id TEXT PRIMARY KEY,
    harvest_job_id TEXT NOT NULL,
    message TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX harvest_gather_error_job ON harvest_gather_error (harvest_job_id);

CREATE TABLE harvest_object_error (
    id TEXT PRIMARY KEY,
    harvest_object_id TEXT NOT NULL,
    message TEXT NOT NULL,
    stage TEXT NOT NULL DEFAULT 'Fetch',
    line INTEGER,
    created TEXT NOT NULL
);
CREATE INDEX harvest_object_error_object ON harvest_object_error (harvest_object_id);
