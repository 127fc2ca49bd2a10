-- 016: an edge's fact is looked up edge by edge, like its endpoints (015).
-- edge_visibility joined memory_visibility on (workspace_id, memory_id). Under generic
-- plans the planner cannot see how few edges a walk step touches, and on a small
-- workspace it hashed every memory of the workspace to join them: 149 rows, 109 heap
-- blocks (each row carries its 384-d embedding), 0.7 ms of a 2.9 ms walk step on the
-- demo, for 7 edges. A LATERAL subquery with LIMIT 1 is not flattened into the join,
-- so each edge reads its one fact by primary key (one walk step of a demo question,
-- EXPLAIN ANALYZE: 2.9 -> 0.7 ms). It stays an inner join: an edge without
-- its fact has no row, as before. The rule is unchanged; CREATE OR REPLACE VIEW takes
-- the whole definition: only the FROM clause differs from sql/015's.

CREATE OR REPLACE VIEW edge_visibility WITH (security_invoker = true) AS
SELECT ed.*,
       CASE
           WHEN mv.hidden_reason IS NOT NULL THEN mv.hidden_reason
           WHEN NOT brain_module_granted(ed.module, (SELECT brain_modules()),
                                         (SELECT '*' = ANY (brain_modules()))) THEN 'module_not_granted'
           WHEN ed.valid_to IS NOT NULL AND ed.valid_to <= (SELECT brain_now()) THEN 'ended'
           WHEN (SELECT true FROM visible_entities v
                  WHERE v.workspace_id = ed.workspace_id AND v.entity_id = ed.src_id) IS NULL
             OR (SELECT true FROM visible_entities v
                  WHERE v.workspace_id = ed.workspace_id AND v.entity_id = ed.dst_id) IS NULL
               THEN 'endpoint_hidden'
       END AS hidden_reason
  FROM edges ed
  CROSS JOIN LATERAL (SELECT mv.hidden_reason FROM memory_visibility mv
                       WHERE mv.workspace_id = ed.workspace_id AND mv.memory_id = ed.memory_id
                       LIMIT 1) mv;
