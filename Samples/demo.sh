#!/usr/bin/env bash
# README's run command: install what is missing, build liveplay, make the demo stream and inspect it.
# With a file argument, inspects that file instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup
swift build -c release --product liveplay
demo=.build/demo/demo.flv
if [[ $# -eq 0 ]]; then
    mkdir -p "$(dirname "$demo")"
    if [[ ! -s $demo ]]; then
        ffmpeg -hide_banner -loglevel error -nostdin -y \
            -f lavfi -i testsrc2=size=640x360:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 \
            -t 5 -c:v libx264 -preset veryfast -g 60 -c:a aac -b:a 96k -f flv "$demo"
    fi
    set -- "$demo"
fi
exec .build/release/liveplay inspect "$@"
