#!/usr/bin/env bash
# Put a trimmed Ray wheel (and what Ray needs that the GPU image lacks) into .whl_ray/ (carried beside .whl) for the suite's Ray
# executor on a GPU machine without network. The full wheel (79 MB) is over the device tool's 64 MiB
# transfer limit; the Java jar (32 MB), the dashboard's web client, RLlib, Serve, Train, Tune, Data and
# LLM libraries are not used by `perfagent suite --executor ray` (core actors only) and are dropped,
# with their RECORD lines, so pip installs the rest unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${RAY_VERSION:-2.60.0}
mkdir -p .whl_ray /tmp/raywheel
plat=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux2014_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --platform any)
python3 -m pip download -q --no-deps "${plat[@]}" -d /tmp/raywheel "ray==$VERSION"
for p in jsonschema jsonschema-specifications referencing rpds-py; do
  v=$(python3 -m pip show "$p" 2>/dev/null | sed -n "s/^Version: //p" || true)
  python3 -m pip download -q --no-deps "${plat[@]}" -d .whl_ray "$p${v:+==$v}"
done
python3 - "$VERSION" <<'PY'
import sys, zipfile, glob
src = glob.glob(f"/tmp/raywheel/ray-{sys.argv[1]}-*.whl")[0]
dst = ".whl_ray/" + src.rsplit("/", 1)[1]
drop = ("ray/jars/", "ray/dashboard/client/", "ray/rllib/", "ray/serve/", "ray/train/", "ray/tune/",
        "ray/data/", "ray/llm/", "ray/air/examples/")
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    for item in zin.infolist():
        if item.filename.startswith(drop):
            continue
        data = zin.read(item)
        if item.filename.endswith(".dist-info/RECORD"):
            lines = [l for l in data.decode().splitlines() if not l.startswith(drop)]
            data = ("\n".join(lines) + "\n").encode()
        zout.writestr(item, data)
print(dst)
PY
du -sh .whl_ray
