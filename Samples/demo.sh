#!/usr/bin/env bash
# README's run command: install what is missing, build liveplay and the stream lab, make the demo stream,
# serve it live on loopback with the lab, and play it for 10 seconds. With a URL argument, plays that
# instead (extra arguments go to liveplay).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup
swift build -c release --product liveplay
swift build -c release --product liveplay-lab
bin=.build/release
if [[ $# -gt 0 ]]; then
    exec "$bin/liveplay" "$@"
fi
demo=.build/demo/demo.flv
mkdir -p "$(dirname "$demo")"
if [[ ! -s $demo ]]; then
    ffmpeg -hide_banner -loglevel error -nostdin -y \
        -f lavfi -i testsrc2=size=640x360:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 \
        -t 10 -c:v libx264 -preset veryfast -g 60 -c:a aac -b:a 96k -f flv "$demo"
fi
log=$(mktemp)
"$bin/liveplay-lab" serve "$demo" --port 0 >"$log" 2>&1 &
lab=$!
trap 'kill $lab 2>/dev/null; rm -f "$log"' EXIT
url=""
for _ in $(seq 50); do
    url=$(grep -o 'http://[^ ]*/live.flv' "$log" || true)
    [[ -n $url ]] && break
    sleep 0.1
done
[[ -n $url ]] || { echo "demo: the lab server did not start" >&2; cat "$log" >&2; exit 1; }
echo "demo: playing the built-in demo stream from the stream lab at $url" >&2
"$bin/liveplay" "$url" --duration 10
