-- 010: keep a memory's embedding in its row. pgvector stores vectors out of line
-- (EXTERNAL), so every read of one (the distance beside a nearest-neighbour hit, the
-- candidates rank scores) was a TOAST lookup; at 1.5 kB for 384 dimensions a row still
-- fits its page. MAIN keeps new rows inline. Rows already stored are rewritten here when
-- the store is small; a large store keeps its older rows as they are (correct, slower).
ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN;
DO $$
BEGIN
    IF (SELECT count(*) FROM memories) <= 20000 THEN
        -- a new value (the same numbers) is what makes the row store it inline
        UPDATE memories SET embedding = embedding::real[]::vector WHERE embedding IS NOT NULL;
    END IF;
END $$;
