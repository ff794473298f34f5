-- scripts/bench --fill N: POST /api/v1/send with the code 123456 to a new
-- recipient on every request. Each thread stops after BENCH_FILL_QUOTA
-- answers, and appends every BENCH_FILL_EVERY-th verification id to
-- BENCH_FILL_IDS.<thread>, so verify on the filled database can pick ids
-- spread over the whole table. Recipients: the wrk run (BENCH_FILL_CHUNK),
-- then a counter interleaved over the BENCH_THREADS threads (thread tid
-- takes every BENCH_THREADS-th number, as in bench-send.lua), so no two
-- sends of a fill share one, whatever the number of threads.
dofile(os.getenv("BENCH_LUA_DIR") .. "/bench-stats.lua")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY")

local chunk = tonumber(os.getenv("BENCH_FILL_CHUNK"))
local quota = tonumber(os.getenv("BENCH_FILL_QUOTA"))
local every = tonumber(os.getenv("BENCH_FILL_EVERY"))
local stride = tonumber(os.getenv("BENCH_THREADS") or "1") or 1
local n, answered, ids = 0, 0, nil

function init(args)
  ids = io.open(os.getenv("BENCH_FILL_IDS") .. "." .. tid, "a")
end

function request()
  n = n + 1
  local body = string.format('{"channel":"sms","recipient":"+19%02d%09d","code":"123456","expires_in":3600}', chunk, n * stride + tid)
  return wrk.format(nil, "/api/v1/send", nil, body)
end

local count = response
function response(status, headers, body)
  count(status, headers, body)
  answered = answered + 1
  if status == 200 and answered % every == 0 then
    local id = string.match(body, '"verification_id":"([^"]+)"')
    if id then
      ids:write(id, "\n")
      ids:flush()
    end
  end
  if answered >= quota then wrk.thread:stop() end
end
