-- 036: an entity's name is a fact, read under the rule like any other.
-- An entity exists for an asker when a fact the asker may read refers to it (as its
-- subject, a link target, a sender, what a note is about); its key is stated by every such
-- fact. Its name and aliases are stated only by the fact that gave them: the record that
-- defines it, or the message whose sender it names. A shared order linking `contact ->
-- person E-9` lets a sales member see that person E-9 exists, never the name an HR
-- record gave it (FORMAT.md: an entity named only by facts the asker cannot see is never
-- named). A mention (a name found in a turn's text) refers to the entity through its
-- name, so it is no reference on its own: the name it was matched on may be hidden.

-- The fact that gave the entity its current name and aliases (NULL: a stub, named by its
-- key alone, or a store written before this migration, where the data step below finds it).
ALTER TABLE entities ADD COLUMN name_memory_id bigint;
-- The fact that gave this name; NULL for the key, stated by every fact referring to it.
ALTER TABLE entity_names ADD COLUMN named_by bigint;

-- A store written before: the current version of the defining record names a record's
-- entity; a sender by name is named by its first message; an entity some message named as
-- its sender (given by id and name) by the newest such message.
UPDATE entities e SET name_memory_id = v.memory_id
  FROM record_versions v JOIN memory_entities me
    ON me.workspace_id = v.workspace_id AND me.memory_id = v.memory_id AND me.role = 'subject'
 WHERE v.is_current AND me.workspace_id = e.workspace_id AND me.entity_id = e.entity_id
   AND NOT e.is_stub;
UPDATE entities e SET name_memory_id = (
        SELECT me.memory_id FROM memory_entities me JOIN memories m USING (workspace_id, memory_id)
         WHERE me.workspace_id = e.workspace_id AND me.entity_id = e.entity_id AND me.role = 'from'
           AND m.attrs ->> 'from' = e.name
         ORDER BY CASE WHEN e.key LIKE 'name:%' THEN m.memory_id ELSE -m.memory_id END
         LIMIT 1)
 WHERE e.name_memory_id IS NULL AND NOT e.is_stub;
UPDATE entity_names n SET named_by = e.name_memory_id
  FROM entities e
 WHERE e.workspace_id = n.workspace_id AND e.entity_id = n.entity_id AND n.name <> e.key;

-- Entities with their name, aliases and folded name as the bound asker may read them: a
-- name the asker may not read is replaced by the key (aliases by none). Each column is
-- worked out only where a statement reads it (the view is flattened into the statement).
CREATE VIEW named_entities WITH (security_invoker = true) AS
SELECT e.workspace_id, e.entity_id, e.kind, e.key,
       CASE WHEN brain_name_readable THEN e.name ELSE e.key END AS name,
       CASE WHEN brain_name_readable THEN e.aliases ELSE '{}' END AS aliases,
       CASE WHEN brain_name_readable THEN e.name_key ELSE '' END AS name_key,
       e.is_stub, e.embedding, e.updated_at, e.key_upper, e.name_memory_id,
       CASE WHEN brain_name_readable THEN NULL ELSE 'named_only_by_hidden' END AS name_hidden_reason
  FROM entities e
  -- (a lateral of one expression is pulled up: the expression stands where it is read)
  CROSS JOIN LATERAL (
      SELECT e.name = e.key                -- a stub, or a thing whose name is its key
          OR e.key LIKE 'name:%'           -- known by name alone: every fact naming it says it
          OR EXISTS (SELECT 1 FROM visible_memories m
                      WHERE m.workspace_id = e.workspace_id AND m.memory_id = e.name_memory_id)
             AS brain_name_readable) r;

-- An entity exists for the asker only if some fact the asker may read refers to it other
-- than by a name found in its text (sql/002 counted mentions too). Columns as in sql/011
-- (the view's first eleven, in order), the name read through named_entities.
CREATE OR REPLACE VIEW visible_entities WITH (security_invoker = true) AS
SELECT e.workspace_id, e.entity_id, e.kind, e.key, e.name, e.aliases, e.name_key, e.is_stub,
       e.embedding, e.updated_at, e.key_upper, e.name_memory_id, e.name_hidden_reason
  FROM named_entities e
 WHERE EXISTS (SELECT 1 FROM memory_entities me JOIN visible_memories m USING (workspace_id, memory_id)
                WHERE me.workspace_id = e.workspace_id AND me.entity_id = e.entity_id
                  AND me.role <> 'mention');

-- The names an asker may match a question against: those stated by a fact the asker may
-- read, and every entity's key.
CREATE VIEW visible_entity_names WITH (security_invoker = true) AS
SELECT n.*
  FROM entity_names n
 WHERE n.named_by IS NULL
    OR EXISTS (SELECT 1 FROM visible_memories m WHERE m.workspace_id = n.workspace_id AND m.memory_id = n.named_by);

-- Every entity with its verdict (the hidden-nodes page): hidden when no readable fact
-- refers to it, and whether its name is hidden though it is not.
DROP VIEW entity_visibility;
CREATE VIEW entity_visibility WITH (security_invoker = true) AS
SELECT e.*, f.visible_facts, f.hidden_facts, f.hidden_reasons,
       CASE WHEN f.visible_facts > 0 THEN NULL ELSE 'named_only_by_hidden' END AS hidden_reason,
       n.name_hidden_reason
  FROM entities e
  JOIN named_entities n USING (workspace_id, entity_id)
  CROSS JOIN LATERAL (
      SELECT count(*) FILTER (WHERE m.hidden_reason IS NULL) AS visible_facts,
             count(*) FILTER (WHERE m.hidden_reason IS NOT NULL) AS hidden_facts,
             coalesce(array_agg(DISTINCT m.hidden_reason)
                      FILTER (WHERE m.hidden_reason IS NOT NULL), '{}') AS hidden_reasons
        FROM memory_entities me JOIN memory_visibility m USING (workspace_id, memory_id)
       WHERE me.workspace_id = e.workspace_id AND me.entity_id = e.entity_id AND me.role <> 'mention') f;

GRANT SELECT ON named_entities, visible_entity_names, entity_visibility TO brain_app;

-- Which entities the facts an asker may read refer to. A mention (a turn found to name
-- an entity by one of its names) counts only where the asker may read the entity's name:
-- the link was made from that name, and would tell who a name in the turn is.
CREATE VIEW visible_memory_entities WITH (security_invoker = true) AS
SELECT me.*
  FROM memory_entities me
 WHERE EXISTS (SELECT 1 FROM visible_memories m WHERE m.workspace_id = me.workspace_id AND m.memory_id = me.memory_id)
   AND (me.role <> 'mention'
        OR EXISTS (SELECT 1 FROM visible_entities e WHERE e.workspace_id = me.workspace_id
                      AND e.entity_id = me.entity_id AND e.name_hidden_reason IS NULL));

-- An entity's turns (sql/021) know which of them only mention it, so that those count
-- only for an asker who may read its name, as above.
ALTER TABLE entity_turns ADD COLUMN mentioned boolean NOT NULL DEFAULT false;
UPDATE entity_turns t SET mentioned = true
  FROM memory_entities me
 WHERE me.workspace_id = t.workspace_id AND me.memory_id = t.memory_id AND me.entity_id = t.entity_id
   AND me.role = 'mention';

-- sql/025's trigger function with the new column (the rest unchanged)
CREATE OR REPLACE FUNCTION brain_entity_turn_linked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entity_turns t
     WHERE t.workspace_id = NEW.workspace_id AND t.entity_id = NEW.entity_id AND t.memory_id = NEW.memory_id;
    IF NEW.role IN ('about', 'from', 'mention') THEN
        INSERT INTO entity_turns (workspace_id, entity_id, memory_id, occurred_at, module, privacy, owner_id,
                                  superseded_by, expires_at, sent, mentioned)
        SELECT m.workspace_id, NEW.entity_id, m.memory_id, m.occurred_at, m.module, m.privacy, m.owner_id,
               m.superseded_by, m.expires_at, NEW.role = 'from', NEW.role = 'mention'
          FROM memories m
         WHERE m.workspace_id = NEW.workspace_id AND m.memory_id = NEW.memory_id AND m.origin <> 'record';
    END IF;
    RETURN NULL;
END $$;

-- The rule, as visible_memories applies it (sql/012), to the copied values; a turn that
-- only mentions the entity, where the asker may read the entity's name (the name is
-- looked up for those turns alone: OR stops at its first true operand).
CREATE OR REPLACE VIEW visible_entity_turns WITH (security_invoker = true) AS
SELECT t.*
  FROM entity_turns t
 WHERE (CASE WHEN brain_hidden_reason_as(t.module, t.privacy, t.owner_id, t.superseded_by, t.expires_at,
                                         (SELECT brain_modules()), (SELECT '*' = ANY (brain_modules())),
                                         (SELECT brain_member()), (SELECT brain_now()))
                  IS NULL THEN true END) IS NOT NULL
   AND (NOT t.mentioned
        OR EXISTS (SELECT 1 FROM named_entities e WHERE e.workspace_id = t.workspace_id
                      AND e.entity_id = t.entity_id AND e.name_hidden_reason IS NULL));

GRANT SELECT ON visible_memory_entities TO brain_app;
