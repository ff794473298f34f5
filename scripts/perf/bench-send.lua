-- POST /api/v1/send over SMS to a new recipient on every request
-- (+1 then run, thread and a counter: many distinct recipients).
dofile(os.getenv("BENCH_LUA_DIR") .. "/bench-stats.lua")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
function init(args)
  wrk.headers["Authorization"] = "Bearer " .. bench_key()
end

local run = tonumber(os.getenv("BENCH_RUN") or "1")
local n = 0
function request()
  n = n + 1
  local recipient = string.format("+1%d%d%09d", run % 10, (tid or 0) % 10, n)
  return wrk.format(nil, "/api/v1/send", nil, '{"channel":"sms","recipient":"' .. recipient .. '"}')
end
