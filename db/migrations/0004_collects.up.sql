-- Collect requests: the documents a firm asks a client for, in one workspace,
-- item by item, and the links (sessions) through which someone without an
-- account uploads them. Every table names its client, so that every query of
-- a collect, its items, their files and its sessions is scoped by tenant.

-- A deleted collect keeps its row (deleted_at set): its sessions answer as
-- unknown, its uploaded files stay, and a page cursor naming it still finds
-- its place. A null due date sorts last in both orders, as on tasks.
CREATE TABLE collects (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- Like a file's task: a deleted task leaves the collect without one.
    task_id      TEXT             REFERENCES tasks (id) ON DELETE SET NULL,
    title        TEXT    NOT NULL COLLATE NOCASE,
    message      TEXT,
    due_date     INTEGER,
    due_asc      INTEGER GENERATED ALWAYS AS (coalesce(due_date, 9223372036854775807)) VIRTUAL,
    due_desc     INTEGER GENERATED ALWAYS AS (coalesce(due_date, -9223372036854775808)) VIRTUAL,
    status       TEXT    NOT NULL CHECK (status IN ('OPEN', 'SUBMITTED', 'CLOSED', 'CANCELLED')),
    locale       TEXT    NOT NULL CHECK (locale IN ('en', 'de')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    submitted_at INTEGER,
    deleted_at   INTEGER
);
-- One index per sort key, within the client and within a workspace, each
-- holding the live collects only (a list's filter names deleted_at IS NULL).
CREATE INDEX collects_client_created ON collects (client_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_client_updated ON collects (client_id, updated_at, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_client_due_asc ON collects (client_id, due_asc, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_client_due_desc ON collects (client_id, due_desc, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_client_title ON collects (client_id, title, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_workspace_created ON collects (client_id, workspace_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_workspace_updated ON collects (client_id, workspace_id, updated_at, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_workspace_due_asc ON collects (client_id, workspace_id, due_asc, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_workspace_due_desc ON collects (client_id, workspace_id, due_desc, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_workspace_title ON collects (client_id, workspace_id, title, id) WHERE deleted_at IS NULL;
CREATE INDEX collects_client_status ON collects (client_id, status, created_at, id) WHERE deleted_at IS NULL;
-- The collects of a task: the taskId filter, and the foreign key's SET NULL
-- when a task is deleted.
CREATE INDEX collects_task ON collects (task_id);

-- position orders a collect's items as they were given (0, 1, ...).
CREATE TABLE collect_items (
    id               TEXT    NOT NULL PRIMARY KEY,
    client_id        TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    collect_id       TEXT    NOT NULL REFERENCES collects (id) ON DELETE CASCADE,
    position         INTEGER NOT NULL CHECK (position >= 0),
    title            TEXT    NOT NULL,
    description      TEXT,
    required         INTEGER NOT NULL CHECK (required IN (0, 1)),
    folder_id        TEXT             REFERENCES folders (id) ON DELETE SET NULL,
    status           TEXT    NOT NULL CHECK (status IN ('PENDING', 'RECEIVED', 'REJECTED')),
    rejection_reason TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    UNIQUE (collect_id, position)
);
CREATE INDEX collect_items_folder ON collect_items (folder_id);

-- The files uploaded to each item; seq keeps the order they came in.
CREATE TABLE collect_item_files (
    seq        INTEGER NOT NULL PRIMARY KEY,
    client_id  TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    collect_id TEXT    NOT NULL REFERENCES collects (id) ON DELETE CASCADE,
    item_id    TEXT    NOT NULL REFERENCES collect_items (id) ON DELETE CASCADE,
    file_id    TEXT    NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    UNIQUE (item_id, file_id)
);
CREATE INDEX collect_item_files_collect ON collect_item_files (collect_id, seq);
CREATE INDEX collect_item_files_file ON collect_item_files (file_id);

-- A session is a link: only the SHA-256 of its token is stored, and the
-- token's lookup is by that hash alone (the one query of a collect made
-- before its tenant is known).
CREATE TABLE collect_sessions (
    id           TEXT    NOT NULL PRIMARY KEY,
    client_id    TEXT    NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    collect_id   TEXT    NOT NULL REFERENCES collects (id) ON DELETE CASCADE,
    token_hash   BLOB    NOT NULL,
    label        TEXT,
    expires_at   INTEGER NOT NULL,
    revoked_at   INTEGER,
    last_used_at INTEGER,
    created_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX collect_sessions_token_hash ON collect_sessions (token_hash);
CREATE INDEX collect_sessions_collect_created ON collect_sessions (client_id, collect_id, created_at, id);

-- Keys that held every permission of their kind keep holding every one.
UPDATE api_keys SET permissions = permissions || ' collects:read collects:write'
WHERE client_id IS NULL AND permissions = 'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write clients:read clients:write accountant_users:read accountant_users:write webhooks:read webhooks:write';
UPDATE api_keys SET permissions = permissions || ' collects:read collects:write'
WHERE client_id IS NOT NULL AND permissions = 'tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write files:read files:write';
