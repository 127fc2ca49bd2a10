-- 027: a read's binding also names the relations its asker's modules hold.
-- Path search stops once the kinds a question asks for are reached; a question may also
-- name the relation it asks about ("the account manager of X's company"), which lies a
-- hop beyond. Knowing the workspace's relation names, the walk can tell which of them
-- the question names and walk on until it has taken them (brain.read.paths).
--
-- Only relations stated in modules the asker reads count: a name the question holds
-- decides how far the walk goes, and the walk reads visible edges alone, so the names
-- of relations in modules the asker lacks never steer it. Read by a skip scan over the
-- index below: one probe per (module, relation) pair, whatever the number of edges.
CREATE INDEX edges_module_rel ON edges (workspace_id, module, rel);

DROP FUNCTION brain_bind_read(text, text, timestamptz);
CREATE FUNCTION brain_bind_read(p_workspace text, p_member text, p_now timestamptz,
                                OUT modules text[], OUT relations boolean, OUT rel_names text[])
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    modules := brain_bind(p_workspace, p_member, p_now);
    -- (after brain_bind: row-level security reads the workspace it set)
    relations := EXISTS (SELECT 1 FROM edges e WHERE e.workspace_id = p_workspace);
    IF NOT relations OR cardinality(modules) = 0 THEN
        rel_names := '{}';
        RETURN;
    END IF;
    WITH RECURSIVE pairs AS (
        (SELECT e.module, e.rel FROM edges e WHERE e.workspace_id = p_workspace
          ORDER BY e.module, e.rel LIMIT 1)
        UNION ALL
        SELECT n.module, n.rel
          FROM pairs p CROSS JOIN LATERAL (
              SELECT e.module, e.rel FROM edges e
               WHERE e.workspace_id = p_workspace AND (e.module, e.rel) > (p.module, p.rel)
               ORDER BY e.module, e.rel LIMIT 1) n
    )
    SELECT coalesce(array_agg(DISTINCT p.rel ORDER BY p.rel), '{}') INTO rel_names
      FROM pairs p WHERE p.module = ANY (modules) OR '*' = ANY (modules);
END $$;
