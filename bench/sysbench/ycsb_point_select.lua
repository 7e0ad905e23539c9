-- sysbench's side of bench/peers.py's second MariaDB comparison: YCSB's
-- point select (`SELECT * FROM usertable WHERE YCSB_KEY = ?`, one prepared
-- statement executed per event) on the table sojourn loaded, by uniformly
-- drawn key. It separates what the query costs a client from what the
-- client costs: oltp_point_select selects one CHAR column by integer key,
-- YCSB's select returns the VARCHAR key and a TEXT field.

function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  keys = {}
  local rs = con:query("SELECT YCSB_KEY FROM usertable")
  for i = 1, rs.nrows do
    keys[i] = unpack(rs:fetch_row(), 1, 1)
  end
  if #keys == 0 then
    error("usertable is empty: load it with sojourn first")
  end
  stmt = con:prepare("SELECT * FROM usertable WHERE YCSB_KEY = ?")
  key = stmt:bind_create(sysbench.sql.type.VARCHAR, 255)
  stmt:bind_param(key)
end

function event()
  key:set(keys[sysbench.rand.uniform(1, #keys)])
  stmt:execute()
end

function thread_done()
  stmt:close()
  con:disconnect()
end
