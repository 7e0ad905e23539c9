# memcached: the server the memcached backend's tests start.
left_out memcached && return 0
need_pkg memcached
