# The manifests `sojourn kubernetes` prints are checked against the
# official OpenAPI schemas of several Kubernetes versions by
# kubernetes-validate (which carries the schemas: no cluster and no network
# needed), from PyPI into a virtual environment of its own; the tests find
# it as sojourn-kubernetes-validate on PATH.
left_out kubernetes && return 0
kubernetes_ready() { sojourn-kubernetes-validate --version >/dev/null 2>&1; }
kubernetes_install() {
  local sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  if ! $sudo python3 -m venv /opt/sojourn-kubernetes-validate ||
    ! $sudo /opt/sojourn-kubernetes-validate/bin/pip install -q 'kubernetes-validate>=1.33,<2' ||
    ! printf '#!/bin/sh\nexec /opt/sojourn-kubernetes-validate/bin/kubernetes-validate "$@"\n' |
      $sudo tee /usr/local/bin/sojourn-kubernetes-validate >/dev/null ||
    ! $sudo chmod 0755 /usr/local/bin/sojourn-kubernetes-validate; then
    echo "scripts/deps: could not install kubernetes-validate into /opt/sojourn-kubernetes-validate;" \
      "install it by hand, or leave its test out with SOJOURN_TEST_LEAVE_OUT=kubernetes" >&2
    return 1
  fi
}
if ! kubernetes_ready; then
  command -v python3 >/dev/null 2>&1 && python3 -m venv --help >/dev/null 2>&1 || need_pkg python3-venv
  post+=(kubernetes_install)
fi
