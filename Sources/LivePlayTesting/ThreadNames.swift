import Foundation

/// The OS names of threads (what `top -H` and crash dumps show), read from `/proc`.
public enum ThreadNames {
    /// The calling thread's name.
    public static func current() -> String {
        read("/proc/thread-self/comm")
    }

    /// The names of every thread of this process.
    public static func inProcess() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.map { read("/proc/self/task/\($0)/comm") }.filter { !$0.isEmpty }
    }

    private static func read(_ path: String) -> String {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
