-- 015: an edge's endpoints are checked edge by edge.
-- edge_visibility asked `NOT EXISTS (SELECT 1 FROM visible_entities ...)` for each end.
-- PostgreSQL may run such a test as a hashed subplan: it builds the set of every visible
-- entity of the workspace first (every memory_entities row joined with the rule), then
-- probes it. Under generic plans, which cannot see how few frontier nodes a walk step
-- has, the planner did so in every path-search step: two such sets (0.55 ms each on the
-- 160-fact demo workspace) to judge two edges, the largest statement of a recall. A
-- scalar subquery is never hashed: each edge now looks its two ends up by key, which is
-- what every caller (a walk step, the graph page, "why not?") needs, as they all ask
-- about the edges of a few nodes. The rule is unchanged: an edge is visible when its
-- fact is, its module is readable, it has not ended, and both ends are visible
-- entities (visible_entities, as before). CREATE OR REPLACE VIEW takes the whole
-- definition: only the two endpoint lines differ from sql/012's.

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
  JOIN memory_visibility mv ON mv.workspace_id = ed.workspace_id AND mv.memory_id = ed.memory_id;
