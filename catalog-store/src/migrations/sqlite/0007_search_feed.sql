-- The search outbox becomes a change feed (ADR 0006): rows stay after they are applied, so
-- that every node's local index can follow them, and are removed by retention. This table
-- remembers how far retention went (`gc_through`): a node whose position is below it missed
-- changes and rebuilds its index from the store.
CREATE TABLE search_feed_meta (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
