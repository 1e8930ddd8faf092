-- The rest of CKAN's core tables (issue 12): tag vocabularies, dataset relationships, task
-- status, term translations, runtime-editable configuration, the background job queue, and
-- API token expiry.
-- seq keeps creation order, in which CKAN lists vocabularies and a vocabulary's tags.
CREATE TABLE vocabulary (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    seq INTEGER NOT NULL DEFAULT 0
);
ALTER TABLE tag ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tag_vocabulary ON tag(vocabulary_id, seq);
CREATE TABLE package_relationship (
    id TEXT PRIMARY KEY,
    subject_package_id TEXT NOT NULL,
    object_package_id TEXT NOT NULL,
    type TEXT NOT NULL,
    comment TEXT,
    state TEXT NOT NULL DEFAULT 'active',
    -- CKAN lists relationships in table order, a changed row last: seq is that order.
    seq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX package_relationship_subject ON package_relationship(subject_package_id);
CREATE INDEX package_relationship_object ON package_relationship(object_package_id);
-- One active relationship per stored triple: of two writers creating the same one at once, the
-- second fails here and runs again, finding the first's.
CREATE UNIQUE INDEX package_relationship_active
    ON package_relationship(subject_package_id, object_package_id, type) WHERE state = 'active';
CREATE TABLE task_status (
    id TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    task_type TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    state TEXT,
    error TEXT,
    last_updated TEXT,
    UNIQUE (entity_id, task_type, key)
);
CREATE TABLE term_translation (
    term TEXT NOT NULL,
    term_translation TEXT NOT NULL,
    lang_code TEXT NOT NULL,
    -- CKAN lists translations in table order, a rewritten one last: seq is that order.
    seq INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (term, lang_code)
);
CREATE TABLE system_info (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE job (
    id TEXT PRIMARY KEY,
    queue TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    run_after TEXT NOT NULL,
    created TEXT NOT NULL,
    started TEXT,
    finished TEXT,
    heartbeat TEXT,
    worker TEXT,
    error TEXT,
    result TEXT
);
CREATE INDEX job_claim ON job(state, queue, run_after);
ALTER TABLE api_token ADD COLUMN expires_at TEXT;
