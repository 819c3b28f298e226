#!/usr/bin/env bash
# README's run command: install what is missing, build liveplay, and play the built-in demo stream (the
# stream lab's live server started in-process on a free loopback port) for 10 seconds. With a URL argument,
# plays that instead (extra arguments go to liveplay); with options only (`--window`), the demo with them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup
swift build -c release --product liveplay
bin=.build/release
if [[ $# -gt 0 && $1 != --* ]]; then
    exec "$bin/liveplay" "$@"
fi
# Options alone (`--window`) play the demo with them.
if [[ $# -gt 0 ]]; then
    exec "$bin/liveplay" demo "$@"
fi
exec "$bin/liveplay" demo --duration 10
