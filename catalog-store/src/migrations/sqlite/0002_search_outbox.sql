-- The search outbox: every change that alters a dataset's index document queues the dataset,
-- in the same transaction as the change. The indexer drains it after commit.
CREATE TABLE search_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    package_id TEXT NOT NULL
);
CREATE TRIGGER search_outbox_package_insert AFTER INSERT ON package
BEGIN
    INSERT INTO search_outbox (package_id) VALUES (NEW.id);
END;
CREATE TRIGGER search_outbox_package_update AFTER UPDATE ON package
BEGIN
    INSERT INTO search_outbox (package_id) VALUES (NEW.id);
END;
CREATE TRIGGER search_outbox_package_delete AFTER DELETE ON package
BEGIN
    INSERT INTO search_outbox (package_id) VALUES (OLD.id);
END;
CREATE TRIGGER search_outbox_member_insert AFTER INSERT ON member WHEN NEW.table_name = 'package'
BEGIN
    INSERT INTO search_outbox (package_id) VALUES (NEW.table_id);
END;
CREATE TRIGGER search_outbox_member_update AFTER UPDATE ON member WHEN NEW.table_name = 'package'
BEGIN
    INSERT INTO search_outbox (package_id) VALUES (NEW.table_id);
END;
CREATE TRIGGER search_outbox_member_delete AFTER DELETE ON member WHEN OLD.table_name = 'package'
BEGIN
    INSERT INTO search_outbox (package_id) VALUES (OLD.table_id);
END;
CREATE TRIGGER search_outbox_group_update AFTER UPDATE ON catalog_group
WHEN OLD.name <> NEW.name OR OLD.title IS NOT NEW.title OR OLD.state <> NEW.state
BEGIN
    INSERT INTO search_outbox (package_id)
        SELECT table_id FROM member WHERE group_id = NEW.id AND table_name = 'package'
        UNION SELECT id FROM package WHERE owner_org = NEW.id;
END;
