-- 009: the turns beside a strong hit, found by thread and time (rank's candidates
-- statement looks a few turns before and after each of the best recall hits): without
-- it each lookup read every memory of the workspace.
CREATE INDEX memories_thread ON memories (workspace_id, (attrs->>'thread'), occurred_at, memory_id);
