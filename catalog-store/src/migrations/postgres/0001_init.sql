CREATE TABLE catalog_user (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    email TEXT,
    fullname TEXT,
    about TEXT,
    password_hash TEXT,
    sysadmin BOOLEAN NOT NULL DEFAULT FALSE,
    state TEXT NOT NULL DEFAULT 'active',
    created TEXT NOT NULL,
    image_url TEXT,
    last_active TEXT,
    email_notifications BOOLEAN NOT NULL DEFAULT FALSE,
    plugin_extras TEXT
);
CREATE TABLE api_token (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES catalog_user(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    last_access TEXT
);
CREATE INDEX api_token_user ON api_token(user_id);
CREATE TABLE catalog_group (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    title TEXT,
    description TEXT,
    image_url TEXT,
    type TEXT NOT NULL,
    is_organization BOOLEAN NOT NULL,
    approval_status TEXT NOT NULL DEFAULT 'approved',
    state TEXT NOT NULL DEFAULT 'active',
    created TEXT NOT NULL,
    extras TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE member (
    id TEXT PRIMARY KEY,
    group_id TEXT NOT NULL,
    table_name TEXT NOT NULL,
    table_id TEXT NOT NULL,
    capacity TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'active'
);
CREATE INDEX member_group ON member(group_id, table_name);
CREATE INDEX member_table ON member(table_id, table_name);
CREATE TABLE package (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    state TEXT NOT NULL,
    private BOOLEAN NOT NULL,
    owner_org TEXT,
    creator_user_id TEXT,
    metadata_created TEXT NOT NULL,
    metadata_modified TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX package_owner_org ON package(owner_org);
CREATE INDEX package_modified ON package(metadata_modified);
CREATE INDEX package_creator ON package(creator_user_id);
CREATE TABLE resource (
    id TEXT PRIMARY KEY,
    package_id TEXT NOT NULL,
    name TEXT,
    state TEXT NOT NULL
);
CREATE INDEX resource_package ON resource(package_id);
CREATE TABLE tag (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    vocabulary_id TEXT NOT NULL DEFAULT '',
    UNIQUE (name, vocabulary_id)
);
CREATE TABLE package_tag (
    package_id TEXT NOT NULL,
    tag_id TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'active',
    PRIMARY KEY (package_id, tag_id)
);
CREATE INDEX package_tag_tag ON package_tag(tag_id);
CREATE TABLE collaborator (
    package_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    capacity TEXT NOT NULL,
    modified TEXT NOT NULL,
    PRIMARY KEY (package_id, user_id)
);
CREATE INDEX collaborator_user ON collaborator(user_id);
