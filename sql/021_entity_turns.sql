-- 021: an entity's conversation turns, each with what the visibility rule reads of it.
-- Rank ranks the turns naming an anchor ("about anchor") and counts the visible ones: for
-- a party to a conversation, named in hundreds of turns, that read every one of their wide
-- rows (text, text vector, embedding) to judge it and count it. This narrow copy of
-- memory_entities ⨝ memories holds the turns ('about', 'from', 'mention' links of
-- messages and notes) with the rule's columns: the same rule judges the same values
-- (visible_entity_turns below; tests/test_store_layout.py checks it against the join
-- for every member and moment), from a few pages instead of hundreds. Kept by triggers
-- in the writing transaction: a link adds its row, a change to a copied column of the
-- memory is copied, and deleting the link or the memory deletes the row.
CREATE TABLE entity_turns (
    workspace_id  text NOT NULL,
    entity_id     bigint NOT NULL,
    memory_id     bigint NOT NULL,
    occurred_at   timestamptz NOT NULL,
    module        text NOT NULL,
    privacy       text NOT NULL,
    owner_id      text,
    superseded_by bigint,
    expires_at    timestamptz,
    PRIMARY KEY (workspace_id, entity_id, memory_id),
    FOREIGN KEY (workspace_id, memory_id, entity_id) REFERENCES memory_entities ON DELETE CASCADE
);
CREATE INDEX entity_turns_memory ON entity_turns (workspace_id, memory_id);
ALTER TABLE entity_turns ENABLE ROW LEVEL SECURITY;
ALTER TABLE entity_turns FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON entity_turns
    USING (workspace_id = current_setting('brain.workspace', true))
    WITH CHECK (workspace_id = current_setting('brain.workspace', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON entity_turns TO brain_app;

CREATE FUNCTION brain_entity_turn_linked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entity_turns t
     WHERE t.workspace_id = NEW.workspace_id AND t.entity_id = NEW.entity_id AND t.memory_id = NEW.memory_id;
    IF NEW.role IN ('about', 'from', 'mention') THEN
        INSERT INTO entity_turns
        SELECT m.workspace_id, NEW.entity_id, m.memory_id, m.occurred_at, m.module, m.privacy, m.owner_id,
               m.superseded_by, m.expires_at
          FROM memories m
         WHERE m.workspace_id = NEW.workspace_id AND m.memory_id = NEW.memory_id AND m.origin <> 'record';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER entity_turn_linked AFTER INSERT OR UPDATE ON memory_entities
    FOR EACH ROW EXECUTE FUNCTION brain_entity_turn_linked();

CREATE FUNCTION brain_entity_turn_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE entity_turns t
       SET occurred_at = NEW.occurred_at, module = NEW.module, privacy = NEW.privacy, owner_id = NEW.owner_id,
           superseded_by = NEW.superseded_by, expires_at = NEW.expires_at
     WHERE t.workspace_id = NEW.workspace_id AND t.memory_id = NEW.memory_id;
    RETURN NULL;
END $$;
CREATE TRIGGER entity_turn_changed AFTER UPDATE OF occurred_at, module, privacy, owner_id, superseded_by, expires_at
    ON memories FOR EACH ROW
    WHEN ((OLD.occurred_at, OLD.module, OLD.privacy, OLD.owner_id, OLD.superseded_by, OLD.expires_at)
          IS DISTINCT FROM (NEW.occurred_at, NEW.module, NEW.privacy, NEW.owner_id, NEW.superseded_by, NEW.expires_at))
    EXECUTE FUNCTION brain_entity_turn_changed();

INSERT INTO entity_turns
SELECT me.workspace_id, me.entity_id, me.memory_id, m.occurred_at, m.module, m.privacy, m.owner_id,
       m.superseded_by, m.expires_at
  FROM memory_entities me JOIN memories m USING (workspace_id, memory_id)
 WHERE me.role IN ('about', 'from', 'mention') AND m.origin <> 'record';
ANALYZE entity_turns;

-- The rule, as visible_memories applies it (sql/012), to the copied values.
CREATE VIEW visible_entity_turns WITH (security_invoker = true) AS
SELECT t.*
  FROM entity_turns t
 WHERE (CASE WHEN brain_hidden_reason_as(t.module, t.privacy, t.owner_id, t.superseded_by, t.expires_at,
                                         (SELECT brain_modules()), (SELECT '*' = ANY (brain_modules())),
                                         (SELECT brain_member()), (SELECT brain_now()))
                  IS NULL THEN true END) IS NOT NULL;
GRANT SELECT ON visible_entity_turns TO brain_app;
