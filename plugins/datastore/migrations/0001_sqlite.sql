-- What the DataStore knows of each resource's table: the fields as created (ids, types, info)
-- and the unique key. The rows live in a table of their own, named from the resource id.
CREATE TABLE datastore_table (
    resource_id TEXT PRIMARY KEY,
    table_name TEXT NOT NULL UNIQUE,
    fields TEXT NOT NULL,
    primary_key TEXT NOT NULL DEFAULT '[]',
    created TEXT NOT NULL
);
