-- Drafts are now labelled for their editors only (authz::dataset_labels): queue every draft
-- so that the indexer rewrites its permission labels at the next start.
INSERT INTO search_outbox (package_id) SELECT id FROM package WHERE state = 'draft';
