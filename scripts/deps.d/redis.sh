# Redis: the server the Redis backend's tests start, and redis-benchmark
# (in redis-tools) for bench/'s side-by-side figures.
left_out redis && return 0
need_pkg redis-server redis-tools
# openssl makes the certificates of the TLS tests.
need_pkg openssl
