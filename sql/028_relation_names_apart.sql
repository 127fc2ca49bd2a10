-- 028: the relation names an asker's modules hold, read by a statement of their own.
-- sql/027 read them in the read's binding, which the server runs first, right before the
-- name lookups and the fused recall statement that every read waits for: whatever the
-- binding does delays them. Path search needs the names only after those, so the read
-- now asks for them behind the fused statement (brain.read.run), and the binding is
-- again what sql/017 made it.
DROP FUNCTION brain_bind_read(text, text, timestamptz);
CREATE FUNCTION brain_bind_read(p_workspace text, p_member text, p_now timestamptz,
                                OUT modules text[], OUT relations boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    modules := brain_bind(p_workspace, p_member, p_now);
    -- (after brain_bind: row-level security reads the workspace it set)
    relations := EXISTS (SELECT 1 FROM edges e WHERE e.workspace_id = p_workspace);
END $$;

-- The names of the relations stated in modules the bound asker reads (sql/027 says why
-- only those), by a skip scan over edges_module_rel: one probe per (module, relation).
CREATE FUNCTION brain_relation_names() RETURNS text[]
LANGUAGE sql STABLE AS $$
    WITH RECURSIVE pairs AS (
        (SELECT e.module, e.rel FROM edges e
          WHERE e.workspace_id = current_setting('brain.workspace', true)
          ORDER BY e.module, e.rel LIMIT 1)
        UNION ALL
        SELECT n.module, n.rel
          FROM pairs p CROSS JOIN LATERAL (
              SELECT e.module, e.rel FROM edges e
               WHERE e.workspace_id = current_setting('brain.workspace', true)
                 AND (e.module, e.rel) > (p.module, p.rel)
               ORDER BY e.module, e.rel LIMIT 1) n
    )
    SELECT coalesce(array_agg(DISTINCT p.rel ORDER BY p.rel), '{}')
      FROM pairs p WHERE brain_module_readable(p.module)
$$;
