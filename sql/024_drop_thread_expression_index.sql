-- 024: sql/009's index on (attrs->>'thread') is never used under the library's role
-- (row-level security lets an index serve only leakproof conditions, and jsonb's ->> is
-- not one; see sql/022), and no statement asks it any more: the thread column's index
-- serves instead. It went on costing every write.
DROP INDEX memories_thread;
