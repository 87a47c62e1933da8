-- create.lua: POST /v1/tasks, a new task with a unique title each time, in
-- the client's workspaces in turn.
--
-- Data file: key, client, tag, and workspace (one line each).

local create

function init(args)
  create = creator(params(args))
end

function request()
  return create()
end
