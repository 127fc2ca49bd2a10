-- 017: a read's binding also says whether its workspace holds any relation at all.
-- A workspace of conversations alone (a chat export, a benchmark's dialogues) has no
-- edges; its recalls then skip path search's statements (the hits' entities and the
-- first hop's edges, 0.5 of an 11 ms read path on LoCoMo) and walk the same empty level
-- they would have read. Any edge, visible or not, counts: the answer changes no output,
-- so it says nothing about what the asker may not see.
CREATE FUNCTION brain_bind_read(p_workspace text, p_member text, p_now timestamptz,
                                OUT modules text[], OUT relations boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    modules := brain_bind(p_workspace, p_member, p_now);
    -- (after brain_bind: row-level security reads the workspace it set)
    relations := EXISTS (SELECT 1 FROM edges e WHERE e.workspace_id = p_workspace);
END $$;
