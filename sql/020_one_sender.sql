-- 020: a message has one sender at most. The writer links each message to its sender once
-- (role 'from'); rank's candidates statement joins a memory to its sender directly (a
-- lookup per row with min() cost ~0.1 ms of LoCoMo's candidates statement), which needs
-- the invariant stated here. The index also serves that join.
CREATE UNIQUE INDEX memory_entities_one_sender ON memory_entities (workspace_id, memory_id) WHERE role = 'from';
