-- POST /api/v1/verify: a third correct codes, a third wrong codes, a third
-- unknown ids, in turn. BENCH_IDS_OK / BENCH_IDS_WRONG are files of seeded
-- verification ids (code 123456); every body has the same length.
dofile(os.getenv("BENCH_LUA_DIR") .. "/bench-stats.lua")

local function load(path)
  local ids = {}
  for line in io.lines(path) do ids[#ids + 1] = line end
  return ids
end
local ok_ids, wrong_ids
-- BENCH_ROTATE: each key's headers and id pools; a request takes the next key in turn.
local rotation, ok_by_key, wrong_by_key = {}, {}, {}

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

-- After setup(): the thread knows its key (--keys) and loads that key's ids.
function init(args)
  wrk.headers["Authorization"] = "Bearer " .. bench_key()
  ok_ids = load(os.getenv("BENCH_IDS_OK") .. bench_suffix())
  wrong_ids = load(os.getenv("BENCH_IDS_WRONG") .. bench_suffix())
  rotation = bench_rotation()
  for i = 1, #rotation do
    ok_by_key[i] = load(os.getenv("BENCH_IDS_OK") .. "." .. (i - 1))
    wrong_by_key[i] = load(os.getenv("BENCH_IDS_WRONG") .. "." .. (i - 1))
  end
end

local n = 0
function request()
  n = n + 1
  local kind = n % 3
  local id, code
  local headers = nil
  if #rotation > 0 then
    -- The key turns every third request, so each key meets each kind of request.
    local k = (math.floor(n / 3) % #rotation) + 1
    headers, ok_ids, wrong_ids = rotation[k], ok_by_key[k], wrong_by_key[k]
  end
  if kind == 0 then
    id, code = ok_ids[math.random(#ok_ids)], "123456"
  elseif kind == 1 then
    id, code = wrong_ids[math.random(#wrong_ids)], "000000"
  else
    id, code = string.format("00000000-0000-4000-8000-%012d", n), "123456"
  end
  return wrk.format(nil, "/api/v1/verify", headers, '{"verification_id":"' .. id .. '","code":"' .. code .. '"}')
end
