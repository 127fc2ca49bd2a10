-- 002: who may read what. Two layers:
--  1. Row-level security binds every row to the transaction's workspace
--     (setting brain.workspace); the library's role (brain_app) is not a superuser and
--     FORCE ROW LEVEL SECURITY is on, so even a raw SELECT * sees one workspace.
--  2. The visibility rule, written once here (brain_hidden_reason), says for one fact
--     whether the bound member may read it and, if not, why. Entities and edges derive
--     their visibility from the facts that state them. Every read statement of the
--     library goes through the views below, never the tables.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'brain_app') THEN
        CREATE ROLE brain_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
    END IF;
END $$;

GRANT USAGE ON SCHEMA public TO brain_app;
GRANT SELECT ON brain_settings TO brain_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON
    workspaces, roles, members, entities, entity_names, memories, memory_entities,
    edges, record_versions, sync_ledger
    TO brain_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO brain_app;

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['workspaces', 'roles', 'members', 'entities', 'entity_names',
                             'memories', 'memory_entities', 'edges', 'record_versions',
                             'sync_ledger']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format($p$CREATE POLICY workspace_isolation ON %I
                          USING (workspace_id = current_setting('brain.workspace', true))
                          WITH CHECK (workspace_id = current_setting('brain.workspace', true))$p$, t);
    END LOOP;
END $$;

-- The transaction's asker, read back by the rule. Unset settings read as "nobody".
CREATE FUNCTION brain_now() RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT coalesce(nullif(current_setting('brain.now', true), '')::timestamptz, now())
$$;
CREATE FUNCTION brain_member() RETURNS text LANGUAGE sql STABLE AS $$
    SELECT nullif(current_setting('brain.member', true), '')
$$;
CREATE FUNCTION brain_modules() RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT coalesce(string_to_array(nullif(current_setting('brain.modules', true), ''), ','), '{}')
$$;
CREATE FUNCTION brain_module_readable(p_module text) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT p_module = ANY (brain_modules()) OR '*' = ANY (brain_modules())
$$;

-- Modules a set of role ids grants. Fail closed: no roles, or any role that does not
-- resolve in this workspace, grants nothing.
CREATE FUNCTION brain_resolve_modules(p_roles text[]) RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN p_roles IS NULL OR cardinality(p_roles) = 0 THEN '{}'::text[]
        WHEN (SELECT count(*) FROM roles r WHERE r.role_id = ANY (p_roles)
                AND r.workspace_id = current_setting('brain.workspace', true))
             < (SELECT count(DISTINCT x) FROM unnest(p_roles) x) THEN '{}'::text[]
        ELSE (SELECT coalesce(array_agg(DISTINCT m ORDER BY m), '{}')
                FROM roles r, unnest(r.modules) m
               WHERE r.role_id = ANY (p_roles)
                 AND r.workspace_id = current_setting('brain.workspace', true))
    END
$$;

-- Bind the current transaction to a workspace, an asker and a moment. A member id the
-- workspace does not know reads nothing; no member (NULL) is a caller with no person,
-- who reads every module's shared facts and nothing private.
CREATE FUNCTION brain_bind(p_workspace text, p_member text, p_now timestamptz)
RETURNS text[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    mods text[];
BEGIN
    PERFORM set_config('brain.workspace', p_workspace, true);
    PERFORM set_config('brain.member', coalesce(p_member, ''), true);
    PERFORM set_config('brain.now', coalesce(p_now, now())::text, true);
    IF p_member IS NULL THEN
        mods := ARRAY['*'];
    ELSE
        SELECT brain_resolve_modules(m.roles) INTO mods
          FROM members m WHERE m.workspace_id = p_workspace AND m.member_id = p_member;
    END IF;
    mods := coalesce(mods, '{}');
    PERFORM set_config('brain.modules', array_to_string(mods, ','), true);
    RETURN mods;
END $$;

-- THE RULE. NULL means visible; otherwise the reason the bound asker may not read it.
-- (Rows of other workspaces never reach it: row-level security removed them already.)
CREATE FUNCTION brain_hidden_reason(p_module text, p_privacy text, p_owner text,
                                    p_superseded_by bigint, p_expires_at timestamptz)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN NOT brain_module_readable(p_module) THEN 'module_not_granted'
        WHEN p_privacy <> 'shared'
             AND (brain_member() IS NULL OR p_owner IS DISTINCT FROM brain_member())
             THEN 'private_other'
        WHEN p_superseded_by IS NOT NULL THEN 'superseded'
        WHEN p_expires_at IS NOT NULL AND p_expires_at <= brain_now() THEN 'expired'
    END
$$;

-- Facts with their verdict (for the hidden-nodes page) and the visible ones (for recall).
CREATE VIEW memory_visibility WITH (security_invoker = true) AS
SELECT m.*, brain_hidden_reason(m.module, m.privacy, m.owner_id, m.superseded_by, m.expires_at)
           AS hidden_reason
  FROM memories m;

CREATE VIEW visible_memories WITH (security_invoker = true) AS
SELECT m.*
  FROM memories m
 WHERE brain_hidden_reason(m.module, m.privacy, m.owner_id, m.superseded_by, m.expires_at) IS NULL;

-- An entity exists for the asker only if some fact the asker may read names it.
CREATE VIEW visible_entities WITH (security_invoker = true) AS
SELECT e.*
  FROM entities e
 WHERE EXISTS (SELECT 1 FROM memory_entities me JOIN visible_memories m USING (workspace_id, memory_id)
                WHERE me.workspace_id = e.workspace_id AND me.entity_id = e.entity_id);

CREATE VIEW entity_visibility WITH (security_invoker = true) AS
SELECT e.*, f.visible_facts, f.hidden_facts, f.hidden_reasons,
       CASE WHEN f.visible_facts > 0 THEN NULL ELSE 'named_only_by_hidden' END AS hidden_reason
  FROM entities e
  CROSS JOIN LATERAL (
      SELECT count(*) FILTER (WHERE m.hidden_reason IS NULL) AS visible_facts,
             count(*) FILTER (WHERE m.hidden_reason IS NOT NULL) AS hidden_facts,
             coalesce(array_agg(DISTINCT m.hidden_reason)
                      FILTER (WHERE m.hidden_reason IS NOT NULL), '{}') AS hidden_reasons
        FROM memory_entities me JOIN memory_visibility m USING (workspace_id, memory_id)
       WHERE me.workspace_id = e.workspace_id AND me.entity_id = e.entity_id) f;

-- An edge is walked only if the fact stating it is visible, its module is readable, the
-- relation has not ended (a newer record version restated it), and both ends are visible.
CREATE VIEW edge_visibility WITH (security_invoker = true) AS
SELECT ed.*,
       CASE
           WHEN mv.hidden_reason IS NOT NULL THEN mv.hidden_reason
           WHEN NOT brain_module_readable(ed.module) THEN 'module_not_granted'
           WHEN ed.valid_to IS NOT NULL AND ed.valid_to <= brain_now() THEN 'ended'
           WHEN NOT EXISTS (SELECT 1 FROM visible_entities v
                             WHERE v.workspace_id = ed.workspace_id AND v.entity_id = ed.src_id)
             OR NOT EXISTS (SELECT 1 FROM visible_entities v
                             WHERE v.workspace_id = ed.workspace_id AND v.entity_id = ed.dst_id)
               THEN 'endpoint_hidden'
       END AS hidden_reason
  FROM edges ed
  JOIN memory_visibility mv ON mv.workspace_id = ed.workspace_id AND mv.memory_id = ed.memory_id;

CREATE VIEW visible_edges WITH (security_invoker = true) AS
SELECT * FROM edge_visibility WHERE hidden_reason IS NULL;

GRANT SELECT ON memory_visibility, visible_memories, visible_entities, entity_visibility,
                edge_visibility, visible_edges TO brain_app;

-- Workspace names for pickers (explorer sidebar, CLI): the one cross-workspace read,
-- limited to ids and names.
CREATE FUNCTION brain_list_workspaces()
RETURNS TABLE (workspace_id text, org text, name text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public AS $$
    SELECT w.workspace_id, w.org, w.name FROM workspaces w ORDER BY w.workspace_id
$$;
REVOKE ALL ON FUNCTION brain_list_workspaces() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION brain_list_workspaces() TO brain_app;
