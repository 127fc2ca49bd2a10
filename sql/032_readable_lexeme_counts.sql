-- 032: the word counts the keyword leg weighs a question's words by (sql/007), as the
-- asker's readable modules hold them, through the rule's module check with the binding
-- read once per statement (as the views of 012 do). brain_module_readable(n.module), the
-- keyword query's filter until now, is inlined with the binding read for every row: two
-- string_to_array() calls per counted row. A recall's fused statement ran 0.9 against
-- 1.0 ms (the demo's 121 questions, each statement alone, warm), with the cast of its
-- keyword query made once (brain.read.recall).
CREATE VIEW readable_lexeme_counts WITH (security_invoker = true) AS
SELECT n.*
  FROM lexeme_counts n
 WHERE brain_module_granted(n.module, (SELECT brain_modules()), (SELECT '*' = ANY (brain_modules())));
GRANT SELECT ON readable_lexeme_counts TO brain_app;
