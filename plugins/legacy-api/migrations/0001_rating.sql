-- Ratings of datasets (CKAN's `rating` table, kept for the legacy Model API's rating register).
-- One rating per user per dataset; anonymous ratings are one per client address.
CREATE TABLE IF NOT EXISTS rating (
    id TEXT PRIMARY KEY,
    package_id TEXT NOT NULL,
    user_id TEXT,
    user_ip_address TEXT,
    rating DOUBLE PRECISION NOT NULL,
    created TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS rating_package_user ON rating (package_id, user_id);
CREATE INDEX IF NOT EXISTS rating_package ON rating (package_id);
