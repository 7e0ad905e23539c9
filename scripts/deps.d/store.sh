# The results store's PostgreSQL tests (crates/store/tests/postgres.rs) start
# a throwaway server with initdb and postgres.
left_out postgres && return 0
need_pkg postgresql
