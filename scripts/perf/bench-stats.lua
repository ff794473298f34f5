-- Shared by the bench scripts: counts statuses per thread and prints one
-- machine-readable line (BENCH_JSON {...}) that scripts/perf/bench.ts parses.
-- bench_key() is the key this thread sends, bench_suffix() the suffix of its id pools.
local threads = {}

-- scripts/bench --pace MS: each connection waits MS ms between an answer and its next request.
local pace = tonumber(os.getenv("BENCH_PACE_MS") or "0") or 0
if pace > 0 then
  function delay() return pace end
end

-- scripts/bench --nodes N: BENCH_PORTS lists the nodes' ports on 127.0.0.1;
-- thread i talks to port i mod N, so the load is spread evenly over them.
local ports = {}
for p in string.gmatch(os.getenv("BENCH_PORTS") or "", "[0-9]+") do ports[#ports + 1] = p end

-- scripts/bench --keys N: BENCH_KEYS lists N keys; thread i uses key i mod N
-- (the scripts read it as key_index, with that key's id pools).
local keys = {}
for k in string.gmatch(os.getenv("BENCH_KEYS") or "", "[^,]+") do keys[#keys + 1] = k end

function setup(thread)
  if #keys > 0 then thread:set("key_index", #threads % #keys) end
  if #ports > 0 then
    thread.addr = wrk.lookup("127.0.0.1", ports[(#threads % #ports) + 1])[1]
  end
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

statuses = {}

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local codes = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do
      codes[tostring(k)] = (codes[tostring(k)] or 0) + v
    end
  end
  local parts = {}
  for k, v in pairs(codes) do table.insert(parts, string.format('"%s":%d', k, v)) end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"socket_errors":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect + e.read + e.write + e.timeout, table.concat(parts, ",")))
end

function bench_key()
  local list = {}
  for k in string.gmatch(os.getenv("BENCH_KEYS") or "", "[^,]+") do list[#list + 1] = k end
  if key_index ~= nil and #list > 0 then return list[key_index + 1] end
  return os.getenv("BENCH_KEY")
end

-- BENCH_ROTATE=1 (scripts/bench: the keys of two accounts, one with a webhook
-- endpoint): every request takes the next key of BENCH_KEYS in turn, with its
-- own headers (bench_headers(i)) and id pools, instead of one key per thread.
function bench_rotation()
  local list = {}
  for k in string.gmatch(os.getenv("BENCH_KEYS") or "", "[^,]+") do list[#list + 1] = k end
  if os.getenv("BENCH_ROTATE") ~= "1" or #list < 2 then return {} end
  local headers = {}
  for i, k in ipairs(list) do
    headers[i] = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. k }
  end
  return headers
end

function bench_suffix()
  if key_index ~= nil then return "." .. key_index end
  return ""
end
