# PostgreSQL server and client for the postgres backend's tests (the tests
# start their own server on a free port with `initdb` + `postgres`; the
# package's own cluster and service are left alone), and the openssl
# command that makes the TLS tests' certificates.
left_out postgres && return 0
need_pkg postgresql postgresql-client openssl
