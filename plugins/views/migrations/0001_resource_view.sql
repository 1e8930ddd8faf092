-- One row per resource view (CKAN's `resource_view`; its `order` column is `view_order` here,
-- `order` being a reserved word). `config` is the view type's own settings as a JSON object.
-- No foreign key to `resource`: core keeps resource rows with a state, and this plugin deletes a
-- resource's views itself when the resource goes (plugins/views/src/defaults.rs).
CREATE TABLE resource_view (
    id TEXT PRIMARY KEY,
    resource_id TEXT NOT NULL,
    title TEXT,
    description TEXT,
    view_type TEXT NOT NULL,
    view_order INTEGER NOT NULL,
    config TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX resource_view_resource ON resource_view (resource_id, view_order);
CREATE INDEX resource_view_type ON resource_view (view_type);
