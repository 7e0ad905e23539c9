# MariaDB server and client for the mysql backend's tests (the tests start
# their own `mariadbd --no-defaults` on a free port with a temporary data
# directory; the package's own service is left alone).
left_out mariadb && return 0
need_pkg mariadb-server mariadb-client openssl
