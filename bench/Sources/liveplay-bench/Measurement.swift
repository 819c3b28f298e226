import Foundation

/// Seconds in a `Duration`, as a `Double`.
func seconds(_ duration: Duration) -> Double {
    let components = duration.components
    return Double(components.seconds) + Double(components.attoseconds) * 1e-18
}

/// `getrusage(RUSAGE_SELF)`: this process's CPU time and peak resident size, all threads included.
func selfUsage() -> rusage {
    var usage = rusage()
    // RUSAGE_SELF cannot fail for the calling process.
    #if canImport(Glibc)
    _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    _ = getrusage(RUSAGE_SELF, &usage)
    #endif
    return usage
}

/// User and system CPU time this process has used so far (`getrusage(RUSAGE_SELF)`), all threads included.
struct ProcessorTime {
    var user: Double
    var system: Double

    var total: Double { user + system }

    static func now() -> ProcessorTime {
        let usage = selfUsage()
        return ProcessorTime(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }

    static func - (end: ProcessorTime, start: ProcessorTime) -> ProcessorTime {
        ProcessorTime(user: end.user - start.user, system: end.system - start.system)
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) * 1e-6
    }
}

/// Writes `value` as one line of JSON with sorted keys on stdout.
func printJSONLine(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}

/// Rounds for printing: benchmark figures carry no meaning past a few significant digits.
func rounded(_ value: Double, places: Int = 6) -> Double {
    let scale = pow(10, Double(places))
    return (value * scale).rounded() / scale
}

/// Resident set size now, kB (`/proc/self/statm`, second field in pages).
func residentKilobytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * sysconf(Int32(_SC_PAGESIZE)) / 1024
}

/// The process's peak resident set size, kB (`getrusage` `ru_maxrss`).
func peakResidentKilobytes() -> Int {
    selfUsage().ru_maxrss
}
