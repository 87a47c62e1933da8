-- common.lua is shared by every scenario: the driver (bench/main.go) writes
-- it and then the scenario's script into one file, because wrk takes a
-- single script. wrk runs that file in one Lua state per thread (init,
-- request) and in one more state for setup and done.
--
-- No scenario defines response(): wrk then skips parsing headers and bodies,
-- which would slow it down more than the server. done() reports wrk's own
-- count of answers with a status of 400 or more instead.

-- setup numbers the threads, in the main state and before each thread's
-- init, so that titles stay unique and random streams differ across threads.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_number", threads)
end

-- params reads the data file the driver wrote for this run, whose path is
-- init's first argument (after "--" on wrk's command line). Each line is a
-- "name value" pair; a name that repeats makes a list, so every value comes
-- back as a list.
function params(args)
  local path = args[1]
  if not path then
    error("no data file: run the scenarios with bench/run")
  end
  local p = {}
  for line in io.lines(path) do
    local name, value = line:match("^(%S+) (.+)$")
    if name then
      p[name] = p[name] or {}
      table.insert(p[name], value)
    end
  end
  return p
end

-- one returns the single value of name, failing loudly rather than sending
-- requests that can only be refused.
function one(p, name)
  local values = p[name]
  if not values or #values ~= 1 then
    error("the data file needs exactly one " .. name)
  end
  return values[1]
end

-- headers returns the headers of an API call made with key, naming the
-- client when client is given.
function headers(key, client)
  local h = {
    ["Host"] = wrk.headers["Host"],
    ["Authorization"] = "Bearer " .. key,
  }
  if client then
    h["x-client-id"] = client
  end
  return h
end

-- get returns a ready request for a GET of path: built once, sent many times.
function get(path, key, client)
  return wrk.format("GET", path, headers(key, client))
end

-- creator returns a function that builds one POST /v1/tasks: titles unique
-- across runs (the driver's tag), threads and requests; the workspace
-- cycles over the client's workspaces.
function creator(p)
  local h = headers(one(p, "key"), one(p, "client"))
  h["Content-Type"] = "application/json"
  local workspaces = p.workspace
  local prefix = one(p, "tag") .. " t" .. thread_number .. " #"
  local n = 0
  return function()
    n = n + 1
    local body = string.format(
      '{"title":"Bench %s%d","workspaceId":"%s","status":"OPEN","dueDate":"2027-01-31T12:00:00Z"}',
      prefix, n, workspaces[(n + thread_number) % #workspaces + 1])
    return wrk.format("POST", "/v1/tasks", h, body)
  end
end

-- patcher returns a function that builds one PATCH /v1/tasks/{id}: a random
-- task of the driver's sample, moved to the next status in turn, so that
-- each request changes the row.
function patcher(p)
  local h = headers(one(p, "key"), one(p, "client"))
  h["Content-Type"] = "application/json"
  local tasks = p.task
  local statuses = { "IN_PROGRESS", "IN_REVIEW", "ACCEPTED", "DECLINED", "OPEN" }
  local n = 0
  math.randomseed(thread_number)
  return function()
    n = n + 1
    local body = '{"status":"' .. statuses[n % #statuses + 1] .. '"}'
    return wrk.format("PATCH", "/v1/tasks/" .. tasks[math.random(#tasks)], h, body)
  end
end

-- done prints the one line of JSON the driver reads: counts, the duration
-- and latencies in microseconds, and wrk's error counts (errors.status is
-- the answers with a status of 400 or more).
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
