-- get.lua: one fixed GET, for me, list and its variants. The request is
-- built once per thread in init and there is no request() function, so wrk
-- sends the same bytes without calling Lua: the closest to the server's limit.
--
-- Data file: path, key, and client (omitted for calls outside a client).

function init(args)
  local p = params(args)
  wrk.path = one(p, "path")
  wrk.headers["Authorization"] = "Bearer " .. one(p, "key")
  if p.client then
    wrk.headers["x-client-id"] = one(p, "client")
  end
end
