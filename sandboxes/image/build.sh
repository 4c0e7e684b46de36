#!/usr/bin/env bash
# Build the sandbox image offline: `docker import` of a root filesystem assembled from this
# machine (sandboxes/image/rootfs.py). The tag is a hash of the files that go in, so an unchanged
# machine rebuilds nothing. Prints the image's name.
#   sandboxes/image/build.sh [full|minimal]     full: + torch, triton, numpy (the grader's needs)
# ARENA_IMAGE_EXTRA adds programs or folders, e.g. an agent CLI and its runtime:
#   ARENA_IMAGE_EXTRA="node /usr/local/lib/node_modules/@anthropic-ai/claude-code" make sandbox-image
set -euo pipefail
flavour=${1:-full}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-$here/../../.venv/bin/python}
repository=kernel-arena-sandbox
read -ra extra <<<"${ARENA_IMAGE_EXTRA:-}"
# The Python environment the image holds, at its host path: the docker sandbox refuses an image
# built for another checkout's environment rather than failing inside it.
interpreter=$("$python" -c 'import sys; print(sys.prefix)')
tag=$("$python" "$here/rootfs.py" --flavour "$flavour" --extra "${extra[@]}" --tag)
image="$repository:$flavour-$tag"
if ! docker image inspect "$image" >/dev/null 2>&1; then
  started=$(date +%s)
  "$python" "$here/rootfs.py" --flavour "$flavour" --extra "${extra[@]}" --out - |
    docker import --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
      --change "LABEL kernel-arena.prefix=$interpreter" \
      --change 'WORKDIR /tmp' - "$image" >/dev/null
  size=$(docker image inspect --format '{{.Size}}' "$image")
  echo "built $image: $((size / 1000000)) MB in $(($(date +%s) - started)) s" >&2
fi
# The name the docker sandbox uses unless ARENA_SANDBOX_IMAGE says otherwise.
docker tag "$image" "$repository:$flavour"
echo "$image"
