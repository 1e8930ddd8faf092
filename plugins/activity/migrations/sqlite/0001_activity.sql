-- One row per recorded change. `data` holds the activity's data either whole (`base_seq` NULL)
-- or as a patch against the data of the activity `base_seq` (same object), and `depth` counts the
-- patches since the last whole copy.
CREATE TABLE activity (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    timestamp TEXT NOT NULL,
    user_id TEXT,
    object_id TEXT NOT NULL,
    activity_type TEXT NOT NULL,
    permission_labels TEXT,
    base_seq INTEGER,
    depth INTEGER NOT NULL DEFAULT 0,
    data TEXT NOT NULL
);
CREATE INDEX activity_object ON activity (object_id, seq);
CREATE INDEX activity_user ON activity (user_id, seq);
CREATE INDEX activity_timestamp ON activity (timestamp);
