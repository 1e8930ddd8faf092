-- The serving nodes of a deployment (issue 28): each `catalog serve` adds its row at start,
-- refreshes `seen` while it runs and removes the row when it stops, so a node can tell that
-- others share its database (and warn when its file store is one only it can read).
CREATE TABLE catalog_node (
    id TEXT PRIMARY KEY,
    files TEXT NOT NULL,
    started TEXT NOT NULL,
    seen TEXT NOT NULL
);
