-- 026: a thing's conversation turns newest first, whatever its role in them, so that rank
-- reads an anchor's newest turns (at most rank.ABOUT_COUNTED) from the index instead of
-- every turn naming it (brain/read/rank.py, NODE_FACTS_SQL): a company named in 12,000
-- turns made node facts a 14 ms statement that grew with the turns (session 12's probe).
-- sql/025's index holds only the turns about or mentioning a thing, not those it sent.
CREATE INDEX entity_turns_newest ON entity_turns (workspace_id, entity_id, occurred_at, memory_id);
