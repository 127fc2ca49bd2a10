-- 031: a record's field that names another record's code relates the two, as its links
-- do: "konu: Servis gecikmesi (SRV-03)" on a complaint, "sipariş: EXP-2026-049" on a
-- letter of credit. Synced apps often keep a reference as text in a field instead of as a
-- link; FORMAT.md's records meet by their links, and this makes such a field one, named by
-- the field (the relation "konu", "sipariş"), stated by the record's memory.
--
-- Every code a record's fields hold is kept here, found or not, so that a record written
-- later under that code gets the relation too (data files come in any order). Only the
-- edges are read by the read path, through the visibility rule like every other edge
-- (module readable, both ends visible); no entity is named by a code in a field (no
-- memory_entities row), so a record the asker may not read is not made visible by it.
CREATE TABLE field_codes (
    workspace_id text NOT NULL,
    memory_id    bigint NOT NULL,
    src_id       bigint NOT NULL,
    field        text NOT NULL,
    code_upper   text NOT NULL,
    module       text NOT NULL,
    valid_from   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, memory_id, field, code_upper),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES memories ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, src_id) REFERENCES entities
);
CREATE INDEX field_codes_code ON field_codes (workspace_id, code_upper);

GRANT SELECT, INSERT, UPDATE, DELETE ON field_codes TO brain_app;
ALTER TABLE field_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE field_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON field_codes
    USING (workspace_id = current_setting('brain.workspace', true))
    WITH CHECK (workspace_id = current_setting('brain.workspace', true));
