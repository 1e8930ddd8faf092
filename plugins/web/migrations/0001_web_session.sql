-- Web sessions (issue 46): a session cookie names one of these rows, so that logging out ends
-- that session and a blocked or deleted user's sessions end with the change. Portable DDL: one
-- file for both stores. expires is seconds since the Unix epoch.
CREATE TABLE web_session (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    expires BIGINT NOT NULL
);
CREATE INDEX web_session_user ON web_session (user_id);
