-- 014: a memory's row keeps its values inline up to 4 kB (the default is 2 kB).
-- With the embedding in the row (1.5 kB, sql/010), a typical memory (2.6 kB) went over
-- the 2 kB mark and PostgreSQL moved its largest other value, the full-text vector, out
-- of line: every ts_rank and every recheck of a keyword match then read it back from
-- the TOAST table (three more pages a row; about half of ranking 400 turns about one
-- name). Longer memories (long e-mails) are still compressed or moved out as before.
ALTER TABLE memories SET (toast_tuple_target = 4080);
DO $$
BEGIN
    IF (SELECT count(*) FROM memories) <= 20000 THEN
        -- rewriting a row recomputes its (generated) full-text vector, stored inline now
        UPDATE memories SET search_text = search_text;
    END IF;
END $$;
