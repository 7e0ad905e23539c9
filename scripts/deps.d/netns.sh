# The multi-host agents test gives the database, the results store and each
# agent a host of its own: network namespaces joined by a bridge, made with
# iproute2's `ip` (root only, as CI runs).
left_out netns && return 0
command -v ip >/dev/null 2>&1 || need_pkg iproute2
