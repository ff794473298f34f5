-- A verify-shaped body on random rows (a tenth of them missing), a third wrong codes.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local n = 0
function request()
  n = n + 1
  local seq = math.random(110000)
  return wrk.format(nil, "/", nil, '{"seq":' .. seq .. ',"code":' .. (n % 3) .. ',"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}')
end
