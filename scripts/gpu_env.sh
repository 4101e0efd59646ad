# Source on the GPU machine: puts carried wheels (.whl, see README "GPU runs") and the repo on
# PYTHONPATH, and ncu's own ncu_report module on the path. No network is needed there.
# Safe to source from several shells at once: the install runs under a lock, once per set of wheels
# (two concurrent installs into one --target folder once removed each other's files mid-run).
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  # .whl_ray/ (scripts/gpu_ray_wheel.sh) only travels for the suite's Ray executor runs.
  _pa_wheels=$(ls .whl/*.whl .whl_ray/*.whl 2>/dev/null)
  _pa_stamp=$(printf '%s\n' "$_pa_wheels" | xargs -n1 basename | sort | md5sum | cut -d' ' -f1)
  mkdir -p /tmp/site
  (
    flock 9
    if [ "$(cat /tmp/site/.perfagent_wheels 2>/dev/null)" != "$_pa_stamp" ]; then
      # shellcheck disable=SC2086
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        $_pa_wheels && echo "$_pa_stamp" > /tmp/site/.perfagent_wheels
    fi
  ) 9>/tmp/site.lock || return 1
  [ "$(cat /tmp/site/.perfagent_wheels 2>/dev/null)" = "$_pa_stamp" ] || return 1
  unset _pa_wheels _pa_stamp
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
