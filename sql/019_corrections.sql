-- 019: which conversation turn restates (corrects) an earlier one, decided when the
-- second of the two is written (brain/corrections.py) instead of by every recall, which
-- fetched each candidate turn's vector to compare them. A pair says only that two
-- memories' contents restate each other; a recall uses it when the asker sees both.
-- `newer_at` is the newer turn's time: a recall takes the latest corrector it sees.
-- Stores written before this migration get their pairs from its data step
-- (brain.corrections.backfill), in the same transaction.
CREATE TABLE corrections (
    workspace_id text NOT NULL,
    older_id     bigint NOT NULL,
    newer_id     bigint NOT NULL,
    newer_at     timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, older_id, newer_id),
    FOREIGN KEY (workspace_id, older_id) REFERENCES memories ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, newer_id) REFERENCES memories ON DELETE CASCADE
);
CREATE INDEX corrections_newer ON corrections (workspace_id, newer_id);
ALTER TABLE corrections ENABLE ROW LEVEL SECURITY;
ALTER TABLE corrections FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON corrections
    USING (workspace_id = current_setting('brain.workspace', true))
    WITH CHECK (workspace_id = current_setting('brain.workspace', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON corrections TO brain_app;
