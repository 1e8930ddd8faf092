-- The search outbox: every change that alters a dataset's index document queues the dataset,
-- in the same transaction as the change. The indexer drains it after commit.
CREATE TABLE search_outbox (
    seq BIGSERIAL PRIMARY KEY,
    package_id TEXT NOT NULL
);
CREATE FUNCTION search_outbox_package() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_outbox (package_id) VALUES (OLD.id);
    ELSE
        INSERT INTO search_outbox (package_id) VALUES (NEW.id);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER search_outbox_package AFTER INSERT OR UPDATE OR DELETE ON package
    FOR EACH ROW EXECUTE FUNCTION search_outbox_package();
CREATE FUNCTION search_outbox_member() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.table_name = 'package' THEN
            INSERT INTO search_outbox (package_id) VALUES (OLD.table_id);
        END IF;
    ELSIF NEW.table_name = 'package' THEN
        INSERT INTO search_outbox (package_id) VALUES (NEW.table_id);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER search_outbox_member AFTER INSERT OR UPDATE OR DELETE ON member
    FOR EACH ROW EXECUTE FUNCTION search_outbox_member();
CREATE FUNCTION search_outbox_group() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.name <> NEW.name OR OLD.title IS DISTINCT FROM NEW.title OR OLD.state <> NEW.state THEN
        INSERT INTO search_outbox (package_id)
            SELECT table_id FROM member WHERE group_id = NEW.id AND table_name = 'package'
            UNION SELECT id FROM package WHERE owner_org = NEW.id;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER search_outbox_group AFTER UPDATE ON catalog_group
    FOR EACH ROW EXECUTE FUNCTION search_outbox_group();
