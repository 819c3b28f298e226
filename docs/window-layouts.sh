#!/usr/bin/env bash
# Makes the control bar's screenshots in README "Watch and listen":
# docs/window-{on-demand,live,time-shift,compact,thumbnail,audio-poster,audio-card}.png. Each is the window under Xvfb, the pointer just moved
# (so the bar shows); sound to SDL's dummy driver.
# Run from the repository after `swift build`: bash docs/window-layouts.sh [NAME...] (only those, e.g. `compact`)
set -euo pipefail
cd "$(dirname "$0")/.."
liveplay=$(swift build --show-bin-path)/liveplay
wanted=("$@")
work=$(mktemp -d)
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x720x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null; pkill -P $$ 2>/dev/null || true; rm -rf "$work"' EXIT
export DISPLAY=$display SDL_AUDIODRIVER=dummy
sleep 1

# shot NAME SECONDS KEY ARGS...: plays ARGS in the window, waits SECONDS, presses KEY (- for none), moves the
# pointer, and grabs the window. SIZE (WIDTHxHEIGHT) resizes the window first; POINTER (X,Y in the window) is where
# the pointer rests for the grab.
shot() {
    local name=$1 wait=$2 key=$3
    shift 3
    [[ ${#wanted[@]} -eq 0 || " ${wanted[*]} " == *" $name "* ]] || return 0
    "$liveplay" --window --quiet --json "$@" >/dev/null 2>&1 &
    local player=$!
    sleep "$wait"
    # The window, as xwininfo lists it: `0x… "liveplay — …": (…)  960x540+160+90  +160+90`.
    local line
    line=$(xwininfo -root -tree | grep -m1 '"liveplay')
    local window
    window=$(awk '{print $1}' <<<"$line")
    if [[ -n ${SIZE:-} ]]; then
        xdotool windowsize "$window" "${SIZE%x*}" "${SIZE#*x}"
        sleep 1
        line=$(xwininfo -root -tree | grep -m1 '"liveplay')
    fi
    read -r WIDTH HEIGHT X Y <<<"$(grep -oE '[0-9]+x[0-9]+\+[0-9]+\+[0-9]+' <<<"$line" | head -1 | tr 'x+' '  ')"
    if [[ $key != - ]]; then
        xdotool key --window "$window" "$key"
        sleep 3
    fi
    xdotool mousemove $((X + 200)) $((Y + 150)) && sleep 0.2 && xdotool mousemove $((X + 220)) $((Y + 160)) && sleep 0.5
    if [[ -n ${POINTER:-} ]]; then
        xdotool mousemove $((X + ${POINTER%,*})) $((Y + ${POINTER#*,})) && sleep 1
    fi
    ffmpeg -v error -y -f x11grab -video_size "${WIDTH}x${HEIGHT}" -i "$display+$X,$Y" -frames:v 1 \
        "docs/window-$name.png"
    kill "$player"
    wait "$player" 2>/dev/null || true
}

ffmpeg -v error -f lavfi -i testsrc2=size=640x360:rate=25 -f lavfi -i sine=frequency=440 -t 200 \
    -c:v libx264 -preset veryfast -g 25 -c:a aac -shortest "$work/movie.flv"
shot on-demand 5 - "$work/movie.flv"
shot live 5 -
shot time-shift 25 Left --timeshift 60s
# Brightcove's compact layout: a window too narrow for one row's seek bar puts the time and the seek bar on a row above.
SIZE=480x360 shot compact 5 - "$work/movie.flv"
# Resting on the seek bar of the 960x540 window (the bar is its bottom 45 pixels) shows the keyframe there.
POINTER=560,517 shot thumbnail 5 - "$work/movie.flv"
# Audio-only: a poster (--poster), and without one the card (a playlist item's title, the level meter).
ffmpeg -v error -f lavfi -i sine=frequency=440 -af volume=3 -t 200 -c:a aac -vn "$work/radio.flv"
ffmpeg -v error -f lavfi -i "testsrc2=size=640x360,drawtext=text='POSTER':fontsize=72:x=(w-tw)/2:y=(h-th)/2" \
    -frames:v 1 "$work/poster.png"
shot audio-poster 5 - "$work/radio.flv" --poster "$work/poster.png"
printf '#EXTM3U\n#EXTINF:-1,Radio One — Morning Show\n%s\n' "$work/radio.flv" >"$work/radio.m3u"
shot audio-card 5 - "$work/radio.m3u"
echo "docs/window-{on-demand,live,time-shift,compact,thumbnail,audio-poster,audio-card}.png"
