# memcached: the server the memcached backend's tests start.
need_pkg memcached
