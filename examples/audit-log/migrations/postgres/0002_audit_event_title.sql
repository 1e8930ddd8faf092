ALTER TABLE audit_event ADD COLUMN title TEXT;
