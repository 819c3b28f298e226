import ArgumentParser
import LivePlay
import LivePlayManifest
import Logging

/// `--log-level` choices, swift-log's levels (ffmpeg's `-loglevel`, mpv's `--msg-level`).
enum LogLevelOption: String, CaseIterable, ExpressibleByArgument, Comparable {
    case trace, debug, info, warning, error

    /// The same level for libavcodec's messages (the cases are in the same order).
    var codecLevel: CodecLog.Level {
        CodecLog.Level(rawValue: Self.allCases.firstIndex(of: self)!)!
    }

    var swiftLogLevel: Logger.Level {
        switch self {
        case .trace: .trace
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
    }

    /// Whether an event of `code` is logged at this level: errors always; warnings from `warning` down;
    /// the rest (and the session summary, at every level but `error`) from `info` down.
    func logs(_ code: PlayEventCode) -> Bool {
        if code.isError { return true }
        if code.isWarning { return self <= .warning }
        if code == .sessionSummary { return self <= .warning }
        return self <= .info
    }

    static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// `--sei 5,242`: SEI payload types, 0…1023 (the ones H.264 and HEVC define and the ones CDNs use fit well within).
struct SEIPayloadTypes: ExpressibleByArgument {
    var types: [Int]

    init?(argument: String) {
        let types = argument.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !types.isEmpty, types.allSatisfy({ $0.map((0...1023).contains) == true }) else { return nil }
        self.types = types.compactMap { $0 }
    }
}

/// `--timeshift 30m`: a duration as seconds, or with a unit (`s`, `m`, `h`); 10 s to 24 h.
struct TimeShiftWindow: ExpressibleByArgument {
    var duration: Duration

    init?(argument: String) {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        let unit = text.last.flatMap { units[$0] }
        guard let number = Double(unit == nil ? text : String(text.dropLast())), number.isFinite else { return nil }
        let seconds = number * (unit ?? 1)
        guard seconds > 0 else { return nil }
        duration = .seconds(seconds)
    }

    /// 10 s to 24 h (checked in ``validate(playing:)``, so the message can say so).
    static let range: ClosedRange<Double> = 10...86_400

    /// The window's range, and live streams only: a file can be sought as it is.
    func validate(playing urls: [String]) throws {
        guard Self.range.contains(duration.seconds) else {
            throw ValidationError(
                "--timeshift keeps 10 s to 24 h (e.g. 90s, 30m, 1h), got \(Int(duration.seconds.rounded())) s")
        }
        if urls.contains(where: { $0 != "demo" && (try? StreamAddress(parsing: $0))?.isLocalFile == true }) {
            throw ValidationError("--timeshift is for live streams: a file can be sought as it is (--start, ← / →)")
        }
    }
}

/// `--captions`: the CEA-608 channel decoded, or none.
enum CaptionOption: String, CaseIterable, ExpressibleByArgument {
    case cc1
    case cc2
    case cc3
    case cc4
    case off

    init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }

    var channel: CaptionChannel? {
        switch self {
        case .cc1: .cc1
        case .cc2: .cc2
        case .cc3: .cc3
        case .cc4: .cc4
        case .off: nil
        }
    }
}

/// Checks a number of seconds given as an option: finite, positive (or zero), and at most a year, so no
/// conversion to a `Duration` can trap on what a person typed (`nan`, `inf`, `1e300`).
enum Seconds {
    static let maximum: Double = 366 * 86_400

    static func check(_ value: Double, _ name: String, allowsZero: Bool = false) throws {
        guard value.isFinite, allowsZero ? value >= 0 : value > 0 else {
            throw ValidationError("\(name) must be \(allowsZero ? "zero or more" : "positive"), got \(value)")
        }
        guard value <= maximum else { throw ValidationError("\(name) must be at most a year (\(Int(maximum)) s)") }
    }
}

/// `--mode` choices.
enum LatencyModeOption: String, CaseIterable, ExpressibleByArgument {
    case auto
    case speed
    case smooth

    var mode: LatencyMode {
        switch self {
        case .auto: .auto
        case .speed: .speed
        case .smooth: .smooth
        }
    }
}

/// Where the stream comes from besides its URL, and what decodes it: `--backup`, a LAS manifest's `--rendition` and
/// `--max-bitrate`, `--hwdec`.
struct SourceOptions: ParsableArguments {
    @Option(help: HardwareDecodingOption.help)
    var hwdec: HardwareDecodingOption = .no

    @Option(name: .customLong("backup"), help: "Where the stream is too (repeatable, tried in order): when the URL's source refuses, answers with an HTTP error, ends or runs out of retries, playback goes on from the next (9021); -2301 only once every source has had its retries.")
    var backups: [String] = []

    @Option(help: "A LAS manifest's rendition to play, by its id (`liveplay inspect manifest.json` lists them).")
    var rendition: Int?

    @Option(help: ArgumentHelp("The highest bitrate a LAS manifest's rendition may have, in kbit/s.", valueName: "kbit/s"))
    var maxBitrate: Int?

    @Flag(help: "Media on demand: from the start, not from where it was left (kept in $XDG_STATE_HOME/liveplay/positions).")
    var noResume = false

    /// Backups are live network URLs, for one URL played; a rendition or a bitrate cap is for a manifest.
    func validate(urls: [String], showSecrets: Bool) throws {
        if rendition != nil || maxBitrate != nil, !urls.contains(where: LASManifest.names) {
            throw ValidationError("--rendition and --max-bitrate choose among a LAS manifest's renditions (a .json URL)")
        }
        if let maxBitrate, maxBitrate <= 0 { throw ValidationError("--max-bitrate must be above 0 kbit/s") }
        for backup in backups {
            guard (try? StreamURL.kind(of: backup)).map({ $0 != .file }) == true else {
                throw ValidationError("--backup \(showSecrets ? backup : Redaction.url(backup)): not an HTTP(S)-FLV or RTMP(S) URL")
            }
        }
        if !backups.isEmpty, urls.count > 1 { throw ValidationError("--backup goes with one URL, not with several") }
    }

    /// `bounded`: a run that `-t` or `--frames` ends (a script's, a measurement's) neither resumes nor keeps where it
    /// stopped: it plays the same every time.
    func apply(to configuration: inout LivePlayConfiguration, bounded: Bool) {
        configuration.decoder.hardware = hwdec.value
        configuration.backupURLs = backups
        configuration.rendition = rendition
        configuration.maximumBitrate = maxBitrate
        configuration.resume = noResume || bounded ? nil : ResumePositions()
    }
}

/// `--hwdec` choices: mpv's names.
enum HardwareDecodingOption: String, CaseIterable, ExpressibleByArgument {
    case auto
    case nvdec
    case vaapi
    case no

    static let help: ArgumentHelp = """
        Decode video on a GPU: auto (NVDEC, then VA-API, where the machine has one; software otherwise), nvdec, \
        vaapi, or no (software, the default). A device that cannot decode the stream falls back to software (2106).
        """

    var value: HardwareDecoding {
        switch self {
        case .auto: .auto
        case .nvdec: .nvdec
        case .vaapi: .vaapi
        case .no: .off
        }
    }
}

/// `--rtmp-enhanced`: whether an RTMP `connect` carries Enhanced RTMP v2's fields.
enum RTMPEnhancedOption: String, CaseIterable, ExpressibleByArgument {
    case auto
    case on
    case off

    var connect: RTMPEnhancedConnect {
        switch self {
        case .auto: .auto
        case .on: .on
        case .off: .off
        }
    }
}
