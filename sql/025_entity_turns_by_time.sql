-- 025: the turns that name a thing, in time order, so that the writer compares a new turn
-- with the turns nearest it in time that name the same things (brain/corrections.py)
-- instead of every turn that ever named them. A company customers write to every day is
-- named in thousands of turns: finding a turn's restatements read all of them, 2.4 ms a
-- turn at 1,000 turns about one company and 21 ms at 4,000, growing without bound
-- (session 12's probe: one company, turns written through the writer).
--
-- A memory names an entity in one role (memory_entities' key), and entity_turns keeps a
-- turn's sender as well as what it is about or mentions (node facts read a party's
-- turns). The writer wants only the latter: `sent` tells them apart, and the index holds
-- only those, so a window of them is read in index order from the turn outwards. The
-- view visible_entity_turns (t.*, fixed when it was made) is unchanged.
ALTER TABLE entity_turns ADD COLUMN sent boolean NOT NULL DEFAULT false;
UPDATE entity_turns t SET sent = true
  FROM memory_entities me
 WHERE me.workspace_id = t.workspace_id AND me.memory_id = t.memory_id AND me.entity_id = t.entity_id
   AND me.role = 'from';

-- sql/021's trigger function with the new column (the rest unchanged)
CREATE OR REPLACE FUNCTION brain_entity_turn_linked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entity_turns t
     WHERE t.workspace_id = NEW.workspace_id AND t.entity_id = NEW.entity_id AND t.memory_id = NEW.memory_id;
    IF NEW.role IN ('about', 'from', 'mention') THEN
        INSERT INTO entity_turns (workspace_id, entity_id, memory_id, occurred_at, module, privacy, owner_id,
                                  superseded_by, expires_at, sent)
        SELECT m.workspace_id, NEW.entity_id, m.memory_id, m.occurred_at, m.module, m.privacy, m.owner_id,
               m.superseded_by, m.expires_at, NEW.role = 'from'
          FROM memories m
         WHERE m.workspace_id = NEW.workspace_id AND m.memory_id = NEW.memory_id AND m.origin <> 'record';
    END IF;
    RETURN NULL;
END $$;

CREATE INDEX entity_turns_named_by_time ON entity_turns (workspace_id, entity_id, occurred_at, memory_id)
 WHERE NOT sent;
ANALYZE entity_turns;
