-- POST /api/v1/send over SMS to a new recipient on every request. With
-- BENCH_NUMBERS (prefix:digits,...: valid numbers of several countries,
-- scripts/perf/bench-otpd.ts NUMBER_TEMPLATES) the countries take turns and
-- the digits are the run, then a counter interleaved over the BENCH_THREADS
-- threads (thread tid takes every BENCH_THREADS-th number), so no two
-- requests of a run share a number until a country's numbers run out;
-- without it, +1 then those (numbers no country has). BENCH_ROTATE: the keys
-- take turns too (bench-stats.lua).
dofile(os.getenv("BENCH_LUA_DIR") .. "/bench-stats.lua")

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local rotation = {}
function init(args)
  wrk.headers["Authorization"] = "Bearer " .. bench_key()
  rotation = bench_rotation()
end

local templates = {}
for prefix, digits in string.gmatch(os.getenv("BENCH_NUMBERS") or "", "([+0-9]+):([0-9]+)") do
  templates[#templates + 1] = { prefix = prefix, fmt = "%d%0" .. (tonumber(digits) - 1) .. "d", room = math.floor(10 ^ (tonumber(digits) - 1)) }
end
local stride = tonumber(os.getenv("BENCH_THREADS") or "1") or 1

local run = tonumber(os.getenv("BENCH_RUN") or "1")
local n = 0
function request()
  n = n + 1
  local recipient
  if #templates > 0 then
    local t = templates[(n % #templates) + 1]
    recipient = t.prefix .. string.format(t.fmt, run % 10, (math.floor(n / #templates) * stride + (tid or 0)) % t.room)
  else
    recipient = string.format("+1%d%010d", run % 10, n * stride + (tid or 0))
  end
  local headers = nil
  if #rotation > 0 then headers = rotation[(n % #rotation) + 1] end
  return wrk.format(nil, "/api/v1/send", headers, '{"channel":"sms","recipient":"' .. recipient .. '"}')
end
