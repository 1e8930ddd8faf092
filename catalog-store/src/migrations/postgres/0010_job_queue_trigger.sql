-- A queue becomes known (`job_queue`) when a job is first enqueued on it: kept by the store in
-- the job's own INSERT instead of by a statement of its own before each enqueue, one round
-- trip less in every write that enqueues a job (a DataStore load per new resource).
CREATE FUNCTION job_queue_known() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_queue (name, created) VALUES (NEW.queue, NEW.created)
        ON CONFLICT (name) DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER job_queue_known AFTER INSERT ON job
    FOR EACH ROW EXECUTE FUNCTION job_queue_known();
