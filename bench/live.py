#!/usr/bin/env python3
"""Live-stream measurements of bench/run: first frame, CPU, RSS, scale and the stall plot.

Called by bench/run once the lab servers, nginx-rtmp and the publisher are up (it passes their URLs in the
environment); not meant to be run alone. Every child process runs under a deadline and is killed (its whole
process group) when it passes it. Tools are run round by round, the order rotating every round, so drift on
the machine falls on all of them alike. Writes the raw samples and the summary to results.json, the tables to
results.md, and the plot to latency-stall.png.
"""
import datetime
import json
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

env = os.environ
QUICK = env.get("QUICK") == "1"
BIN = env["ROOT_BIN"]  # root package release binaries: liveplay, liveplay-lab, multi-stream-monitor
BENCH = env["BENCH_BIN"]  # liveplay-bench
LAB = env["LAB_URL"]  # 720p30 2 Mbit/s, GOP cache
LAB1080 = env["LAB1080_URL"]  # 1080p60 6 Mbit/s
LAB_PORT = env["LAB_PORT"]
LAB_PID = int(env["LAB_PID"])
RTMP = env.get("RTMP_URL", "")
OUT = env["BENCH_DIR"]
WORK = env["WORK_DIR"]
FIRST_FRAME_RUNS = int(env.get("FIRST_FRAME_RUNS", 3 if QUICK else 10))
LIVE_SECONDS = float(env.get("LIVE_SECONDS", 6 if QUICK else 20))
LIVE_ROUNDS = int(env.get("LIVE_ROUNDS", 1 if QUICK else 3))
RSS_SECONDS = float(env.get("RSS_SECONDS", 5 if QUICK else 10))
SCALE_SECONDS = float(env.get("SCALE_SECONDS", 8 if QUICK else 15))
PROBE_STEPS = [int(n) for n in env.get("PROBE_STEPS", "50 200" if QUICK else "50 100 200 400").split()]
DECODE_STEPS = [int(n) for n in env.get("DECODE_STEPS", "2 8" if QUICK else "2 4 8 16").split()]
PLOT_SECONDS = float(env.get("PLOT_SECONDS", 14 if QUICK else 20))
SECTIONS = env.get("SECTIONS", "firstframe cpu allocations rss scale plot window zap sessions record download monitor abr latency").split()
WINDOW_SECONDS = float(env.get("WINDOW_SECONDS", 12 if QUICK else 30))
ZAP_SWITCHES = int(env.get("ZAP_SWITCHES", 20 if QUICK else 50))
SESSIONS = int(env.get("SESSIONS", 60 if QUICK else 200))
MEDIA = env.get("MEDIA_DIR", "")
DOWNLOAD_MB = int(env.get("DOWNLOAD_MB", 64 if QUICK else 256))
DOWNLOAD_ROUNDS = int(env.get("DOWNLOAD_ROUNDS", 2 if QUICK else 5))
MONITOR_STEPS = [int(n) for n in env.get("MONITOR_STEPS", "50 200" if QUICK else "100 200 400 1000").split()]
MONITOR_SECONDS = float(env.get("MONITOR_SECONDS", 10 if QUICK else 30))
ABR_ROUNDS = int(env.get("ABR_ROUNDS", 1 if QUICK else 3))

samples = {}  # key -> list of numbers (the raw data in results.json)
notes = []  # what went wrong, printed under the tables
positions = {}  # the latency section's raw (seconds, wall ms, position) points per scenario, player and round


def log(*parts):
    print("bench:", *parts, file=sys.stderr, flush=True)


def add(key, value):
    if value is not None:
        samples.setdefault(key, []).append(value)


def kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_to_exit(command, timeout, stdout_path=os.devnull):
    """Runs command to its end; returns (wall seconds, exit status, rusage) or (None, None, None) on timeout.

    wait4 gives the child's own user/system time and peak RSS, as /usr/bin/time does.
    """
    with open(stdout_path, "wb") as stdout:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                wall = time.perf_counter() - start
                process.returncode = os.waitstatus_to_exitcode(status)
                return wall, process.returncode, usage
            if time.perf_counter() > deadline:
                kill_group(process)
                process.wait()
                return None, None, None
            time.sleep(0.0005)


def run_until_line(command, pattern, timeout, stderr=False, environment=None):
    """Seconds from spawn until a line of stdout (or stderr) matches pattern (then the process is killed), or None."""
    start = time.perf_counter()
    pipe = subprocess.PIPE
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL if stderr else pipe,
                               stderr=pipe if stderr else subprocess.DEVNULL, start_new_session=True, env=environment)
    output = process.stderr if stderr else process.stdout
    found = None
    buffer = b""
    try:
        while found is None:
            left = start + timeout - time.perf_counter()
            if left <= 0:
                break
            ready, _, _ = select.select([output], [], [], left)
            if not ready:
                break
            chunk = os.read(output.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            if re.search(pattern, buffer):
                found = time.perf_counter() - start
            buffer = buffer[-4096:]
    finally:
        kill_group(process)
        process.wait()
    return found


def rtmp_keyframe(url, timeout):
    """rtmpdump's time from spawn to the end of the first video keyframe tag (not a sequence header)."""
    start = time.perf_counter()
    process = subprocess.Popen(["rtmpdump", "-q", "-r", url, "--live", "-o", "-"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    data = b""
    offset = 13  # FLV header (9) + PreviousTagSize0 (4)
    try:
        while True:
            left = start + timeout - time.perf_counter()
            if left <= 0:
                return None
            ready, _, _ = select.select([process.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                return None
            data += chunk
            while len(data) >= offset + 11:
                tag_type = data[offset] & 0x1F
                size = int.from_bytes(data[offset + 1:offset + 4], "big")
                end = offset + 11 + size + 4
                if len(data) < end:
                    break
                body = data[offset + 11:offset + 11 + size]
                # FLV v10.1 E.4.3.1: frame type 1 = keyframe; AVCPacketType 1 = coded frames.
                if tag_type == 9 and len(body) > 1 and body[0] >> 4 == 1 and body[1] == 1:
                    return time.perf_counter() - start
                offset = end
    finally:
        kill_group(process)
        process.wait()


def json_lines(path):
    lines = []
    with open(path, "rb") as handle:
        for raw in handle:
            try:
                lines.append(json.loads(raw))
            except ValueError:
                pass
    return lines


def stats(values):
    values = sorted(values)
    return {"median": statistics.median(values), "min": values[0], "max": values[-1], "n": len(values)}


# --- 1, 2: first frame -----------------------------------------------------------------------------------

GST_FIRST_BUFFER = rb"GstFakeSink:v: last-message = chain"


def gst_command(source):
    # Video to a fakesink that reports each buffer (-v prints its last-message); audio to a silent one, so an
    # audio pad that appears first is linked (nginx-rtmp sends audio first; unlinked, flvdemux stops).
    return ["gst-launch-1.0", "-v"] + source + [
        "!", "flvdemux", "name=d", "d.video", "!", "queue", "!", "h264parse", "!", "avdec_h264", "!",
        "fakesink", "name=v", "silent=false", "d.audio", "!", "queue", "!", "fakesink", "async=false"]


def first_frame_tools(url, rtmp):
    lowlat = ["-fflags", "nobuffer", "-flags", "low_delay", "-probesize", "4096", "-analyzeduration", "0"]
    source = ["rtmp2src", f"location={url}"] if rtmp else ["souphttpsrc", f"location={url}"]
    return {
        "liveplay": ("exit", [f"{BIN}/liveplay", url, "--frames", "1", "--json"]),
        "gstreamer": ("line", gst_command(source)),
        "mpv": ("exit", ["mpv", "--no-config", "--vo=null", "--ao=null", "--frames=1", url]),
        "ffmpeg": ("exit", ["ffmpeg", "-v", "error", "-i", url, "-frames:v", "1", "-f", "null", "-"]),
        "ffmpeg-lowlat": ("exit", ["ffmpeg", "-v", "error"] + lowlat + ["-i", url, "-frames:v", "1", "-f", "null",
                                                                        "-"]),
    }


def measure_first_frame(server, url, rtmp):
    tools = first_frame_tools(url, rtmp)
    if rtmp:
        # With the probe this small, ffmpeg sees only nginx-rtmp's audio (sent first) and never a video
        # stream: it waits for a video frame that never comes.
        del tools["ffmpeg-lowlat"]
        notes.append("nginx-rtmp: ffmpeg with the low-latency flags is left out (it never outputs a frame: the "
                     "small probe finds only the audio stream)")
    names = list(tools)
    if rtmp:
        names.append("rtmpdump")
    else:
        # Process start alone (`liveplay --version` to its exit) and what the loader maps for it.
        names.append("liveplay-version")
        listing = subprocess.run([f"{BIN}/liveplay"], env={**os.environ, "LD_TRACE_LOADED_OBJECTS": "1"},
                                 capture_output=True, text=True).stdout
        add("firstframe/lab/liveplay-shared-objects", sum(1 for line in listing.splitlines() if line.strip()))
    for round_index in range(FIRST_FRAME_RUNS):
        log(f"first frame {server} round {round_index + 1}/{FIRST_FRAME_RUNS}")
        order = names[round_index % len(names):] + names[:round_index % len(names)]
        for name in order:
            time.sleep(0.2 if not rtmp else 0.1)
            if name == "rtmpdump":
                add(f"firstframe/{server}/rtmpdump", rtmp_keyframe(url, 10))
                continue
            if name == "liveplay-version":
                wall, status, _ = run_to_exit([f"{BIN}/liveplay", "--version"], 15)
                add("firstframe/lab/liveplay-version", wall if status == 0 else None)
                continue
            how, command = tools[name]
            # On nginx-rtmp the wait for the next keyframe (0–2 s) dominates; rtmpdump started alongside
            # waits for the same keyframe, so tool minus rtmpdump is the tool's own cost.
            paired = None
            if rtmp:
                import threading
                box = {}
                thread = threading.Thread(target=lambda: box.setdefault("t", rtmp_keyframe(url, 10)))
                thread.start()
            stdout = f"{WORK}/ff-{name}.out"
            if how == "exit":
                wall, status, _ = run_to_exit(command, 15, stdout)
                if status != 0:
                    notes.append(f"{server} {name}: " + ("no frame in 15 s" if wall is None else f"exit status {status}"))
                    wall = None
            else:
                wall = run_until_line(command, GST_FIRST_BUFFER, 15)
                if wall is None:
                    notes.append(f"{server} {name}: no frame in 15 s")
            if rtmp:
                thread.join()
                paired = box.get("t")
            add(f"firstframe/{server}/{name}", wall)
            if rtmp and wall is not None and paired is not None:
                add(f"firstframe/{server}/{name}-over-keyframe", wall - paired)
                add(f"firstframe/{server}/rtmpdump-paired", paired)
            if name == "liveplay" and wall is not None:
                for line in json_lines(stdout):
                    params = line.get("params", {})
                    if line.get("code") == 9006:
                        add(f"firstframe/{server}/liveplay-inprocess-first_frame_ms", params.get("first_frame_ms"))
                    if line.get("code") == 2004:
                        for key, value in params.items():
                            if key.startswith("startup_"):
                                add(f"firstframe/{server}/liveplay-2004-{key}", value)


# --- 3: CPU per stream second ----------------------------------------------------------------------------

def measure_cpu():
    streams = {"720p30": LAB, "1080p60": LAB1080}
    if RTMP:
        streams["720p30-rtmp"] = RTMP  # the same media from nginx-rtmp, ffmpeg publishing
    seconds = LIVE_SECONDS
    for round_index in range(LIVE_ROUNDS):
        for stream, url in streams.items():
            commands = {
                "liveplay": [f"{BIN}/liveplay", url, "--duration", str(seconds), "--json"],
                "liveplay-probe": [f"{BIN}/liveplay", url, "--duration", str(seconds), "--no-decode", "--json"],
                "ffmpeg": ["ffmpeg", "-v", "error", "-threads", "1", "-i", url, "-t", str(seconds), "-f", "null", "-"],
            }
            names = list(commands)
            order = names[round_index % 3:] + names[:round_index % 3]
            for name in order:
                log(f"cpu round {round_index + 1}/{LIVE_ROUNDS}: {stream} {name}")
                wall, status, usage = run_to_exit(commands[name], seconds + 20)
                if wall is None or status != 0:
                    notes.append(f"cpu {stream} {name}: timeout or exit status {status}")
                    continue
                cpu = usage.ru_utime + usage.ru_stime
                add(f"cpu/{stream}/{name}", cpu / seconds)
                add(f"rss/{stream}/{name}-kB", usage.ru_maxrss)
                # Every thread's waits (voluntary) and preemptions, start-up included, per second of the run.
                add(f"wakeups/{stream}/{name}", usage.ru_nvcsw / wall)
                add(f"preempted/{stream}/{name}", usage.ru_nivcsw / wall)


# --- 2a: allocations in steady state ---------------------------------------------------------------------

ALLOCATION_SECONDS = (5.0, 20.0)


def allocation_sources(flame_path):
    """Allocations of a heaptrack run by who made them, from its flame graph (one stack per line, its count last):
    libavcodec and the libavcodec calls a player must make (`av_new_packet`, `av_frame_clone`, or `av_frame_ref` into
    a reused frame: the buffer references of a frame handed on), liveplay's own
    path, the CLI's start, event log and CPU sampling, and the rest (Swift's runtime, SwiftNIO, the loader)."""
    sources = {"liveplay": 0, "libavcodec": 0, "cli": 0, "other": 0}
    with open(flame_path) as handle:
        for line in handle:
            stack, _, count = line.rstrip().rpartition(" ")
            frames = stack.split(";")
            if any("libavcodec" in f or "avcodec_" in f or re.search(r"\bff_", f) or "av_new_packet" in f
                   or "av_frame_clone" in f or "av_frame_ref" in f for f in frames):
                sources["libavcodec"] += int(count)
                continue
            ours = [f for f in frames if re.search(r"LivePlay|liveplay", f)]
            if not ours:
                sources["other"] += int(count)
            elif any(re.search(r"LivePlayCommand|PlayCommand|OutputOptions|ArgumentParser|EventLog|JSONLine|CPUUsage", f)
                     for f in ours):
                sources["cli"] += int(count)
            else:
                sources["liveplay"] += int(count)
    return sources


def heaptrack_sources(command, name):
    """Runs command under heaptrack; returns its allocations by source, or None."""
    out = f"{WORK}/heaptrack-{name}"
    for stale in (f"{out}.zst", f"{out}.flame"):
        if os.path.exists(stale):
            os.remove(stale)
    wall, status, _ = run_to_exit(["heaptrack", "-o", out] + command, 120)
    if wall is None or status != 0 or not os.path.exists(f"{out}.zst"):
        notes.append(f"allocations {name}: heaptrack run failed (status {status})")
        return None
    subprocess.run(["heaptrack_print", "-f", f"{out}.zst", "--flamegraph-cost-type", "allocations",
                    "-F", f"{out}.flame"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return allocation_sources(f"{out}.flame")


def measure_allocations():
    """Heap allocations a second of steady playback, by source: each tool runs 5 s and 20 s of the same live stream
    under heaptrack, and the difference over the 15 s between is what playing costs after start-up and the first
    5 s. liveplay decodes with no sink (socket to presenter); ffmpeg decodes to `-f null` alongside."""
    streams = {"http-flv": LAB}
    if RTMP:
        streams["rtmp"] = RTMP
    short, long = ALLOCATION_SECONDS
    for stream, url in streams.items():
        for tool in ("liveplay", "ffmpeg"):
            counted = {}
            for seconds in (short, long):
                command = ([f"{BIN}/liveplay", url, "--duration", str(seconds), "--json"] if tool == "liveplay" else
                           ["ffmpeg", "-v", "error", "-threads", "1", "-i", url, "-t", str(seconds), "-f", "null", "-"])
                log(f"allocations: {stream} {tool} {seconds:.0f} s")
                counted[seconds] = heaptrack_sources(command, f"{stream}-{tool}-{seconds:.0f}")
            if counted[short] is None or counted[long] is None:
                continue
            for source in counted[long]:
                add(f"allocations/{stream}/{tool}/{source}", (counted[long][source] - counted[short][source]) / (long - short))


# --- 2b: what keeping media costs: recording while playing, downloading -----------------------------------

def measure_record():
    """Recording while playing the 720p30 lab stream, against playing it alone: CPU seconds per second, decoding
    and in probe mode; ffmpeg `-c copy` to MP4 (the field's recorder, no player) alongside."""
    seconds = LIVE_SECONDS
    out = f"{WORK}/record"
    os.makedirs(out, exist_ok=True)
    base = [f"{BIN}/liveplay", LAB, "--duration", str(seconds), "--json"]
    commands = {
        "alone": base,
        "record-mp4": base + ["--record", f"{out}/r.mp4"],
        "record-flv": base + ["--record", f"{out}/r.flv"],
        "probe": base + ["--no-decode"],
        "probe-record-mp4": base + ["--no-decode", "--record", f"{out}/p.mp4"],
        "ffmpeg-copy-mp4": ["ffmpeg", "-v", "error", "-y", "-i", LAB, "-t", str(seconds), "-c", "copy",
                            "-movflags", "frag_keyframe+empty_moov", "-f", "mp4", f"{out}/f.mp4"],
    }
    names = list(commands)
    for round_index in range(LIVE_ROUNDS):
        order = names[round_index % len(names):] + names[:round_index % len(names)]
        for name in order:
            log(f"record round {round_index + 1}/{LIVE_ROUNDS}: {name}")
            wall, status, usage = run_to_exit(commands[name], seconds + 20)
            if wall is None or status != 0:
                notes.append(f"record {name}: timeout or exit status {status}")
                continue
            add(f"record/{name}", (usage.ru_utime + usage.ru_stime) / seconds)
            add(f"record/{name}-rss-kB", usage.ru_maxrss)


def measure_download():
    """`liveplay download` into an empty cache against curl, one file from nginx on loopback: MB/s of wall time and
    CPU seconds, round by round, the order alternating."""
    directory = f"{WORK}/download"
    files = f"{directory}/files"
    os.makedirs(files, exist_ok=True)
    name = f"file-{DOWNLOAD_MB}M.flv"
    path = f"{files}/{name}"
    if not os.path.exists(path) or os.path.getsize(path) != DOWNLOAD_MB << 20:
        with open(path, "wb") as handle:
            for _ in range(DOWNLOAD_MB):
                handle.write(os.urandom(1 << 20))
    port = free_port()
    conf = f"{directory}/nginx.conf"
    with open(conf, "w") as handle:
        handle.write(f"daemon off; master_process off; pid {directory}/nginx.pid; error_log {directory}/error.log;\n"
                     f"events {{ worker_connections 64; }}\n"
                     f"http {{ access_log off; server {{ listen 127.0.0.1:{port}; root {files}; }} }}\n")
    nginx = subprocess.Popen(["/usr/sbin/nginx", "-p", directory, "-c", conf, "-e", f"{directory}/error.log"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/{name}"
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except Exception:
                time.sleep(0.1)
        cache = f"{directory}/cache"
        # liveplay makes a download durable (fsync) before its index calls it complete; curl leaves it in the page
        # cache. `curl-sync` is curl with the same promise: its file synced (`sync -d`) before it is called done.
        commands = {
            "liveplay": [f"{BIN}/liveplay", "download", url, "--media-cache-dir", cache],
            "curl": ["curl", "-s", "-o", f"{directory}/curl.flv", url],
            "curl-sync": ["sh", "-c", f"curl -s -o {directory}/curl.flv {url} && sync -d {directory}/curl.flv"],
        }
        names = list(commands)
        for round_index in range(DOWNLOAD_ROUNDS):
            order = names[round_index % len(names):] + names[:round_index % len(names)]
            for tool in order:
                subprocess.run(["rm", "-rf", cache, f"{directory}/curl.flv"], check=False)
                log(f"download round {round_index + 1}/{DOWNLOAD_ROUNDS}: {tool}")
                wall, status, usage = run_to_exit(commands[tool], 120)
                if wall is None or status != 0:
                    notes.append(f"download {tool}: timeout or exit status {status}")
                    continue
                add(f"download/{tool}-MBps", (DOWNLOAD_MB << 20) / wall / 1e6)
                add(f"download/{tool}-cpu", usage.ru_utime + usage.ru_stime)
    finally:
        kill_group(nginx)
        nginx.wait()


def measure_monitor():
    """`liveplay monitor` with N streams of the 720p30 lab stream in probe mode, /metrics scraped every 5 s as
    Prometheus would: whether every stream plays without a stall, the scrape's time, CPU and memory per stream.
    Steps go on while a step holds, so the table shows where it gives out."""
    rows = []
    for count in MONITOR_STEPS:
        log(f"monitor: {count} streams")
        listing = f"{WORK}/monitor-{count}.txt"
        with open(listing, "w") as handle:
            for index in range(count):
                handle.write(f"s{index} {LAB}\n")
        port = free_port()
        process = subprocess.Popen([f"{BIN}/liveplay", "monitor", "--streams", listing, "--metrics-listen",
                                    f"127.0.0.1:{port}", "--no-statuses", "--log-level", "warning"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)

        def cpu_seconds():
            fields = open(f"/proc/{process.pid}/stat").read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        try:
            time.sleep(5 + count / 100)  # every stream starts (100 a second) and fills its buffer first
            cpu_before, start = cpu_seconds(), time.time()
            scrapes, least_up, stalls, page = [], count, 0.0, ""
            while time.time() - start < MONITOR_SECONDS:
                began = time.perf_counter()
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
                        page = response.read().decode()
                except Exception as error:
                    notes.append(f"monitor {count}: scrape failed: {error!r}")
                    break
                scrapes.append(time.perf_counter() - began)
                lines = page.splitlines()
                least_up = min(least_up, sum(1 for line in lines if line.startswith("liveplay_up{")
                                             and float(line.split()[-1]) == 1))
                stalls = sum(float(line.split()[-1]) for line in lines if line.startswith("liveplay_stalls_total{"))
                time.sleep(max(0, 5 - (time.perf_counter() - began)))
            cpu = (cpu_seconds() - cpu_before) / (time.time() - start) * 100
            peak = next(int(line.split()[1]) for line in open(f"/proc/{process.pid}/status") if line.startswith("VmHWM"))
        finally:
            kill_group(process)
            process.wait()
        row = {"streams": count, "playing": least_up, "stalls": stalls, "cpuPercent": round(cpu, 1),
               "cpuPercentPerStream": round(cpu / count, 3), "peakRSSMiB": round(peak / 1024),
               "MiBPerStream": round(peak / 1024 / count, 2),
               "scrapeMedianMs": round(statistics.median(scrapes) * 1000) if scrapes else None,
               "scrapeMaxMs": round(max(scrapes) * 1000) if scrapes else None, "pageKiB": round(len(page) / 1024)}
        row["passed"] = least_up == count and stalls == 0 and bool(scrapes) and max(scrapes) <= 0.1
        rows.append(row)
        add(f"monitor/{count}/cpu-per-stream", row["cpuPercentPerStream"])
        add(f"monitor/{count}/mib-per-stream", row["MiBPerStream"])
        if not row["passed"]:
            break
    return rows


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- 3a: channel zapping and sessions one after another --------------------------------------------------

def start_labs(path, count):
    """`liveplay-lab serve PATH --port 0`, count times: (processes, URLs)."""
    processes, urls = [], []
    for _ in range(count):
        process = subprocess.Popen([f"{BIN}/liveplay-lab", "serve", path, "--port", "0"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        line = process.stdout.readline().decode()
        match = re.match(r"listening (http:\S+)", line)
        if not match:
            raise RuntimeError(f"lab server did not start: {line!r}")
        processes.append(process)
        urls.append(match.group(1))
    return processes, urls


def mpv_zap(urls, switches):
    """mpv (low-latency profile) on a playlist of the URLs, `playlist-next` over its JSON IPC once a second: seconds
    from the command to its `playback-restart` event (the new stream's first frame)."""
    import socket
    path = f"{WORK}/mpv-zap.sock"
    if os.path.exists(path):
        os.unlink(path)
    process = subprocess.Popen(["mpv", "--no-config", "--profile=low-latency", "--vo=null", "--ao=null", "--idle=yes",
                                "--loop-playlist=inf", f"--input-ipc-server={path}"] + urls,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    times = []
    try:
        for _ in range(100):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        client = socket.socket(socket.AF_UNIX)
        client.connect(path)
        client.settimeout(10)
        pending = b""

        def wait_for(event):
            nonlocal pending
            deadline = time.perf_counter() + 10
            while time.perf_counter() < deadline:
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    try:
                        if json.loads(line).get("event") == event:
                            return True
                    except ValueError:
                        pass
                pending += client.recv(65536)
            return False

        wait_for("playback-restart")
        for _ in range(switches):
            time.sleep(1)
            start = time.perf_counter()
            client.sendall(b'{"command": ["playlist-next", "force"]}\n')
            times.append(time.perf_counter() - start if wait_for("playback-restart") else None)
        client.close()
    finally:
        kill_group(process)
        process.wait()
    return times


def measure_zap():
    """Channel zapping among 5 live streams of the lab (720p30, GOP cache): liveplay in process, preloaded and cold
    (`liveplay-bench zap`: each switch's `switch_ms` from LIVEPLAY_EVT_SWITCHED, the call to the picture at the
    sink), against the peers switching as they can: mpv's `playlist-next` (low-latency profile) and ffplay
    started afresh on the next stream (to its first `showinfo` frame line)."""
    processes, urls = start_labs(f"{MEDIA}/720p30.flv", 5)
    try:
        for preload in (True, False):
            name = "liveplay-preloaded" if preload else "liveplay-cold"
            log(f"zap: {name}, {ZAP_SWITCHES} switches")
            output = subprocess.run([BENCH, "zap"] + urls + ["--switches", str(ZAP_SWITCHES)]
                                    + ([] if preload else ["--no-preload"]), capture_output=True,
                                    timeout=ZAP_SWITCHES * 12 + 60)
            result = json.loads(output.stdout.decode().strip().splitlines()[-1])
            for value in result["switchMilliseconds"]:
                add(f"zap/{name}", value / 1000)
            for value in result.get("preloadBytesPerSecond", []):
                add("zap/preload-bytes-per-second", value)
            if result["failed"]:
                notes.append(f"zap {name}: {result['failed']} switches showed no picture in 10 s")
        log(f"zap: mpv, {ZAP_SWITCHES} switches")
        for value in mpv_zap(urls, ZAP_SWITCHES):
            add("zap/mpv", value)
        log(f"zap: ffplay, {ZAP_SWITCHES} starts")
        quiet = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
        for index in range(ZAP_SWITCHES):
            command = ["ffplay", "-hide_banner", "-loglevel", "info", "-fflags", "nobuffer", "-flags", "low_delay",
                       "-vf", "showinfo", urls[(index + 1) % len(urls)]]
            add("zap/ffplay", run_until_line(command, rb"n: *0 pts", 10, stderr=True, environment=quiet))
    finally:
        for process in processes:
            kill_group(process)
            process.wait()


# --- 3b: a bandwidth step, with and without adaptation ------------------------------------------------------

def abr_media():
    """Three renditions of one 720p30 source with the same GOP (1 s) and timestamps, as issue 48's trace has them:
    2.5 Mbit/s at 720p, 1.2 at 540p, 0.5 at 360p."""
    paths = {}
    for name, size, rate in (("high", "1280x720", "2500k"), ("mid", "960x540", "1200k"), ("low", "640x360", "500k")):
        path = f"{MEDIA}/abr-{name}.flv"
        if not os.path.exists(path):
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
                            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", "40", "-vf",
                            f"scale={size}", "-c:v", "libx264", "-preset", "veryfast", "-b:v", rate, "-maxrate", rate,
                            "-bufsize", rate, "-g", "30", "-keyint_min", "30", "-sc_threshold", "0", "-bf", "0",
                            "-c:a", "aac", "-b:a", "64k", path], check=True, timeout=600)
        paths[name] = path
    return paths


# Issue 48's trace, on the proxy's clock: 4 Mbit/s, 900 kbit/s from 15 s to 35 s, 4 Mbit/s again; 60 s a run.
ABR_CAP = (15, 35)
ABR_SECONDS = 60


def measure_abr():
    """A LAS manifest of the lab's three renditions behind the impairment proxy, its bandwidth stepped from 4 Mbit/s
    down to 900 kbit/s from 15 s to 35 s and back: liveplay adapting, and liveplay held on the top rendition
    (`--rendition 3`, as a player of one URL plays), 60 s each, alternating. Per run, from the JSON log: stalls
    (2105), the seconds stalled and the longest stall, the switches (2015), how long after the cap the first switch
    down came and after its end the first switch up, and the pictures shown."""
    media = abr_media()
    lab = subprocess.Popen([f"{BIN}/liveplay-lab", "serve", media["high"], "--rendition", f"mid={media['mid']}",
                            "--rendition", f"low={media['low']}", "--port", "0"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        match = re.match(r"listening http://127.0.0.1:(\d+)/", lab.stdout.readline().decode())
        if not match:
            raise RuntimeError("the rendition lab did not start")
        for round_index in range(ABR_ROUNDS):
            for name in (("adaptive", "top-only") if round_index % 2 == 0 else ("top-only", "adaptive")):
                proxy = subprocess.Popen(
                    [f"{BIN}/liveplay-lab", "proxy", "--upstream", f"127.0.0.1:{match.group(1)}", "--listen", "0",
                     "--timeline", f"at=0s bandwidth=4000; at={ABR_CAP[0]}s bandwidth=900; "
                                   f"at={ABR_CAP[1]}s bandwidth=4000"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
                try:
                    port = re.search(rb"listening [^ ]*:(\d+) ->", proxy.stdout.readline()).group(1).decode()
                    manifest = f"{WORK}/abr-{port}.json"
                    with open(manifest, "w") as handle:
                        json.dump({"version": "1.0.0", "adaptationSet": [{"duration": 1000, "representation": [
                            {"id": 1, "url": f"http://127.0.0.1:{port}/low.flv", "maxBitrate": 600, "height": 360},
                            {"id": 2, "url": f"http://127.0.0.1:{port}/mid.flv", "maxBitrate": 1300, "height": 540},
                            {"id": 3, "url": f"http://127.0.0.1:{port}/live.flv", "maxBitrate": 2600, "height": 720,
                             "defaultSelected": True}]}]}, handle)
                    log_path = f"{WORK}/abr-{name}-{round_index}.jsonl"
                    command = [f"{BIN}/liveplay", manifest, "-t", str(ABR_SECONDS), "--json"]
                    run_to_exit(command + (["--rendition", "3"] if name == "top-only" else []), ABR_SECONDS + 45,
                                log_path)
                    record_abr(name, list(json_lines(log_path)))
                finally:
                    kill_group(proxy)
                    proxy.wait()
    finally:
        kill_group(lab)
        lab.wait()


def record_abr(name, lines):
    """One run's figures from its log: when each line came (`ts`) since the player started (its `start` line, a few
    hundred milliseconds after the proxy's clock began)."""
    def at(line):
        return datetime.datetime.fromisoformat(line["ts"].replace("Z", "+00:00")).timestamp()
    started = next((at(line) for line in lines if line.get("kind") == "start"), None)
    events = [line for line in lines if line.get("kind") == "event"]
    if started is None:
        notes.append(f"abr {name}: no start line in the log")
        return
    stalls = [e["params"].get("EVT_BLOCK_DURATION", 0) for e in events if e.get("code") == 2105]
    switches = [(at(e) - started, e["params"]) for e in events if e.get("code") == 2015]
    # Each rendition's session sums up its own part (9006): the pictures shown are theirs together.
    summaries = [e["params"] for e in events if e.get("code") == 9006]
    add(f"abr/{name}/stalls", len(stalls))
    add(f"abr/{name}/stalled-s", sum(stalls) / 1000)
    add(f"abr/{name}/longest-stall-ms", max(stalls, default=0))
    add(f"abr/{name}/switches", len(switches))
    add(f"abr/{name}/frames", sum(summary.get("frames_shown", 0) for summary in summaries))
    down = [t for t, p in switches if t >= ABR_CAP[0] and p.get("to", 0) < p.get("from", 0)]
    up = [t for t, p in switches if t >= ABR_CAP[1] and p.get("to", 0) > p.get("from", 0)]
    if down:
        add(f"abr/{name}/down-s", down[0] - ABR_CAP[0])
    if up:
        add(f"abr/{name}/up-s", up[0] - ABR_CAP[1])
    told = ", ".join(f"{p.get('from')}→{p.get('to')} {p.get('reason')} at {t:.1f} s" for t, p in switches)
    if told:
        notes.append(f"{name} switched {told}")


def measure_sessions():
    """`liveplay-bench sessions`: SESSIONS playbacks one after another in one process, peak RSS after the 10th and
    after the last, and the same with MALLOC_ARENA_MAX=1 (one glibc arena: the plateau a process can reach)."""
    for arenas in (None, "1"):
        name = "sessions" if arenas is None else "sessions-arena1"
        log(f"{name}: {SESSIONS} playbacks")
        environment = dict(os.environ)
        if arenas:
            environment["MALLOC_ARENA_MAX"] = arenas
        output = subprocess.run([BENCH, "sessions", LAB, "--count", str(SESSIONS)], capture_output=True,
                                timeout=SESSIONS * 15 + 60, env=environment)
        result = json.loads(output.stdout.decode().strip().splitlines()[-1])
        add(f"{name}/checkpoint-kB", result["peakRSSAtCheckpointKilobytes"])
        add(f"{name}/end-kB", result["peakRSSKilobytes"])
        add(f"{name}/growth", result["growth"])
        add(f"{name}/failed", result["failedSessions"])


# --- 3b: a window with sound -------------------------------------------------------------------------------

def start_xvfb():
    """A virtual display (Xvfb picks the number): (process, ':N')."""
    process = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    ready, _, _ = select.select([process.stdout], [], [], 10)
    number = os.read(process.stdout.fileno(), 64).decode().strip() if ready else ""
    if not number.isdigit():
        kill_group(process)
        raise RuntimeError("Xvfb did not start")
    return process, f":{number}"


def run_for(command, seconds, beside=None):
    """Runs command for `seconds` of wall time, then SIGTERM (its process group); returns (wall, rusage).
    ffplay and mpv do not stop on their own on a live stream (`-t` counts stream time they never reach).
    `beside`, when given, runs alongside (its CPU is not counted) and is stopped with it."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    helper = subprocess.Popen(beside, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) if beside else None
    time.sleep(seconds)
    if helper:
        kill_group(helper)
        helper.wait()
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.perf_counter() + 5
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            return time.perf_counter() - start, usage
        if time.perf_counter() > deadline:
            kill_group(process)
            _, _, usage = os.wait4(process.pid, 0)
            return time.perf_counter() - start, usage
        time.sleep(0.01)


def measure_window():
    """`liveplay URL --window` against ffplay and mpv, each showing the 720p30 stream in a window with its sound,
    for WINDOW_SECONDS under Xvfb (Mesa's GL); sound through SDL's disk driver into /dev/null (ffplay and liveplay
    use SDL; mpv its own SDL output). Each runs for the same wall time and is then stopped (SIGTERM); CPU is
    its user + system time over that time, start-up included."""
    try:
        xvfb, display = start_xvfb()
    except (OSError, RuntimeError) as error:
        notes.append(f"window: {error}")
        return
    seconds = WINDOW_SECONDS
    previous = {key: os.environ.get(key) for key in ("DISPLAY", "SDL_AUDIODRIVER", "SDL_DISKAUDIOFILE")}
    os.environ.update({"DISPLAY": display, "SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": "/dev/null"})
    commands = {
        "liveplay": [f"{BIN}/liveplay", LAB, "--window", "--json"],
        "liveplay-bar": [f"{BIN}/liveplay", LAB, "--window", "--json"],
        "ffplay": ["ffplay", "-hide_banner", "-loglevel", "error", LAB],
        "mpv": ["mpv", "--no-config", "--really-quiet", "--ao=sdl", LAB],
    }
    # The control bar kept on screen: the pointer moves over the picture every second (the bar hides 3 s after the
    # last move), so its drawing is in every frame; xdotool's own CPU is its process's, not counted.
    wiggle = ["sh", "-c", "while :; do xdotool mousemove 600 300; sleep 1; xdotool mousemove 640 320; sleep 1; done"]
    try:
        for round_index in range(LIVE_ROUNDS):
            names = list(commands)
            order = names[round_index % len(names):] + names[:round_index % len(names)]
            for name in order:
                log(f"window round {round_index + 1}/{LIVE_ROUNDS}: {name}")
                wall, usage = run_for(commands[name], seconds, wiggle if name == "liveplay-bar" else None)
                add(f"window/{name}", (usage.ru_utime + usage.ru_stime) / wall)
                add(f"window/{name}-kB", usage.ru_maxrss)
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        kill_group(xvfb)
        xvfb.wait()


# --- 4: RSS of N players in one process ------------------------------------------------------------------

def measure_rss():
    for count in (1, 10, 50):
        log(f"rss: multi-stream-monitor, {count} streams")
        command = [f"{BIN}/multi-stream-monitor"] + [LAB] * count + ["--seconds", str(RSS_SECONDS)]
        wall, status, usage = run_to_exit(command, RSS_SECONDS + 30)
        if wall is None:
            notes.append(f"rss probe {count}: timeout")
            continue
        add(f"rssmulti/probe/{count}", usage.ru_maxrss)
    for count in (1, 4, 8):
        log(f"rss: liveplay-bench players, {count} decoding")
        path = f"{WORK}/rss-decode.json"
        command = [BENCH, "players", LAB, "--count", str(count), "--seconds", str(RSS_SECONDS)]
        wall, status, usage = run_to_exit(command, RSS_SECONDS + 30, path)
        if wall is None:
            notes.append(f"rss decode {count}: timeout")
            continue
        add(f"rssmulti/decode/{count}", usage.ru_maxrss)
        result = json_lines(path)
        if result:
            add(f"rssmulti/decode/{count}-end", result[-1]["endRSSKilobytes"])


# --- 5: scale --------------------------------------------------------------------------------------------

def lab_ticks():
    with open(f"/proc/{LAB_PID}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


MINIMUM_FPS = 27  # 90 % of the 720p30 stream's 30 fps


def judge(mode, row):
    """A decoding step also fails when a player showed fewer than MINIMUM_FPS pictures a second after 3 s."""
    if mode == "decode" and "fpsOK" not in row:
        row["fpsOK"] = row.get("minimumFPS", 0) >= MINIMUM_FPS
        row["passed"] = bool(row.get("passed")) and row["fpsOK"]
        row["passedAfterWarmup"] = bool(row.get("passedAfterWarmup")) and row["fpsOK"]
    return row


def measure_scale():
    scale = {}
    for mode, steps in (("probe", PROBE_STEPS), ("decode", DECODE_STEPS)):
        rows = []
        for count in steps:
            log(f"scale: {count} players, {mode}")
            time.sleep(2)
            path = f"{WORK}/scale.json"
            command = [BENCH, "players", LAB, "--count", str(count), "--seconds", str(SCALE_SECONDS),
                       "--decode" if mode == "decode" else "--no-decode"]
            before = lab_ticks()
            start = time.perf_counter()
            wall, status, usage = run_to_exit(command, SCALE_SECONDS + 60, path)
            lab_cpu = (lab_ticks() - before) / os.sysconf("SC_CLK_TCK") / (time.perf_counter() - start) * 100
            result = (json_lines(path) or [{}])[-1]
            result["labCPUPercent"] = round(lab_cpu, 1)
            result["timedOut"] = wall is None
            if wall is None:
                result["passed"] = False
            rows.append(judge(mode, result))
            # Go on while the steady state holds, so the table shows where each criterion gives out.
            if not result.get("passedAfterWarmup"):
                break
        scale[mode] = rows
    return scale


# --- 6: latency through a stall --------------------------------------------------------------------------

MPV_LUA = """
mp.add_periodic_timer(0.25, function()
    local position = mp.get_property_number("time-pos")
    local cache = mp.get_property_number("demuxer-cache-duration")
    io.stdout:write(string.format("LIVEPLAY-BENCH %s %s\\n", tostring(position), tostring(cache)))
    io.stdout:flush()
end)
"""


def wall_clock_pair(url):
    """(wallClockMs, streamMs) from the lab stream's first onLivePlayClock tag (docs/wall-clock-tags.md)."""
    import struct
    with urllib.request.urlopen(url, timeout=5) as response:
        data = b""
        while len(data) < 8 << 20:
            data += response.read1(65536)
            at = data.find(b"onLivePlayClock")
            if at >= 0 and data.find(b"source", at) > 0:
                def number(key):
                    index = data.index(key, at) + len(key)
                    assert data[index] == 0  # AMF0 Number marker
                    return struct.unpack(">d", data[index + 1:index + 9])[0]
                return number(b"wallClockMs"), number(b"streamMs")
    return None


STALL = ["--timeline", "at=5s stall=3s", "--timeline-origin", "connection"]


def start_proxy(toxics=STALL):
    """The impairment proxy in front of the lab with `toxics` (a 3 s stall 5 s into each connection); (process,
    port)."""
    process = subprocess.Popen([f"{BIN}/liveplay-lab", "proxy", "--upstream", f"127.0.0.1:{LAB_PORT}", "--listen", "0"]
                               + toxics, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    line = b""
    deadline = time.time() + 10
    while time.time() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if ready:
            line += os.read(process.stdout.fileno(), 4096)
            match = re.search(rb"listening [^ ]*:(\d+) ->", line)
            if match:
                return process, int(match.group(1))
    kill_group(process)
    raise RuntimeError("proxy did not start")


def stamped_lines(command, seconds, stderr=False, environment=None):
    """(seconds since spawn, wall ms, line) for each stdout (or stderr) line, for `seconds`; a carriage return
    ends a line too (ffplay rewrites its status line)."""
    start = time.perf_counter()
    pipes = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE} if stderr else \
        {"stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True,
                               env=dict(os.environ, **(environment or {})), **pipes)
    stream = process.stderr if stderr else process.stdout
    lines = []
    buffer = b""
    try:
        while time.perf_counter() - start < seconds:
            ready, _, _ = select.select([stream], [], [], 0.5)
            if not ready:
                continue
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk.replace(b"\r", b"\n")
            *complete, buffer = buffer.split(b"\n")
            now = time.perf_counter() - start
            wall = time.time() * 1000
            lines += [(now, wall, line) for line in complete]
    finally:
        kill_group(process)
        process.wait()
    return lines


# Peers' playback position in stream seconds, from what each prints while playing: mpv through a Lua timer,
# ffplay's status line (its master clock: the audio it has played; SDL's dummy audio driver, no display; the
# low-latency flags its users pass), GStreamer's fakesink printing each buffer as it renders it (sync=true).
PEERS = {
    "ffplay": (["ffplay", "-nodisp", "-fflags", "nobuffer", "-flags", "low_delay", "-framedrop"],
               rb"^\s*([0-9]+\.[0-9]+) (?:M-A|M-V|A-V)", True),
    "gstreamer": (["gst-launch-1.0", "-v", "souphttpsrc", "is-live=true", "location={url}", "!", "flvdemux", "name=d",
                   "d.video", "!", "queue", "!", "h264parse", "!", "avdec_h264", "!", "fakesink", "sync=true",
                   "silent=false"], rb"pts: ([0-9]+):([0-9]+):([0-9.]+)", False),
}


def peer_points(name, url, pair):
    """(seconds since start, end-to-end ms) of a peer player through the proxy."""
    arguments, pattern, on_stderr = PEERS[name]
    command = [a.replace("{url}", url) for a in arguments] + ([] if "{url}" in " ".join(arguments) else [url])
    points, last = [], -1.0
    for now, wall, line in stamped_lines(command, PLOT_SECONDS, stderr=on_stderr,
                                         environment={"SDL_AUDIODRIVER": "dummy"}):
        match = re.search(pattern, line)
        if not match or not pair or now - last < 0.25:
            continue
        groups = [float(g) for g in match.groups()]
        position = groups[0] if len(groups) == 1 else groups[0] * 3600 + groups[1] * 60 + groups[2]
        sent = pair[0] + (position * 1000 - pair[1])
        points.append((round(now, 3), round(wall - sent)))
        last = now
    return points


# --- 5: latency to the live edge, side by side, measured from outside -------------------------------------

LATENCY_SECONDS = float(env.get("LATENCY_SECONDS", 16 if QUICK else 30))
LATENCY_ROUNDS = int(env.get("LATENCY_ROUNDS", 1 if QUICK else 2))
# Where the latency's samples start, seconds from the player's start: past its start-up, and in the stall scenario
# past the stall (5 s into the connection, 3 s long) and what each player does about it. Stutters count from 4 s in
# every scenario, so the stall's own freeze is one for each player.
LATENCY_FROM = {"clean": 4.0, "jitter": 4.0, "stall": 10.0}
# The impairment proxy's toxics per scenario; None: the lab's relay itself.
LATENCY_SCENARIOS = {
    "clean": None,
    "jitter": ["--latency", "100", "--jitter", "200"],
    "stall": STALL,
}
# Some of them only (LATENCY_ONLY="stall"), for working on the section.
LATENCY_SCENARIOS = {name: toxics for name, toxics in LATENCY_SCENARIOS.items()
                     if name in env.get("LATENCY_ONLY", " ".join(LATENCY_SCENARIOS)).split()}
# liveplay at the 0.3 s target and at each further target in LATENCY_TARGETS (seconds).
LATENCY_TARGETS = ["0.3"] + env.get("LATENCY_TARGETS", "0.1 0.05").split()
LATENCY_PLAYERS = [f"liveplay speed {target} s" for target in LATENCY_TARGETS] + [
    "mpv low-latency", "ffplay nobuffer", "gst-launch"]


def player_positions(player, url, seconds):
    """(seconds since start, wall ms when the bench read it, stream position in seconds) of what `player` shows, as
    it prints it: liveplay's `frame` lines (`--trace-frames`), mpv's time-pos through a Lua timer, ffplay's status
    line, GStreamer's fakesink's buffers (sync=true)."""
    if player.startswith("liveplay"):
        target = player.split()[2]
        command = [f"{BIN}/liveplay", url, "--mode", "speed", "--min-cache", target, "--max-cache", target,
                   "--cache-time", target, "--trace-frames", "--json", "--duration", str(seconds)]
        out = []
        for now, wall, line in stamped_lines(command, seconds + 2):
            if b'"kind":"frame"' in line:
                out.append((now, wall, json.loads(line)["pts_ms"] / 1000))
        return out
    if player.startswith("mpv"):
        script = f"{WORK}/latency.lua"
        with open(script, "w") as handle:
            handle.write(MPV_LUA)
        command = ["mpv", "--no-config", "--profile=low-latency", "--vo=null", "--ao=null", "--rebase-start-time=no",
                   f"--script={script}", url]
        out = []
        for now, wall, line in stamped_lines(command, seconds):
            match = re.match(rb"LIVEPLAY-BENCH ([-0-9.]+) ", line)
            if match:
                out.append((now, wall, float(match.group(1))))
        return out
    arguments, pattern, on_stderr = PEERS["ffplay" if player.startswith("ffplay") else "gstreamer"]
    command = [a.replace("{url}", url) for a in arguments] + ([] if "{url}" in " ".join(arguments) else [url])
    out = []
    for now, wall, line in stamped_lines(command, seconds, stderr=on_stderr, environment={"SDL_AUDIODRIVER": "dummy"}):
        match = re.search(pattern, line)
        if match:
            groups = [float(g) for g in match.groups()]
            out.append((now, wall, groups[0] if len(groups) == 1 else groups[0] * 3600 + groups[1] * 60 + groups[2]))
    return out


def latency_figures(points, pair, start, stutters_from, per_picture):
    """Sampled every 0.25 s at most (the peers print about that often, so every player is judged by the same
    sampling): the latency of each sample from `start` on (the bench's wall clock against the wall time the lab
    stamped the picture's stream time with), and the stutters from `stutters_from` on: stretches of 0.2 s or more
    in which the position moved less than half as far as the wall clock, or (`per_picture`: a player that prints a
    line per picture) of 0.4 s with nothing printed, counted once each however long."""
    sampled, last = [], -1.0
    for now, wall, position in points:
        if now >= min(start, stutters_from) and now - last >= 0.25:
            sampled.append((now, wall, position))
            last = now
    latencies = [wall - (pair[0] + (position * 1000 - pair[1])) for now, wall, position in sampled if now >= start]
    stutters, frozen = 0, False
    moving = [sample for sample in sampled if sample[0] >= stutters_from]
    for (now0, _, position0), (now1, _, position1) in zip(moving, moving[1:]):
        # A player that prints a line per picture (liveplay, GStreamer) and prints nothing for 0.4 s shows nothing
        # new, however far its position has moved when it prints again (a skip after a stall hides no freeze).
        # mpv's and ffplay's lines come on a timer, with the position where it stands.
        silent = per_picture and now1 - now0 >= 0.4
        stuck = silent or now1 - now0 >= 0.2 and position1 - position0 < 0.5 * (now1 - now0)
        if stuck and not frozen:
            stutters += 1
        frozen = stuck
    return latencies, stutters


def measure_latency():
    for round_index in range(LATENCY_ROUNDS):
        for scenario, toxics in LATENCY_SCENARIOS.items():
            turn = round_index % len(LATENCY_PLAYERS)
            order = LATENCY_PLAYERS[turn:] + LATENCY_PLAYERS[:turn]
            for player in order:
                log(f"latency round {round_index + 1}/{LATENCY_ROUNDS}: {scenario} {player}")
                proxy = None
                try:
                    if toxics is None:
                        url = LAB
                    else:
                        proxy, port = start_proxy(toxics)
                        url = f"http://127.0.0.1:{port}/live.flv"
                    pair = wall_clock_pair(LAB)
                    points = player_positions(player, url, LATENCY_SECONDS)
                finally:
                    if proxy:
                        kill_group(proxy)
                        proxy.wait()
                per_picture = player.startswith(("liveplay", "gst"))
                latencies, stutters = latency_figures(
                    points, pair, LATENCY_FROM[scenario], LATENCY_FROM["clean"], per_picture) if pair else ([], 0)
                positions[f"{scenario}/{player}/{round_index + 1}"] = {"pair": pair, "points": points}
                if len(latencies) < 4:
                    notes.append(f"latency {scenario} {player}: {len(points)} positions read, too few to measure")
                    continue
                ordered = sorted(latencies)
                add(f"latency/{scenario}/{player}/median-ms", statistics.median(ordered))
                add(f"latency/{scenario}/{player}/p95-ms", ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))])
                add(f"latency/{scenario}/{player}/stutters", stutters)


def latency_report():
    """The latency section's table: each scenario's players by median, p95 and stutters (the rounds' medians)."""
    rows = []
    for scenario in LATENCY_SCENARIOS:
        for player in LATENCY_PLAYERS:
            key = f"latency/{scenario}/{player}"
            if f"{key}/median-ms" not in samples:
                continue
            median = statistics.median(samples[f"{key}/median-ms"])
            p95 = statistics.median(samples[f"{key}/p95-ms"])
            stutters = max(samples[f"{key}/stutters"])
            rows.append(f"| {scenario} | {player} | {median:.0f} | {p95:.0f} | {stutters} |")
    if not rows:
        return ""
    return "\n".join([
        "", "### Latency to the live edge, measured from outside (`latency`)", "",
        f"{LATENCY_ROUNDS} round(s) of {LATENCY_SECONDS:.0f} s per player and scenario, the players' order rotating; "
        "latency from the bench's clock against the lab's `onLivePlayClock` stamp, sampled every 0.25 s from 4 s "
        "(10 s in the stall scenario, past the stall); stutters from 4 s (the stall's freeze is one), the most in "
        "one round.", "",
        "| scenario | player | median, ms | p95, ms | stutters |", "|---|---|---:|---:|---:|"] + rows)


def measure_plot():
    series = {}
    for mode in ("auto", "speed", "smooth", "mpv", "ffplay", "gstreamer"):
        log(f"stall plot: {mode}")
        proxy, port = start_proxy()
        url = f"http://127.0.0.1:{port}/live.flv"
        try:
            if mode in PEERS:
                series[mode] = peer_points(mode, url, wall_clock_pair(LAB))
            elif mode == "mpv":
                script = f"{WORK}/latency.lua"
                with open(script, "w") as handle:
                    handle.write(MPV_LUA)
                pair = wall_clock_pair(LAB)
                command = ["mpv", "--no-config", "--vo=null", "--ao=null", "--rebase-start-time=no",
                           f"--script={script}", url]
                points = []
                for now, wall, line in stamped_lines(command, PLOT_SECONDS):
                    match = re.match(rb"LIVEPLAY-BENCH ([-0-9.]+) ", line)
                    if match and pair:
                        sent = pair[0] + (float(match.group(1)) * 1000 - pair[1])
                        points.append((round(now, 3), round(wall - sent)))
                series["mpv"] = points
            else:
                command = [f"{BIN}/liveplay", url, "--mode", mode, "--json", "--duration", str(PLOT_SECONDS)]
                points = []
                for now, _, line in stamped_lines(command, PLOT_SECONDS + 5):
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if record.get("kind") == "status":
                        status = record["status"]
                        points.append((round(now, 3), status.get("e2e_latency_ms"), status.get("latency_ms")))
                series[f"liveplay {mode}"] = points
        finally:
            kill_group(proxy)
            proxy.wait()
    return series


def plot(series, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(8, 4), dpi=100)
    axes.axvspan(5, 8, color="0.9", label="stall (3 s, no bytes)")
    for name, points in series.items():
        xs = [p[0] for p in points if p[1] is not None]
        ys = [p[1] / 1000 for p in points if p[1] is not None]
        axes.plot(xs, ys, marker="." if name.startswith("liveplay") else None, label=name)
    axes.set_xlabel("seconds since the player started (stall at 5–8 s of its connection)")
    axes.set_ylabel("end-to-end latency, s")
    axes.set_ylim(0, 6)
    axes.set_title("720p30 from the lab through a 3 s stall")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)


# --- report ----------------------------------------------------------------------------------------------

def cell(key, scale=1.0, places=0):
    values = samples.get(key)
    if not values:
        return "—", None
    s = stats([v * scale for v in values])
    fmt = f"{{:.{places}f}}"
    return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}–{fmt.format(s['max'])})", s["median"]


def verdict(ok):
    return "—" if ok is None else ("met" if ok else "missed")


def report(scale, series, monitor_rows=None):
    lines = []
    out = lines.append
    # First frame.
    for server, label in (("lab", "GOP-cached lab server (HTTP-FLV)"), ("rtmp", "nginx-rtmp (ffmpeg publishing)")):
        if not any(k.startswith(f"firstframe/{server}/") for k in samples):
            continue
        out(f"### First frame, {label}: process start to first decoded frame, ms — lower is better")
        out("")
        over = " | over rtmpdump's keyframe, same moment" if server == "rtmp" else ""
        out(f"| tool | ms{over} | liveplay / tool |")
        out("|---|---|" + ("---|" if over else "") + "---|")
        _, ours = cell(f"firstframe/{server}/liveplay", 1000)
        tools = ["liveplay", "gstreamer", "mpv", "ffmpeg"] + (["rtmpdump"] if server == "rtmp" else ["ffmpeg-lowlat"])
        for tool in tools:
            text, median = cell(f"firstframe/{server}/{tool}", 1000)
            ratio = f"{ours / median:.2f}" if ours and median else "—"
            extra = ""
            if server == "rtmp":
                extra = " | " + (cell(f"firstframe/{server}/{tool}-over-keyframe", 1000)[0] if tool != "rtmpdump"
                                 else "(the floor)")
            out(f"| {tool} | {text}{extra} | {ratio if tool != 'liveplay' else '1'} |")
        inproc, _ = cell(f"firstframe/{server}/liveplay-inprocess-first_frame_ms")
        out("")
        if server == "lab" and samples.get("firstframe/lab/liveplay"):
            fast = sum(1 for v in samples["firstframe/lab/liveplay"] if v <= 0.040)
            shown = samples.get("firstframe/lab/liveplay-inprocess-first_frame_ms", [])
            quick_shown = sum(1 for v in shown if v <= 10)
            out(f"liveplay runs with the first frame ≤ 40 ms from process start: {fast} of "
                f"{len(samples['firstframe/lab/liveplay'])}; shown ≤ 10 ms in process: {quick_shown} of {len(shown)}.")
            out("")
        if server == "lab" and samples.get("firstframe/lab/liveplay-version"):
            out(f"Process start alone (`liveplay --version` to its exit): "
                f"{cell('firstframe/lab/liveplay-version', 1000)[0]} ms, with "
                f"{cell('firstframe/lab/liveplay-shared-objects')[0]} shared objects mapped by the loader "
                "(`LD_TRACE_LOADED_OBJECTS=1`).")
            out("")
        out(f"liveplay in process (session summary 9006 `first_frame_ms`): {inproc} ms. "
            "PLAY_BEGIN (2004) milestones, median (min–max) ms: " + ", ".join(
                f"`{k.split('-2004-')[1]}` {cell(k)[0]}" for k in sorted(samples)
                if k.startswith(f"firstframe/{server}/liveplay-2004-")) + ".")
        out("")
    # CPU.
    if any(k.startswith("cpu/") for k in samples):
        out(f"### Live CPU seconds per stream second (user + system, {LIVE_SECONDS:g} s from the lab) — lower is better")
        out("")
        out("| stream | liveplay (decode) | liveplay `--no-decode` | ffmpeg `-threads 1 -f null` | decode / ffmpeg |"
            " peak RSS MB: liveplay | ffmpeg | ratio | waits / s: liveplay | ffmpeg |")
        out("|---|---|---|---|---|---|---|---|---|---|")
        for stream in ("720p30", "1080p60", "720p30-rtmp"):
            if not any(k.startswith(f"cpu/{stream}/") for k in samples):
                continue
            a, am = cell(f"cpu/{stream}/liveplay", 1, 3)
            p, _ = cell(f"cpu/{stream}/liveplay-probe", 1, 4)
            f, fm = cell(f"cpu/{stream}/ffmpeg", 1, 3)
            r, rm = cell(f"rss/{stream}/liveplay-kB", 1 / 1024, 1)
            rf, rfm = cell(f"rss/{stream}/ffmpeg-kB", 1 / 1024, 1)
            w, _ = cell(f"wakeups/{stream}/liveplay", 1, 0)
            wf, _ = cell(f"wakeups/{stream}/ffmpeg", 1, 0)
            ratio = f"{am / fm:.3f}" if am and fm else "—"
            rss_ratio = f"{rm / rfm:.2f}" if rm and rfm else "—"
            out(f"| {stream} | {a} | {p} | {f} | {ratio} | {r} | {rf} | {rss_ratio} | {w} | {wf} |")
        out("")
        out("Waits: voluntary context switches of every thread, start-up included, per second (`ru_nvcsw`).")
        out("")
    # Allocations.
    if any(k.startswith("allocations/") for k in samples):
        short, long = ALLOCATION_SECONDS
        out(f"### Heap allocations a second of steady 720p30 playback (heaptrack, {long:g} s less {short:g} s runs)"
            " — lower is better")
        out("")
        out("| stream | tool | its own path | libavcodec (and `av_new_packet`, `av_frame_clone` or `_ref`) | CLI start, log |"
            " runtime, NIO, loader | total | total / ffmpeg's |")
        out("|---|---|---|---|---|---|---|---|")
        for stream in ("http-flv", "rtmp"):
            parts = {tool: [cell(f"allocations/{stream}/{tool}/{source}", 1, 0)
                            for source in ("liveplay", "libavcodec", "cli", "other")] for tool in ("liveplay", "ffmpeg")}
            totals = {tool: sum(max(0, median or 0) for _, median in cells) for tool, cells in parts.items()}
            for tool, cells in parts.items():
                if not any(median for _, median in cells):
                    continue
                own = cells[0][0] if tool == "liveplay" else "—"
                ratio = f"{totals[tool] / totals['ffmpeg']:.2f}" if tool == "liveplay" and totals["ffmpeg"] else ""
                out(f"| {stream} | {tool} | {own} | {cells[1][0]} | {cells[2][0]} | {cells[3][0]} |"
                    f" {totals[tool]:.0f} | {ratio} |")
        out("")
        out("ffmpeg's allocations outside libavcodec count as runtime (its own code has no Swift frames to attribute).")
        out("The rows are what runs after the first 5 s: each tool's difference between a 20 s and a 5 s run.")
        out("")
    # Recording.
    if any(k.startswith("record/") for k in samples):
        out(f"### Recording while playing, 720p30 2 Mbit/s lab stream: CPU seconds per stream second ({LIVE_SECONDS:g} s)"
            " — lower is better")
        out("")
        out("| run | CPU s/s | / playing alone | peak RSS MB |")
        out("|---|---|---|---|")
        for name, baseline in (("alone", "alone"), ("record-mp4", "alone"), ("record-flv", "alone"),
                               ("probe", "probe"), ("probe-record-mp4", "probe"), ("ffmpeg-copy-mp4", "probe")):
            text, median = cell(f"record/{name}", 1, 4)
            _, base = cell(f"record/{baseline}", 1, 4)
            ratio = f"{median / base:.2f}" if median and base else "—"
            rss, _ = cell(f"record/{name}-rss-kB", 1 / 1024, 1)
            out(f"| {name} | {text} | {ratio if name != baseline else '1'} | {rss} |")
        out("")
        out("`ffmpeg-copy-mp4` (`ffmpeg -i URL -c copy`, no player) is compared with liveplay's probe mode.")
        out("")
    # Downloads.
    if any(k.startswith("download/") for k in samples):
        out(f"### Download throughput, a {DOWNLOAD_MB} MiB file from nginx on loopback, MB/s — higher is better")
        out("")
        out("| tool | MB/s | CPU s | throughput / curl's | / curl-sync's |")
        out("|---|---|---|---|---|")
        _, theirs = cell("download/curl-MBps", 1, 0)
        _, synced = cell("download/curl-sync-MBps", 1, 0)
        for tool in ("liveplay", "curl", "curl-sync"):
            text, median = cell(f"download/{tool}-MBps", 1, 0)
            cpu, _ = cell(f"download/{tool}-cpu", 1, 2)
            out(f"| {tool} | {text} | {cpu} | {f'{median / theirs:.2f}' if theirs and median else '—'} |"
                f" {f'{median / synced:.2f}' if synced and median else '—'} |")
        out("")
        out("liveplay syncs a download to disk before its index calls it complete; `curl-sync` is curl followed by"
            " `sync -d` on its file, the same promise; plain curl leaves the file in the page cache.")
        out("")
    # Monitor scale.
    if monitor_rows:
        out(f"### `liveplay monitor`: streams in one process, probe mode, 720p30 2 Mbit/s lab stream, /metrics every 5 s"
            f" ({MONITOR_SECONDS:g} s per step)")
        out("")
        out("| streams | all playing, no stall, scrape ≤ 100 ms | playing (least) | stalls | CPU % | per stream | peak RSS MiB |"
            " MiB per stream | scrape median / max ms | page KiB |")
        out("|---|---|---|---|---|---|---|---|---|---|")
        for row in monitor_rows:
            out(f"| {row['streams']} | {'yes' if row['passed'] else 'no'} | {row['playing']} | {row['stalls']:.0f} | "
                f"{row['cpuPercent']} | {row['cpuPercentPerStream']} | {row['peakRSSMiB']} | {row['MiBPerStream']} | "
                f"{row['scrapeMedianMs']} / {row['scrapeMaxMs']} | {row['pageKiB']} |")
        out("")
    # RSS.
    if any(k.startswith("rssmulti/") for k in samples):
        out(f"### Peak RSS of N players in one process ({RSS_SECONDS:g} s of 720p30 each), MB")
        out("")
        out("| players | probe (`multi-stream-monitor`) | per extra stream | decoding (`liveplay-bench players`) |"
            " per extra stream | decoding, RSS at the end |")
        out("|---|---|---|---|---|---|")
        for mode_counts in ((1, 1), (10, 4), (50, 8)):
            row = []
            for mode, count in zip(("probe", "decode"), mode_counts):
                text, median = cell(f"rssmulti/{mode}/{count}", 1 / 1024, 1)
                base = samples.get(f"rssmulti/{mode}/1")
                extra = (f"{(median - statistics.median(base) / 1024) / (count - 1):.2f}"
                         if count > 1 and base and median else "—")
                row += [f"{count}: {text}", extra]
            end, _ = cell(f"rssmulti/decode/{mode_counts[1]}-end", 1 / 1024, 1)
            out(f"| {mode_counts[0]} / {mode_counts[1]} | " + " | ".join(row) + f" | {end} |")
        out("")
    # Scale.
    for mode, rows in (scale or {}).items():
        for row in rows:
            judge(mode, row)
    if scale:
        out(f"### Scale: players in one process on one 720p30 2 Mbit/s lab stream ({SCALE_SECONDS:g} s per step)")
        out("")
        out("| mode | players | passed | passed after 3 s | statuses late / expected | max status offset ms | max delivery lag ms |"
            " stutters | min fps | CPU % of a core per stream | peak RSS MB | lab CPU % |")
        out("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for mode, rows in scale.items():
            for row in rows:
                out(f"| {mode} | {row.get('players', '—')} | {'yes' if row.get('passed') else 'no'} | "
                    f"{'yes' if row.get('passedAfterWarmup') else 'no'} | "
                    f"{row.get('lateStatuses', '—')} / {row.get('statusesExpected', '—')} "
                    f"(got {row.get('statuses', '—')}) | {row.get('maxStatusOffsetMilliseconds', '—')} | "
                    f"{row.get('maxDeliveryLagMilliseconds', '—')} | {row.get('stutters', '—')} | "
                    f"{row.get('minimumFPS', '—') if mode == 'decode' else '—'} | {row.get('cpuPercentPerStream', '—')}"
                    f" | {row.get('peakRSSKilobytes', 0) / 1024:.0f} | {row.get('labCPUPercent', '—')} |")
        out("")
    # Targets.
    out("### Targets")
    out("")
    out("| target | measured | |")
    out("|---|---|---|")

    def median(key, scale=1.0):
        values = samples.get(key)
        return statistics.median(values) * scale if values else None

    ff = median("firstframe/lab/liveplay", 1000)
    inproc = median("firstframe/lab/liveplay-inprocess-first_frame_ms")
    gst = median("firstframe/lab/gstreamer", 1000)
    over = median("firstframe/rtmp/liveplay-over-keyframe", 1000)
    rows = [
        ("first frame, lab, process start ≤ 40 ms", ff, lambda v: v <= 40, "{:.0f} ms"),
        ("first frame, lab, in process ≤ 10 ms", inproc, lambda v: v <= 10, "{:.0f} ms"),
        ("first frame, lab, ≤ 0.45 × GStreamer", ff / gst if ff and gst else None, lambda v: v <= 0.45, "{:.2f} ×"),
        ("first frame, nginx-rtmp ≤ keyframe wait (rtmpdump) + 30 ms", over, lambda v: v <= 30, "+{:.0f} ms"),
    ]
    for stream in ("720p30", "1080p60", "720p30-rtmp"):
        a, f = median(f"cpu/{stream}/liveplay"), median(f"cpu/{stream}/ffmpeg")
        rows.append((f"live decode CPU ≤ 0.95 × ffmpeg ({stream})", a / f if a and f else None, lambda v: v <= 0.95,
                     "{:.3f} ×"))
        r, rf = median(f"rss/{stream}/liveplay-kB"), median(f"rss/{stream}/ffmpeg-kB")
        rows.append((f"peak RSS ≤ 0.85 × ffmpeg ({stream})", r / rf if r and rf else None, lambda v: v <= 0.85,
                     "{:.2f} ×"))
    for stream in ("http-flv", "rtmp"):
        rows.append((f"allocations, liveplay's own path ≤ 10 a second after 5 s ({stream}, libavcodec's excluded)",
                     median(f"allocations/{stream}/liveplay/liveplay"), lambda v: v <= 10, "{:.0f} / s"))
    probe = median("cpu/720p30/liveplay-probe", 100)
    rows.append(("probe ≤ 1 % of a core per 2 Mbit/s stream (one liveplay process)", probe, lambda v: v <= 1,
                 "{:.2f} %"))
    probe_rows = [r for r in scale.get("probe", []) if r.get("passed")] if scale else []
    if probe_rows:
        rows.append((f"probe ≤ 1 % of a core per stream ({probe_rows[-1]['players']} in one process)",
                     probe_rows[-1].get("cpuPercentPerStream"), lambda v: v <= 1, "{:.2f} %"))
    rss = median("rss/720p30/liveplay-kB", 1 / 1024)
    rows.append(("RSS, one 720p30 player ≤ 40 MB + buffered media (≤ 5 s × 2.1 Mbit/s ≈ 1.3 MB)", rss,
                 lambda v: v <= 41.3, "{:.1f} MB"))
    base, fifty = median("rssmulti/probe/1", 1 / 1024), median("rssmulti/probe/50", 1 / 1024)
    rows.append(("RSS, each extra stream ≤ 4 MB (probe, 1 → 50)", (fifty - base) / 49 if base and fifty else None,
                 lambda v: v <= 4, "{:.2f} MB"))
    dbase, deight = median("rssmulti/decode/1", 1 / 1024), median("rssmulti/decode/8", 1 / 1024)
    rows.append(("RSS, each extra stream ≤ 4 MB (decoding, 1 → 8, peak)", (deight - dbase) / 7 if dbase and deight
                 else None, lambda v: v <= 4, "{:.2f} MB"))
    for mode, goal in (("probe", 200), ("decode", 8)):
        tried = [r.get("players") for r in (scale or {}).get(mode, [])]
        for criterion, label in (("passed", "every status"), ("passedAfterWarmup", "after the first 3 s")):
            passing = [r["players"] for r in (scale or {}).get(mode, []) if r.get(criterion)]
            value = max(passing) if passing else (0 if tried else None)
            rows.append((f"scale ≥ {goal} {'probe' if mode == 'probe' else 'decoded 720p30'} streams, {label} on "
                         f"time (steps {tried})", value, lambda v, g=goal: v >= g, "{}"))
    if monitor_rows:
        passing = [r for r in monitor_rows if r.get("passed")]
        most = passing[-1] if passing else None
        at_thousand = next((r for r in monitor_rows if r["streams"] == 1000), None)
        rows.append((f"monitor: 1,000 probe streams in one process, all playing, no stall (steps "
                     f"{[r['streams'] for r in monitor_rows]})", most["streams"] if most else 0,
                     lambda v: v >= 1000, "{}"))
        rows.append(("monitor: memory ≤ 2 MB per probe stream (at the most streams passed)",
                     most["MiBPerStream"] * 1.048576 if most else None, lambda v: v <= 2, "{:.2f} MB"))
        rows.append(("monitor: /metrics at 1,000 streams ≤ 100 ms (slowest scrape)",
                     at_thousand.get("scrapeMaxMs") if at_thousand else None, lambda v: v <= 100, "{} ms"))
    for name, value, test, fmt in rows:
        out(f"| {name} | {fmt.format(value) if value is not None else 'not measured'} | "
            f"{verdict(test(value) if value is not None else None)} |")
    out("")
    if any(k.startswith("window/") for k in samples):
        out(f"### A window with sound: 720p30 from the lab, {WINDOW_SECONDS:.0f} s under Xvfb — lower is better")
        out("")
        out("| player | CPU, share of a core | peak RSS, MiB | CPU / ffplay's |")
        out("|---|---|---|---|")
        _, reference = cell("window/ffplay")
        for name in ("liveplay", "liveplay-bar", "ffplay", "mpv"):
            text, median = cell(f"window/{name}", 1.0, 3)
            memory, _ = cell(f"window/{name}-kB", 1 / 1024, 1)
            ratio = f"{median / reference:.2f}" if median and reference else "—"
            out(f"| {name} | {text} | {memory} | {ratio} |")
        _, plain = cell("window/liveplay")
        _, bar = cell("window/liveplay-bar")
        if plain and bar:
            out("")
            out(f"The control bar kept shown (`liveplay-bar`: the pointer moved every second) costs "
                f"{(bar / plain - 1) * 100:+.1f} % of liveplay's CPU without it (target: at most +5 %).")
        out("")
    if any(k.startswith("zap/") for k in samples):
        out(f"### Channel zapping among 5 live 720p30 streams of the lab (GOP cache), {ZAP_SWITCHES} switches each, "
            "from the switch to the new stream's first picture, ms — lower is better")
        out("")
        out("| player | how it switches | median | p95 | max | target |")
        out("|---|---|---|---|---|---|")
        rows = [("liveplay-preloaded", "`switch(to:from:)` from a `PreloadPool` (the next and the previous ready), "
                 "in process", 33), ("liveplay-cold", "`switch(to:)` without a pool: connect, first keyframe, decode, "
                 "in process", 25), ("mpv", "`playlist-next` over JSON IPC, `--profile=low-latency`, to "
                 "`playback-restart`", None), ("ffplay", "started afresh on the next stream, to its first `showinfo` "
                 "frame", None)]
        for name, how, target in rows:
            values = sorted(v * 1000 for v in samples.get(f"zap/{name}", []))
            if not values:
                out(f"| {name} | {how} | — | — | — | — |")
                continue
            p95 = values[min(len(values) - 1, int(len(values) * 0.95 + 0.999) - 1)]
            met = "" if target is None else f"≤ {target} p95: {verdict(p95 <= target)}"
            out(f"| {name} | {how} | {statistics.median(values):.1f} | {p95:.1f} | {values[-1]:.1f} | {met} |")
        out("")
        cost, median = cell("zap/preload-bytes-per-second", 1 / 1000, 1)
        if median is not None:  # a stream must wait a whole second after its first GOP to be counted
            out(f"A stream waiting in the pool (`newestGroup`, which reads all of it) received {cost} kB/s after its "
                "first GOP (median, range); the 720p30 stream is 2 Mbit/s, 250 kB/s.")
            out("")
    if any(k.startswith("sessions/") for k in samples):
        out(f"### {SESSIONS} playbacks one after another in one process (`liveplay-bench sessions`, 720p30), peak RSS")
        out("")
        out("| glibc arenas | after 10, MiB | after all, MiB | growth | target |")
        out("|---|---|---|---|---|")
        for name, label in (("sessions", "default (8 per core)"), ("sessions-arena1", "`MALLOC_ARENA_MAX=1`")):
            first, _ = cell(f"{name}/checkpoint-kB", 1 / 1024, 1)
            last, _ = cell(f"{name}/end-kB", 1 / 1024, 1)
            growth, median = cell(f"{name}/growth", 1.0, 3)
            out(f"| {label} | {first} | {last} | {growth} | ≤ 1.10: {verdict(median is not None and median <= 1.10)} |")
        out("")
    if series:
        out("### Latency through a 3 s stall (at 5–8 s of the connection), end to end, s — lower is better")
        out("")
        out("| player | before the stall | highest after it | after its end, back to ≤ 1.2 s for good | at the end |")
        out("|---|---|---|---|---|")
        for name, row in stall_rows(series):
            out(f"| {name} | " + " | ".join(row) + " |")
        out("")
    if any(key.startswith("abr/") for key in samples):
        out("### A bandwidth step (4 → 0.9 Mbit/s from 15 s to 35 s → 4), a LAS manifest of 2.5, 1.2 and 0.5 Mbit/s "
            "renditions, 60 s")
        out("")
        out("| liveplay | stalls | seconds stalled | longest stall, ms | switches | first down after the cap, s "
            "| first up after it, s | pictures shown |")
        out("|---|---|---|---|---|---|---|---|")
        for name, label in (("adaptive", "adapting"), ("top-only", "the top rendition only (`--rendition 3`)")):
            figures = [cell(f"abr/{name}/{key}", 1.0, digits)[0] for key, digits in (
                ("stalls", 0), ("stalled-s", 1), ("longest-stall-ms", 0), ("switches", 0), ("down-s", 1),
                ("up-s", 1), ("frames", 0))]
            out(f"| {label} | " + " | ".join(figures) + " |")
        out("")
    if notes:
        out("Notes from this run: " + "; ".join(dict.fromkeys(notes)) + ".")
        out("")
    return "\n".join(lines)


def stall_rows(series, stall_end=8.0, bound=1.2):
    """Per player: median latency 2–5 s, the highest after the stall's end, how long after it the latency got to
    at most `bound` and stayed there, and the last value."""
    rows = []
    for name, points in series.items():
        values = [(p[0], p[1] / 1000) for p in points if p[1] is not None]
        before = sorted(v for t, v in values if 2 <= t < 5)
        after = [(t, v) for t, v in values if t >= stall_end]
        if not before or not after:
            rows.append((name, ["—"] * 4))
            continue
        back = None
        for index, (t, v) in enumerate(after):
            if all(w <= bound for _, w in after[index:]):
                back = t - stall_end
                break
        rows.append((name, [f"{before[len(before) // 2]:.2f}", f"{max(v for _, v in after):.2f}",
                            "never" if back is None else f"{back:.1f} s", f"{after[-1][1]:.2f}"]))
    return rows


def main():
    scale, series = {}, {}
    if env.get("REPORT_ONLY") == "1":
        # Re-renders the tables from the last run's live.json, measuring nothing.
        with open(f"{WORK}/live.json") as handle:
            saved = json.load(handle)
        samples.update(saved["samples"])
        notes.extend(saved["notes"])
        markdown = report(saved["scale"], saved["stallSeries"], saved.get("monitor")) + latency_report()
        with open(f"{WORK}/live.md", "w") as handle:
            handle.write(markdown + "\n")
        print(markdown)
        return
    if "firstframe" in SECTIONS:
        measure_first_frame("lab", LAB, rtmp=False)
        if RTMP:
            measure_first_frame("rtmp", RTMP, rtmp=True)
        else:
            notes.append("nginx-rtmp rows skipped: nginx-rtmp did not start")
    if "cpu" in SECTIONS:
        measure_cpu()
    if "allocations" in SECTIONS:
        measure_allocations()
    if "rss" in SECTIONS:
        measure_rss()
    if "scale" in SECTIONS:
        scale = measure_scale()
    if "window" in SECTIONS:
        measure_window()
    if "zap" in SECTIONS:
        measure_zap()
    if "sessions" in SECTIONS:
        measure_sessions()
    if "abr" in SECTIONS:
        measure_abr()
    if "latency" in SECTIONS:
        measure_latency()
    if "record" in SECTIONS:
        measure_record()
    if "download" in SECTIONS:
        measure_download()
    monitor_rows = measure_monitor() if "monitor" in SECTIONS else []
    if "plot" in SECTIONS:
        try:
            series = measure_plot()
            plot(series, f"{OUT}/latency-stall.png")
        except Exception as error:  # the tables are still worth writing
            notes.append(f"stall plot failed: {error!r}")
    markdown = report(scale, series, monitor_rows) + latency_report()
    summary = {key: stats(values) for key, values in samples.items()}
    with open(f"{WORK}/live.json", "w") as handle:
        json.dump({"samples": samples, "summary": summary, "scale": scale, "stallSeries": series, "notes": notes,
                   "monitor": monitor_rows, "latencyPositions": positions,
                   "settings": {"quick": QUICK, "firstFrameRuns": FIRST_FRAME_RUNS, "liveSeconds": LIVE_SECONDS,
                                "liveRounds": LIVE_ROUNDS, "rssSeconds": RSS_SECONDS, "scaleSeconds": SCALE_SECONDS,
                                "plotSeconds": PLOT_SECONDS}}, handle, indent=1)
    with open(f"{WORK}/live.md", "w") as handle:
        handle.write(markdown + "\n")


if __name__ == "__main__":
    main()
