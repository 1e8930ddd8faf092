CREATE TABLE audit_event (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    entity TEXT NOT NULL,
    change TEXT NOT NULL,
    object_id TEXT NOT NULL,
    actor TEXT,
    action TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX audit_event_object ON audit_event (object_id);
