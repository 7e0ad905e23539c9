# The walkthrough test loads exported PKB samples into DuckDB, whose SQL is
# close enough to BigQuery's to run the walkthrough's own queries. DuckDB
# comes from PyPI, into a virtual environment of its own (Debian's Python
# refuses pip installs into the system); the tests find its interpreter as
# sojourn-duckdb on PATH (a wrapper: through a symbolic link, Python would
# not know it runs in the environment).
left_out duckdb && return 0
duckdb_ready() { sojourn-duckdb -c 'import duckdb' >/dev/null 2>&1; }
duckdb_install() {
  local sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  if ! $sudo python3 -m venv /opt/sojourn-duckdb ||
    ! $sudo /opt/sojourn-duckdb/bin/pip install -q 'duckdb>=1.1,<3' ||
    ! printf '#!/bin/sh\nexec /opt/sojourn-duckdb/bin/python3 "$@"\n' |
      $sudo tee /usr/local/bin/sojourn-duckdb >/dev/null ||
    ! $sudo chmod 0755 /usr/local/bin/sojourn-duckdb; then
    echo "scripts/deps: could not install DuckDB for Python into /opt/sojourn-duckdb;" \
      "install it by hand, or leave its test out with SOJOURN_TEST_LEAVE_OUT=duckdb" >&2
    return 1
  fi
}
if ! duckdb_ready; then
  command -v python3 >/dev/null 2>&1 && python3 -m venv --help >/dev/null 2>&1 || need_pkg python3-venv
  post+=(duckdb_install)
fi
