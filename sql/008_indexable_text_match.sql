-- 008: let full-text matches use their GIN indexes under row-level security.
-- With RLS on, the planner may only push a condition into an index scan ahead of the
-- policy if its function is LEAKPROOF; `tsvector @@ tsquery` is not marked so, so every
-- keyword search (memories.fts, entity_names.name_words) read and de-toasted each row of
-- the workspace instead of its few index matches. ts_match_vq returns a boolean from its
-- two values, raising nothing that depends on a row, so it reveals nothing else.
-- Marking a built-in needs a superuser (the embedded store's owner is one); on a server
-- where the migrating user is not, keyword search stays correct and scans instead.
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF;
    ELSE
        RAISE NOTICE 'not a superuser: ts_match_vq stays non-leakproof, keyword search will scan rows '
                     '(ask an administrator to run ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF)';
    END IF;
END $$;
