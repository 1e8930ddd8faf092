-- When each user last marked their dashboard's activities as seen (CKAN's
-- dashboard.activity_stream_last_viewed). A user without a row counts from their creation.
CREATE TABLE dashboard (
    user_id TEXT PRIMARY KEY,
    activity_stream_last_viewed TEXT NOT NULL
);
