-- 030: a read's binding also says how far the workspace's memories go (the highest
-- memory id, an index probe), so that the vocabulary path search reads (the relation
-- names and record kinds of the asker's modules, sql/028 and sql/029) can be kept by a
-- process from one read to the next: it changes only when a memory is added, and every
-- relation and record kind comes with one. Where the stamp and the asker's modules are
-- those of the vocabulary kept, the read does not ask for it again (brain.read.run).
-- (Within one snapshot, REPEATABLE READ: the stamp is the one the read's statements see.)
DROP FUNCTION brain_bind_read(text, text, timestamptz);
CREATE FUNCTION brain_bind_read(p_workspace text, p_member text, p_now timestamptz,
                                OUT modules text[], OUT relations boolean, OUT stamp bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    modules := brain_bind(p_workspace, p_member, p_now);
    -- (after brain_bind: row-level security reads the workspace it set)
    relations := EXISTS (SELECT 1 FROM edges e WHERE e.workspace_id = p_workspace);
    stamp := (SELECT max(m.memory_id) FROM memories m WHERE m.workspace_id = p_workspace);
END $$;
