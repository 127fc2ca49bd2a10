-- 004: the library's role may read the migration ledger, so a DATABASE_URL that connects
-- as brain_app itself (no right to create tables, by design) can still check that the
-- schema is current before it starts.
GRANT SELECT ON schema_migrations TO brain_app;
