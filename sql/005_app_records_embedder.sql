-- 005: the library's role may record the embedder of a new, empty store (first use via a
-- DATABASE_URL that is brain_app itself). Changing a recorded embedder stays impossible
-- for it: no UPDATE or DELETE.
GRANT INSERT ON brain_settings TO brain_app;
