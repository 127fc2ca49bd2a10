-- 022: a message's thread as a column of its own, indexed. Row-level security lets an
-- index serve only conditions whose operators are leakproof: `attrs->>'thread' = $1`
-- is not (jsonb's ->>), so under the library's role the expression index of sql/009 was
-- never used, and finding a turn's thread read every memory of the workspace by time.
-- The writer does that for every conversation turn it writes (brain/corrections.py): at
-- 100,000 memories a workspace that is a scan per written turn. Text equality is
-- leakproof, so this column's index is used.
ALTER TABLE memories ADD COLUMN thread text GENERATED ALWAYS AS (attrs->>'thread') STORED;
CREATE INDEX memories_thread_column ON memories (workspace_id, thread, occurred_at, memory_id);
ANALYZE memories;
