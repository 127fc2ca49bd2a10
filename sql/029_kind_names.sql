-- 029: the kinds of the records an asker's modules hold, beside the relation names.
-- Kinds are an open vocabulary (FORMAT.md): a store may call its letters of credit
-- "akreditif" and its bills of lading "konsimento", words no lexicon of the read path
-- holds. A question that says the store's own word ("akreditifin tutarı") asks for that
-- kind, so path search walks on until it reaches one (brain.read.paths). As with the
-- relation names (sql/027), only kinds recorded in modules the asker reads count: a
-- name steers how far the walk goes, never what it reads.
--
-- Read by a skip scan over the index below: one probe per (module, kind) pair, whatever
-- the number of records.
CREATE INDEX memories_record_kinds ON memories (workspace_id, module, kind) WHERE origin = 'record';

CREATE FUNCTION brain_kind_names() RETURNS text[]
LANGUAGE sql STABLE AS $$
    WITH RECURSIVE pairs AS (
        (SELECT m.module, m.kind FROM memories m
          WHERE m.workspace_id = current_setting('brain.workspace', true) AND m.origin = 'record'
          ORDER BY m.module, m.kind LIMIT 1)
        UNION ALL
        SELECT n.module, n.kind
          FROM pairs p CROSS JOIN LATERAL (
              SELECT m.module, m.kind FROM memories m
               WHERE m.workspace_id = current_setting('brain.workspace', true) AND m.origin = 'record'
                 AND (m.module, m.kind) > (p.module, p.kind)
               ORDER BY m.module, m.kind LIMIT 1) n
    )
    SELECT coalesce(array_agg(DISTINCT p.kind ORDER BY p.kind), '{}')
      FROM pairs p WHERE brain_module_readable(p.module)
$$;
