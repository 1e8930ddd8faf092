-- The text of a value for the full-text index, declared immutable so that a load can compute
-- the index in a generated column while it copies (PostgreSQL's own casts of dates and times
-- to text follow DateStyle and are only stable). The loader always formats the same way.
CREATE OR REPLACE FUNCTION datastore.as_text(anyelement) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT $1::text $$;
