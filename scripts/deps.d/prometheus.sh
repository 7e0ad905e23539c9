# The metrics endpoint's tests check what it serves with Prometheus's own
# promtool (`promtool check metrics`); the server itself is not started.
left_out prometheus && return 0
need_pkg prometheus
