# The results store's PostgreSQL tests (crates/store/tests/postgres.rs) start
# a throwaway server with initdb and postgres.
need_pkg postgresql
