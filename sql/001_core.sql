-- 001: the core store. Every table is keyed by workspace_id first, so it can later be
-- distributed by workspace (Citus: distribution column in every primary and unique key)
-- without a rewrite. Vectors are vector(384): the embedder's dimension is checked at open
-- (brain_settings), and a store opened empty with another dimension is re-typed there.

CREATE EXTENSION IF NOT EXISTS vector;

-- Store-wide facts such as the embedder id and dimension (not workspace data).
CREATE TABLE brain_settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE workspaces (
    workspace_id text PRIMARY KEY,
    org          text NOT NULL,
    name         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE roles (
    workspace_id text NOT NULL REFERENCES workspaces,
    role_id      text NOT NULL,
    modules      text[] NOT NULL,           -- '*' grants every module
    PRIMARY KEY (workspace_id, role_id)
);

CREATE TABLE members (
    workspace_id text NOT NULL REFERENCES workspaces,
    member_id    text NOT NULL,
    name         text NOT NULL,
    roles        text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (workspace_id, member_id)
);

-- A thing facts are about: a company, a person, an order... `key` is the record id
-- (SO-1001) or, for things known only by name, the folded name.
CREATE TABLE entities (
    workspace_id text NOT NULL REFERENCES workspaces,
    entity_id    bigint GENERATED ALWAYS AS IDENTITY,
    kind         text NOT NULL,
    key          text NOT NULL,
    name         text NOT NULL,
    aliases      text[] NOT NULL DEFAULT '{}',
    name_key     text NOT NULL,             -- Turkish ASCII-folded name (brain.text.fold)
    is_stub      boolean NOT NULL DEFAULT false,  -- seen only as a link target so far
    embedding    vector(384),               -- the embedding of its current defining record
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, entity_id),
    UNIQUE (workspace_id, kind, key)
);
CREATE INDEX entities_name_key ON entities (workspace_id, name_key);

-- One row per name or alias of an entity, with its character trigrams as a sparse
-- vector: pg_trgm is not available on the embedded server, so fuzzy name matching is a
-- cosine search over hashed trigram sets (brain.text.trigrams) on an HNSW index.
CREATE TABLE entity_names (
    workspace_id text NOT NULL,
    entity_id    bigint NOT NULL,
    name         text NOT NULL,
    name_key     text NOT NULL,
    trigrams     sparsevec(65536) NOT NULL,
    PRIMARY KEY (workspace_id, entity_id, name_key),
    FOREIGN KEY (workspace_id, entity_id) REFERENCES entities ON DELETE CASCADE
);
CREATE INDEX entity_names_key ON entity_names (workspace_id, name_key);
CREATE INDEX entity_names_trigrams ON entity_names USING hnsw (trigrams sparsevec_cosine_ops);

-- A memory is one stated fact: a synced record's content, a conversation turn, a note.
CREATE TABLE memories (
    workspace_id   text NOT NULL REFERENCES workspaces,
    memory_id      bigint GENERATED ALWAYS AS IDENTITY,
    origin         text NOT NULL CHECK (origin IN ('record', 'message', 'note')),
    kind           text NOT NULL,           -- record kind, message channel, or 'note'
    ref_key        text NOT NULL,           -- record:app:kind:id / message:channel:id / note:hash
    module         text NOT NULL,
    privacy        text NOT NULL DEFAULT 'shared'
                   CHECK (privacy IN ('shared', 'private', 'personal')),
    owner_id       text,                    -- member id; required unless shared
    source         text NOT NULL,
    is_tool_output boolean NOT NULL DEFAULT false,
    text           text NOT NULL,           -- what the context shows
    search_text    text NOT NULL,           -- Turkish-lowered text for full-text search
    attrs          jsonb NOT NULL DEFAULT '{}',  -- everything else of the input line
    content_hash   text NOT NULL,
    occurred_at    timestamptz NOT NULL,    -- the record's own date
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    confirmed_at   timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz,
    valid_to       timestamptz,             -- set when a newer version became current: an earlier value
    superseded_by  bigint,                  -- set when a later fact replaced this one: never recalled
    importance     real NOT NULL DEFAULT 0.5,
    embedding      vector(384),
    fts            tsvector GENERATED ALWAYS AS
                   (to_tsvector('turkish', search_text) || to_tsvector('english', search_text)) STORED,
    PRIMARY KEY (workspace_id, memory_id),
    CHECK (privacy = 'shared' OR owner_id IS NOT NULL)
);
CREATE INDEX memories_embedding ON memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memories_fts ON memories USING gin (fts);
CREATE INDEX memories_ref ON memories (workspace_id, ref_key);
CREATE INDEX memories_occurred ON memories (workspace_id, occurred_at);

-- Which entities a memory is about (subject, link targets, sender, mentions).
CREATE TABLE memory_entities (
    workspace_id text NOT NULL,
    memory_id    bigint NOT NULL,
    entity_id    bigint NOT NULL,
    role         text NOT NULL,             -- subject | link | from | about | mention
    PRIMARY KEY (workspace_id, memory_id, entity_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES memories ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, entity_id) REFERENCES entities ON DELETE CASCADE
);
CREATE INDEX memory_entities_entity ON memory_entities (workspace_id, entity_id);

-- A typed relation, always backed by the memory that states it.
CREATE TABLE edges (
    workspace_id text NOT NULL,
    edge_id      bigint GENERATED ALWAYS AS IDENTITY,
    rel          text NOT NULL,
    src_id       bigint NOT NULL,
    dst_id       bigint NOT NULL,
    module       text NOT NULL,
    memory_id    bigint NOT NULL,
    valid_from   timestamptz NOT NULL,
    valid_to     timestamptz,               -- closed when the stating record got a newer version
    PRIMARY KEY (workspace_id, edge_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES memories ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, src_id) REFERENCES entities,
    FOREIGN KEY (workspace_id, dst_id) REFERENCES entities
);
CREATE INDEX edges_src ON edges (workspace_id, src_id);
CREATE INDEX edges_dst ON edges (workspace_id, dst_id);
CREATE INDEX edges_memory ON edges (workspace_id, memory_id);

-- Every version a synced record ever had, newest current.
CREATE TABLE record_versions (
    workspace_id text NOT NULL,
    app          text NOT NULL,
    kind         text NOT NULL,
    record_id    text NOT NULL,
    memory_id    bigint NOT NULL,
    occurred_at  timestamptz NOT NULL,
    content_hash text NOT NULL,
    is_current   boolean NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, memory_id),
    FOREIGN KEY (workspace_id, memory_id) REFERENCES memories ON DELETE CASCADE
);
CREATE INDEX record_versions_record ON record_versions (workspace_id, app, kind, record_id);
CREATE UNIQUE INDEX record_versions_one_current ON record_versions (workspace_id, app, kind, record_id)
    WHERE is_current;

-- Deliveries seen, by sync_id: a retried delivery is written once.
CREATE TABLE sync_ledger (
    workspace_id text NOT NULL,
    sync_id      text NOT NULL,
    ref_key      text NOT NULL,
    memory_id    bigint,
    outcome      text NOT NULL,             -- written | earlier | unchanged
    received_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, sync_id)
);
