# Bigtable: the official emulator, built with `go install` into Go's bin
# directory ($GOBIN, else $(go env GOPATH)/bin, where the tests look).
# It needs Go 1.21 or newer (older Go cannot fetch the newer toolchain the
# emulator's module asks for); Debian 12's golang-go is 1.19.
bigtable_go=$(command -v go || true)
[ -n "$bigtable_go" ] || [ ! -x /usr/local/go/bin/go ] || bigtable_go=/usr/local/go/bin/go
bigtable_emulator_installed() {
  local d
  for d in "${GOBIN:-}" "$("$bigtable_go" env GOPATH 2>/dev/null | cut -d: -f1)/bin" "$HOME/go/bin"; do
    [ -n "$d" ] && [ -x "$d/emulator" ] && return 0
  done
  command -v cbtemulator >/dev/null 2>&1
}
bigtable_install_emulator() {
  if [ -z "$bigtable_go" ]; then bigtable_go=$(command -v go || true); fi
  if [ -z "$bigtable_go" ] || ! GOTOOLCHAIN=auto "$bigtable_go" install cloud.google.com/go/bigtable/cmd/emulator@latest; then
    echo "scripts/deps: could not install the Bigtable emulator: it needs Go 1.21 or newer" \
      "(install it from https://go.dev/dl/ and put it on PATH)" >&2
    return 1
  fi
}
if [ -z "$bigtable_go" ]; then
  need_pkg golang-go ca-certificates
  post+=("bigtable_install_emulator")
elif ! bigtable_emulator_installed; then
  post+=("bigtable_install_emulator")
fi
