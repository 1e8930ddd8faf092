-- What the DataStore knows of each resource's table: the fields as created (ids, types, info)
-- and the unique key. The rows live in the schema `datastore`, a table per resource.
CREATE SCHEMA IF NOT EXISTS datastore;
CREATE TABLE datastore_table (
    resource_id TEXT PRIMARY KEY,
    table_name TEXT NOT NULL UNIQUE,
    fields TEXT NOT NULL,
    primary_key TEXT NOT NULL DEFAULT '[]',
    created TEXT NOT NULL
);
-- CKAN's full-text trigger: every column not starting with "_", as text, into _full_text.
CREATE OR REPLACE FUNCTION datastore.full_text() RETURNS trigger AS $$
BEGIN
    NEW._full_text := (
        SELECT to_tsvector('english', coalesce(string_agg(value, ' '), ''))
        FROM jsonb_each_text(to_jsonb(NEW))
        WHERE key NOT LIKE '\_%'
    );
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
