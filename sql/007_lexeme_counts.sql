-- 007: how many memories hold each word, per workspace and module, for the keyword leg.
-- A question word most memories contain ("sipariş" in an order business) ranks nothing
-- apart, yet ranking every memory that holds it was most of a recall's time at scale.
-- The keyword leg leaves such words to the vector leg and weighs the rest by rarity.
-- Counts are kept per module and only for shared facts, so the rarity an asker's query
-- is weighed by comes only from modules the asker may read, never from others' private
-- notes. Superseded and expired facts still count: a frequency, not a fact.
CREATE TABLE lexeme_counts (
    workspace_id text NOT NULL REFERENCES workspaces,
    module       text NOT NULL,
    lexeme       text NOT NULL,            -- '' counts the memories themselves
    memories     integer NOT NULL,
    PRIMARY KEY (workspace_id, lexeme, module)
);
ALTER TABLE lexeme_counts ENABLE ROW LEVEL SECURITY;
ALTER TABLE lexeme_counts FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON lexeme_counts
    USING (workspace_id = current_setting('brain.workspace', true))
    WITH CHECK (workspace_id = current_setting('brain.workspace', true));
GRANT SELECT, INSERT, UPDATE, DELETE ON lexeme_counts TO brain_app;

-- Kept by trigger, in the writing transaction. Rows are taken in lexeme order with ''
-- first, so concurrent writers to one workspace and module queue on that row instead of
-- deadlocking (a write transaction inserts memories of one module only).
CREATE FUNCTION brain_count_lexemes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.privacy = 'shared' THEN
            INSERT INTO lexeme_counts AS c (workspace_id, module, lexeme, memories)
            SELECT NEW.workspace_id, NEW.module, l, 1
              FROM unnest(array_prepend('', tsvector_to_array(NEW.fts))) l
             ORDER BY l
            ON CONFLICT (workspace_id, lexeme, module) DO UPDATE SET memories = c.memories + 1;
        END IF;
    ELSIF OLD.privacy = 'shared' THEN
        UPDATE lexeme_counts SET memories = memories - 1
         WHERE workspace_id = OLD.workspace_id AND module = OLD.module
           AND lexeme = ANY (array_prepend('', tsvector_to_array(OLD.fts)));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memories_count_lexemes AFTER INSERT OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION brain_count_lexemes();

-- The memories already stored (migrations run as the store's owner, a superuser for the
-- embedded store, which row-level security does not restrict).
INSERT INTO lexeme_counts (workspace_id, module, lexeme, memories)
SELECT m.workspace_id, m.module, l, count(*)
  FROM memories m, unnest(array_prepend('', tsvector_to_array(m.fts))) l
 WHERE m.privacy = 'shared'
 GROUP BY 1, 2, 3;
