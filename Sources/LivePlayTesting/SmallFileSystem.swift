import Foundation

/// A tmpfs of a few hundred KiB mounted in a temporary directory, for tests of what happens when a disk fills
/// up: the real `ENOSPC` from the kernel, not an injected error. Needs the right to mount (root, as in CI).
/// Unmounted and removed by ``unmount()`` or when released.
///
/// `@unchecked Sendable`: its one mutable flag is read and written under `lock`.
public final class SmallFileSystem: @unchecked Sendable {
    public let directory: String
    public let bytes: Int
    private let lock = NSLock()
    private var mounted = true

    /// Mounts a tmpfs of `bytes` (rounded up to pages by the kernel).
    public init(bytes: Int) throws {
        self.bytes = bytes
        directory = NSTemporaryDirectory() + "liveplay-small-fs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let output = try ExternalTool.run("mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory])
        guard output.status == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            throw LoopbackError("cannot mount a tmpfs (root is needed): \(output.standardError)")
        }
    }

    deinit {
        unmount()
    }

    public func unmount() {
        let wasMounted = lock.withLock {
            defer { mounted = false }
            return mounted
        }
        guard wasMounted else { return }
        _ = try? ExternalTool.run("umount", ["-l", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A small file system, or `nil` where mounting is not allowed: then the test is skipped, except under
    /// `CI=true` (CI runs as root), where that is a failure the caller records.
    public static func make(bytes: Int) throws -> SmallFileSystem? {
        do {
            return try SmallFileSystem(bytes: bytes)
        } catch {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw error }
            print("skipping: \(error)")
            return nil
        }
    }
}
