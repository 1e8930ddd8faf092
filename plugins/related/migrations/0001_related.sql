-- Related items (CKAN 2.5's `related` and `related_dataset`). Portable DDL: one file for both
-- stores. seq keeps the table order CKAN lists them in.
CREATE TABLE related (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    title TEXT,
    description TEXT,
    image_url TEXT,
    url TEXT,
    created TEXT NOT NULL,
    owner_id TEXT,
    view_count INTEGER NOT NULL DEFAULT 0,
    featured INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE related_dataset (
    id TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL,
    related_id TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active'
);
CREATE INDEX related_dataset_dataset ON related_dataset(dataset_id);
CREATE INDEX related_dataset_related ON related_dataset(related_id);
