# Source on the GPU machine: puts carried wheels (.whl, see README "GPU runs") and the repo on
# PYTHONPATH, and ncu's own ncu_report module on the path. No network is needed there.
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  # .whl_ray/ (scripts/gpu_ray_wheel.sh) only travels for the suite's Ray executor runs.
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl $(ls .whl_ray/*.whl 2>/dev/null) || return 1
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
