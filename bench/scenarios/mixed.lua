-- mixed.lua: a day of use in one run. 90% reads, in equal parts page 1 of
-- the task list, its deep page and GET /v1/me (with the accountant key);
-- 10% writes, in equal parts create and patch.
--
-- Data file: everything create.lua and patch.lua read, plus list_path,
-- deep_path and accountant_key.

local list, deep, me, create, patch

function init(args)
  local p = params(args)
  local key, client = one(p, "key"), one(p, "client")
  list = get(one(p, "list_path"), key, client)
  deep = get(one(p, "deep_path"), key, client)
  me = get("/v1/me", one(p, "accountant_key"))
  create = creator(p)
  patch = patcher(p)
end

function request()
  local r = math.random(100)
  if r <= 30 then
    return list
  elseif r <= 60 then
    return deep
  elseif r <= 90 then
    return me
  elseif r <= 95 then
    return create()
  end
  return patch()
end
