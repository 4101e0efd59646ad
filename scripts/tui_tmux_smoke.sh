#!/usr/bin/env bash
# Drive the real `perfagent tui` in a detached tmux session (100x30): start on a saved record, move down,
# open the kernel detail, go back, open help, close it, quit. Each step waits (with a timeout) for text
# that must appear in `tmux capture-pane -p`; any miss prints the screen and exits 1. The session runs on
# its own tmux server socket, removed on exit, so it never touches a user's tmux and never hangs.
#
# Usage: scripts/tui_tmux_smoke.sh [RECORD]   (default: tests/tui/data/a10g_sgemm_4kernels.json)
# Env:   PYTHON (default python3), SMOKE_START_TIMEOUT (s, default 60), SMOKE_STEP_TIMEOUT (s, default 20)
set -euo pipefail

cd "$(dirname "$0")/.."
RECORD=${1:-tests/tui/data/a10g_sgemm_4kernels.json}
PYTHON=${PYTHON:-python3}
START_TIMEOUT=${SMOKE_START_TIMEOUT:-60}
STEP_TIMEOUT=${SMOKE_STEP_TIMEOUT:-20}

if ! command -v tmux >/dev/null 2>&1; then
    echo "tui_tmux_smoke: tmux is not installed" >&2
    exit 2
fi
if [[ ! -e "$RECORD" ]]; then
    echo "tui_tmux_smoke: $RECORD does not exist" >&2
    exit 2
fi

SOCKET="perfagent-smoke-$$"
SESSION="smoke"
tmx() { env -u TMUX tmux -u -L "$SOCKET" "$@"; }
cleanup() { tmx kill-server >/dev/null 2>&1 || true; }
trap cleanup EXIT

screen() { tmx capture-pane -p -t "$SESSION" 2>/dev/null || true; }

fail() {
    echo "tui_tmux_smoke: FAILED: $1" >&2
    echo "----- screen -----" >&2
    screen >&2
    echo "------------------" >&2
    exit 1
}

# wait_for TEXT TIMEOUT: until TEXT is on the screen.
wait_for() {
    local text=$1 limit=$2 start=$SECONDS
    while (( SECONDS - start < limit )); do
        if screen | grep -qF -- "$text"; then return 0; fi
        sleep 0.2
    done
    fail "did not see '$text' within ${limit}s"
}

# wait_gone TEXT TIMEOUT: until TEXT is no longer on the screen.
wait_gone() {
    local text=$1 limit=$2 start=$SECONDS
    while (( SECONDS - start < limit )); do
        if ! screen | grep -qF -- "$text"; then return 0; fi
        sleep 0.2
    done
    fail "'$text' still on screen after ${limit}s"
}

keys() { tmx send-keys -t "$SESSION" "$@"; }

quoted_record=$(printf '%q' "$RECORD")
tmx new-session -d -s "$SESSION" -x 100 -y 30 \
    "LANG=C.UTF-8 LC_ALL=C.UTF-8 $PYTHON -m perfagent tui $quoted_record; echo \"perfagent exited with \$?\"; sleep 60"

echo "tui_tmux_smoke: start"
wait_for "Top finding" "$START_TIMEOUT"
wait_for "one_blocktiling" "$STEP_TIMEOUT"
wait_for "Open kernel" "$STEP_TIMEOUT"

echo "tui_tmux_smoke: down, enter -> kernel detail"
keys Down
sleep 0.3
keys Enter
wait_for "[2] two_blocktiling" "$STEP_TIMEOUT"
wait_for "Roofline & SOL" "$STEP_TIMEOUT"
wait_for "Speed of light" "$STEP_TIMEOUT"

echo "tui_tmux_smoke: escape -> kernel list"
keys Escape
wait_gone "Roofline & SOL" "$STEP_TIMEOUT"
wait_for "Top finding" "$STEP_TIMEOUT"

echo "tui_tmux_smoke: ? -> help"
keys "?"
wait_for "perfagent — keys" "$STEP_TIMEOUT"
wait_for "Optimize walkthrough" "$STEP_TIMEOUT"

echo "tui_tmux_smoke: escape -> help closed"
keys Escape
wait_gone "perfagent — keys" "$STEP_TIMEOUT"

echo "tui_tmux_smoke: q -> quit"
keys q
wait_for "perfagent exited with 0" "$STEP_TIMEOUT"
echo "tui_tmux_smoke: OK"
