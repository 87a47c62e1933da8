-- patch.lua: PATCH /v1/tasks/{id} of random tasks from the driver's sample,
-- with the statuses in turn.
--
-- Data file: key, client, and task (one line each).

local patch

function init(args)
  patch = patcher(params(args))
end

function request()
  return patch()
end
