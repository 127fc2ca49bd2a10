-- 011: record codes looked up through an index under row-level security. upper() is not
-- LEAKPROOF, so `upper(key) = ANY(...)` could not use entities_upper_key and every code
-- question read all entities of the workspace (28 ms at 100,000 rows); a stored upper-case
-- key compared with `=` (leakproof) can.
ALTER TABLE entities ADD COLUMN key_upper text GENERATED ALWAYS AS (upper(key)) STORED;
CREATE INDEX entities_key_upper ON entities (workspace_id, key_upper);
DROP INDEX IF EXISTS entities_upper_key;

-- the view's e.* was expanded when it was made: made again, it carries key_upper too
CREATE OR REPLACE VIEW visible_entities WITH (security_invoker = true) AS
SELECT e.*
  FROM entities e
 WHERE EXISTS (SELECT 1 FROM memory_entities me JOIN visible_memories m USING (workspace_id, memory_id)
                WHERE me.workspace_id = e.workspace_id AND me.entity_id = e.entity_id);
