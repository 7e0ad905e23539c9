# Bigtable: the official emulator, built with `go install` and put on PATH as
# /usr/local/bin/cbtemulator (the name gcloud's package gives it), where the
# tests find it whatever the user or HOME that runs them. It needs Go 1.21
# or newer (older Go cannot fetch the newer toolchain the emulator's module
# asks for); Debian 12's golang-go is 1.19.
left_out bigtable && return 0
bigtable_go=$(command -v go || true)
[ -n "$bigtable_go" ] || [ ! -x /usr/local/go/bin/go ] || bigtable_go=/usr/local/go/bin/go
# An emulator an earlier `go install` left in Go's bin directory.
bigtable_built() {
  local d
  for d in "${GOBIN:-}" "$("$bigtable_go" env GOPATH 2>/dev/null | cut -d: -f1)/bin" "$HOME/go/bin"; do
    if [ -n "$d" ] && [ -x "$d/emulator" ]; then
      echo "$d/emulator"
      return 0
    fi
  done
  return 1
}
bigtable_install_emulator() {
  if [ -z "$bigtable_go" ]; then bigtable_go=$(command -v go || true); fi
  local gobin built sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  if [ -n "$bigtable_go" ] && built=$(bigtable_built); then
    $sudo install -m 0755 "$built" /usr/local/bin/cbtemulator
    return
  fi
  gobin=$(mktemp -d)
  if [ -z "$bigtable_go" ] ||
    ! GOBIN="$gobin" GOTOOLCHAIN=auto "$bigtable_go" install cloud.google.com/go/bigtable/cmd/emulator@latest ||
    ! $sudo install -m 0755 "$gobin/emulator" /usr/local/bin/cbtemulator; then
    rm -rf "$gobin"
    echo "scripts/deps: could not install the Bigtable emulator: it needs Go 1.21 or newer" \
      "(install it from https://go.dev/dl/ and put it on PATH), or leave its tests out" \
      "with SOJOURN_TEST_LEAVE_OUT=bigtable" >&2
    return 1
  fi
  rm -rf "$gobin"
}
if ! command -v cbtemulator >/dev/null 2>&1; then
  [ -n "$bigtable_go" ] || need_pkg golang-go ca-certificates
  post+=("bigtable_install_emulator")
fi
