-- 023: visible_memories shows the thread column of sql/022 (a view's `m.*` is fixed when
-- it is made), so the read path finds the turns beside a hit by its index as well.
-- The rule is unchanged (as written in sql/012).
CREATE OR REPLACE VIEW visible_memories WITH (security_invoker = true) AS
SELECT m.*
  FROM memories m
 WHERE (CASE WHEN brain_hidden_reason_as(m.module, m.privacy, m.owner_id, m.superseded_by, m.expires_at,
                                         (SELECT brain_modules()), (SELECT '*' = ANY (brain_modules())),
                                         (SELECT brain_member()), (SELECT brain_now()))
                  IS NULL THEN true END) IS NOT NULL;
