import Foundation
import Synchronization

/// The once-per-second status of a playing stream (`onNetStatus`): typed fields, and ``dictionary`` with
/// TXLivePlayer's `NET_STATUS_*` keys plus liveplay's own (lowercase). Delivered every second of the
/// session clock, also while loading or reconnecting (then the rates are zero and the rest holds).
public struct NetStatus: Sendable, Hashable {
    /// Milliseconds since playing started, like an event's `EVT_TIME`.
    public var elapsedMilliseconds: Int64
    /// What playback is doing: `connecting`, `loading`, `playing`, `paused`. `playing` means a picture (or, for a
    /// stream without video, sound) is being presented.
    public var state: String
    /// Why a stream whose media has arrived is not playing (`reason`): `no_decodable_video` (video arrives but no
    /// picture can be decoded from it: no sequence header, or a decoder that gives nothing), `no_decodable_audio`
    /// (the same for a stream with sound only); `nil` otherwise.
    public var reason: String?

    /// This process's CPU use, percent of one core (`NET_STATUS_CPU_USAGE`; 200 = two cores busy).
    public var processCPU: Double
    /// The machine's CPU use, percent of all cores (`NET_STATUS_CPU_USAGE_DEVICE`).
    public var machineCPU: Double
    public var videoWidth: Int
    public var videoHeight: Int
    /// Bytes received on the wire, kbit/s (`NET_STATUS_NET_SPEED`).
    public var netSpeedKbps: Int
    /// Interarrival jitter, ms (`NET_STATUS_NET_JITTER`).
    public var netJitterMilliseconds: Int
    /// Pictures shown per second (`NET_STATUS_VIDEO_FPS`).
    public var videoFPS: Double
    public var videoBitrateKbps: Int
    public var audioBitrateKbps: Int
    /// Buffered media, ms: live edge minus playback position (`NET_STATUS_CACHE_SIZE`).
    public var cacheMilliseconds: Int
    /// `ip:port` of the server that answered (`NET_STATUS_SERVER_IP`); empty before connecting.
    public var serverAddress: String

    /// Video packets waiting to be decoded (`NET_STATUS_VIDEO_CACHE`).
    public var videoCacheFrames: Int
    /// Audio waiting to be decoded, ms (`NET_STATUS_AUDIO_CACHE`).
    public var audioCacheMilliseconds: Int
    /// Decoded pictures waiting for their time (`NET_STATUS_V_DEC_CACHE_SIZE`).
    public var decodedCacheFrames: Int
    /// Both, in frames (`NET_STATUS_V_SUM_CACHE_SIZE`).
    public var videoSumCacheFrames: Int { videoCacheFrames + decodedCacheFrames }
    /// Newest audio minus newest video timestamp received, ms (`NET_STATUS_AV_RECV_INTERVAL`).
    public var avReceiveIntervalMilliseconds: Int
    /// Last sound minus last picture presented, ms (`NET_STATUS_AV_PLAY_INTERVAL`).
    public var avPlayIntervalMilliseconds: Int
    /// Keyframe interval, seconds (`NET_STATUS_VIDEO_GOP`).
    public var gopSeconds: Double
    public var audioSampleRate: Int
    public var audioChannels: Int
    public var videoCodec: String
    public var audioCodec: String

    /// Live edge minus position, ms.
    public var latencyMilliseconds: Int
    /// Shown-after-sent, ms, when the stream carries wall-clock stamps.
    public var endToEndLatencyMilliseconds: Int?
    public var target: Duration
    public var rate: Double
    public var stutters: Int
    public var stutterMilliseconds: Int
    public var droppedFrames: Int
    public var framesShown: Int
    public var reconnects: Int
    public var mode: String
    /// Media bytes received in this session so far (`received_bytes`).
    public var receivedBytes: Int64 = 0
    /// Media on demand: the position from the media's start, ms (`position_ms`); `nil` for a live stream.
    public var positionMilliseconds: Int64?
    /// Media on demand: its length from `onMetaData`, ms, 0 when unknown (`duration_ms`); `nil` for a live stream.
    public var durationMilliseconds: Int64?
    /// A multitrack stream's tracks (`tracks`, as 9016 lists them, the playing ones marked); `nil` otherwise.
    public var tracks: String?
    /// The source playing (secrets redacted) once playback moved from the URL to a backup or back (`source`).
    public var source: String?
    /// A LAS manifest's rendition playing, by id (`rendition`), and the switches between renditions so far
    /// (`rendition_switches`); `nil` and 0 for a stream played from its URL.
    public var rendition: Int?
    public var renditionSwitches = 0
    /// The video decoder: `h264 (nvdec)`, `hevc (software)`; empty before one opens (`decoder`).
    public var decoder = ""
    /// With loudness normalisation: the programme's loudness as measured, before the gain (`loudness_lufs`; `nil`
    /// before 400 ms, in silence and pauses), and the gain applied (`loudness_gain_db`).
    public var loudness: Double?
    public var loudnessGain: Double?

    /// The status as TXLivePlayer's `onNetStatus` dictionary, plus liveplay's lowercase keys.
    public var dictionary: [String: PlayEventValue] {
        var values: [String: PlayEventValue] = [
            "NET_STATUS_CPU_USAGE": .double(Self.rounded(processCPU)),
            "NET_STATUS_CPU_USAGE_DEVICE": .double(Self.rounded(machineCPU)),
            "NET_STATUS_VIDEO_WIDTH": .int(Int64(videoWidth)),
            "NET_STATUS_VIDEO_HEIGHT": .int(Int64(videoHeight)),
            "NET_STATUS_NET_SPEED": .int(Int64(netSpeedKbps)),
            "NET_STATUS_NET_JITTER": .int(Int64(netJitterMilliseconds)),
            "NET_STATUS_VIDEO_FPS": .double(videoFPS),
            "NET_STATUS_VIDEO_BITRATE": .int(Int64(videoBitrateKbps)),
            "NET_STATUS_AUDIO_BITRATE": .int(Int64(audioBitrateKbps)),
            "NET_STATUS_CACHE_SIZE": .int(Int64(cacheMilliseconds)),
            "NET_STATUS_SERVER_IP": .string(serverAddress),
            "NET_STATUS_VIDEO_CACHE": .int(Int64(videoCacheFrames)),
            "NET_STATUS_AUDIO_CACHE": .int(Int64(audioCacheMilliseconds)),
            "NET_STATUS_V_DEC_CACHE_SIZE": .int(Int64(decodedCacheFrames)),
            "NET_STATUS_V_SUM_CACHE_SIZE": .int(Int64(videoSumCacheFrames)),
            "NET_STATUS_AV_RECV_INTERVAL": .int(Int64(avReceiveIntervalMilliseconds)),
            "NET_STATUS_AV_PLAY_INTERVAL": .int(Int64(avPlayIntervalMilliseconds)),
            "NET_STATUS_VIDEO_GOP": .double(Self.rounded(gopSeconds)),
            "NET_STATUS_AUDIO_INFO": .string(audioSampleRate > 0 ? "\(audioCodec),\(audioSampleRate),\(audioChannels)" : ""),
            "state": .string(state),
            "latency_ms": .int(Int64(latencyMilliseconds)),
            "target_ms": .int(target.milliseconds),
            "rate": .double(rate),
            "stutters": .int(Int64(stutters)),
            "stutter_ms": .int(Int64(stutterMilliseconds)),
            "dropped_frames": .int(Int64(droppedFrames)),
            "frames_shown": .int(Int64(framesShown)),
            "reconnects": .int(Int64(reconnects)),
            "mode": .string(mode),
            "received_bytes": .int(receivedBytes),
            "video_codec": .string(videoCodec),
            "audio_codec": .string(audioCodec),
            "audio_sample_rate": .int(Int64(audioSampleRate)),
            "audio_channels": .int(Int64(audioChannels)),
        ]
        if let endToEndLatencyMilliseconds { values["e2e_latency_ms"] = .int(Int64(endToEndLatencyMilliseconds)) }
        if let reason { values["reason"] = .string(reason) }
        if let positionMilliseconds { values["position_ms"] = .int(positionMilliseconds) }
        if let durationMilliseconds { values["duration_ms"] = .int(durationMilliseconds) }
        if let tracks { values["tracks"] = .string(tracks) }
        if !decoder.isEmpty { values["decoder"] = .string(decoder) }
        if let source { values["source"] = .string(source) }
        if let loudness { values["loudness_lufs"] = .double(Self.rounded(loudness)) }
        if let loudnessGain { values["loudness_gain_db"] = .double(Self.rounded(loudnessGain)) }
        if let rendition {
            values["rendition"] = .int(Int64(rendition))
            values["rendition_switches"] = .int(Int64(renditionSwitches))
        }
        return values
    }

    /// Every key ``dictionary`` can hold, for documentation and schema tests.
    public static let keys: [String] = [
        "NET_STATUS_CPU_USAGE", "NET_STATUS_CPU_USAGE_DEVICE", "NET_STATUS_VIDEO_WIDTH", "NET_STATUS_VIDEO_HEIGHT",
        "NET_STATUS_NET_SPEED", "NET_STATUS_NET_JITTER", "NET_STATUS_VIDEO_FPS", "NET_STATUS_VIDEO_BITRATE",
        "NET_STATUS_AUDIO_BITRATE", "NET_STATUS_CACHE_SIZE", "NET_STATUS_SERVER_IP", "NET_STATUS_VIDEO_CACHE",
        "NET_STATUS_AUDIO_CACHE", "NET_STATUS_V_DEC_CACHE_SIZE", "NET_STATUS_V_SUM_CACHE_SIZE",
        "NET_STATUS_AV_RECV_INTERVAL", "NET_STATUS_AV_PLAY_INTERVAL", "NET_STATUS_VIDEO_GOP", "NET_STATUS_AUDIO_INFO",
        "state", "latency_ms", "e2e_latency_ms", "target_ms", "rate", "stutters", "stutter_ms", "dropped_frames",
        "frames_shown", "reconnects", "mode", "video_codec", "audio_codec", "audio_sample_rate", "audio_channels",
        "received_bytes", "reason", "position_ms", "duration_ms", "tracks", "decoder", "source",
        "rendition", "rendition_switches", "loudness_lufs", "loudness_gain_db",
    ]

    private static func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}

/// CPU use of this process and of the machine between two samples, from `/proc` (Linux).
struct CPUUsage {
    private var last: (process: Double, busy: Double, total: Double)?

    /// Percent of one core for the process, percent of all cores for the machine; zeros on the first call
    /// or where `/proc` cannot be read.
    mutating func sample() -> (process: Double, machine: Double) {
        guard let now = Self.read() else { return (0, 0) }
        defer { last = now }
        guard let last, now.total > last.total else { return (0, 0) }
        let total = now.total - last.total
        let cores = Double(max(1, ProcessInfo.processInfo.activeProcessorCount))
        // /proc/stat's total covers every core: one core's worth of ticks is total / cores.
        let process = (now.process - last.process) / (total / cores) * 100
        let machine = (now.busy - last.busy) / total * 100
        return (max(0, process), min(100, max(0, machine)))
    }

    /// The last reading and when it was made: process-wide, so a thousand sessions sampling once a second
    /// read `/proc` a few times a second between them, not a thousand.
    private static let recent = Mutex<(reading: (process: Double, busy: Double, total: Double), at: ContinuousClock.Instant)?>(nil)
    private static let reuseFor = Duration.milliseconds(250)

    private static func read() -> (process: Double, busy: Double, total: Double)? {
        let now = ContinuousClock.now
        if let cached = recent.withLock({ $0 }), now - cached.at < reuseFor { return cached.reading }
        guard let reading = readProc() else { return nil }
        recent.withLock { $0 = (reading, now) }
        return reading
    }

    private static func readProc() -> (process: Double, busy: Double, total: Double)? {
        guard let own = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let all = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let close = own.lastIndex(of: ")")
        else { return nil }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = own[own.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        guard let line = all.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 5 else { return nil }
        let total = ticks.reduce(0, +)
        let idle = ticks[3] + ticks[4]
        return (user + system, total - idle, total)
    }
}
