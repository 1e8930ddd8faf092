-- Who follows what: users, datasets, groups and organizations (CKAN's user_following_*,
-- one table here), with the time the following began.
CREATE TABLE follower (
    follower_id TEXT NOT NULL,
    object_id TEXT NOT NULL,
    object_type TEXT NOT NULL,
    datetime TEXT NOT NULL,
    PRIMARY KEY (follower_id, object_id)
);
CREATE INDEX follower_object ON follower (object_id);
