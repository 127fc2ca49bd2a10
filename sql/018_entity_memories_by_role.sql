-- 018: an entity's memories are looked up by entity and role, and read from the index
-- alone. A record's defining rows (role 'subject') and its attached records ('link') were
-- found by reading every row naming the entity and dropping the other roles: for a party
-- to a conversation, named in 451 turns, that was two scans of 451 rows per recall to
-- find none. The memory id rides in the index, so the list of an entity's turns (rank's
-- conversation about an anchor, the visibility rule's "named by some visible memory")
-- needs no table row. Any query that used the old (workspace, entity) prefix still can.
CREATE INDEX memory_entities_entity_role ON memory_entities (workspace_id, entity_id, role) INCLUDE (memory_id);
DROP INDEX memory_entities_entity;
ANALYZE memory_entities;
