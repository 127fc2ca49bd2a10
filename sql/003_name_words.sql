-- 003: word containment for anchors. A question word that is one word of a longer name
-- ("Ağaoğlu" in "Ağaoğlu Yapı Market") is found through an indexed word vector of the
-- folded name, instead of a regular-expression scan over every name.
ALTER TABLE entity_names
    ADD COLUMN name_words tsvector GENERATED ALWAYS AS (to_tsvector('simple', name_key)) STORED;
CREATE INDEX entity_names_words ON entity_names USING gin (name_words);

-- Path search and "entities behind the nearest memories" go from memories to their subjects.
CREATE INDEX memory_entities_memory_role ON memory_entities (workspace_id, memory_id, role);
CREATE INDEX entities_upper_key ON entities (workspace_id, upper(key));
