-- 013: full-text indexes take each new row at once instead of through a pending list.
-- With GIN's default fastupdate, new rows wait in an unsorted pending list (up to 4 MB)
-- that every search reads in full until a vacuum merges it. Memories arrive all day
-- and a search runs per question word, so keyword search read the list again and again:
-- 1.25 ms per word at 100,000 rows (137 pages a lookup) against 0.02 ms once merged,
-- and a store of a few thousand memories fits in the list entirely, so each lookup read
-- them all. Writes pay a little more per row; a memory's embedding costs far more.
ALTER INDEX memories_fts SET (fastupdate = off);
ALTER INDEX entity_names_words SET (fastupdate = off);
-- what already waits is merged now (turning the option off does not flush the list)
SELECT gin_clean_pending_list('memories_fts'::regclass);
SELECT gin_clean_pending_list('entity_names_words'::regclass);
