-- Aliases of DataStore tables (CKAN's read-only views named by datastore_create's `aliases`):
-- another name under which datastore_search, datastore_info, the dump and the SQL search find
-- a resource's table.
CREATE TABLE datastore_alias (
    alias TEXT PRIMARY KEY,
    resource_id TEXT NOT NULL
);
CREATE INDEX datastore_alias_resource ON datastore_alias (resource_id);
