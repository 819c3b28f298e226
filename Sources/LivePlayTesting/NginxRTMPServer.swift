import Foundation

/// Debian's nginx with libnginx-mod-rtmp on a free loopback port, configured in a temporary directory:
/// `daemon off; master_process off;`, its pid file and error log in that directory, and one application,
/// `live` with `live on`. Stopped by ``stop()`` or when released. With `staticFiles`, it serves that
/// directory over HTTP instead (`http://127.0.0.1:PORT/NAME`, with `Content-Length` and `Range`, as a
/// CDN serves a file).
///
/// nginx-rtmp, not a Swift stand-in, so tests see what a real server sends (its chunk size 4096, its
/// StreamBegin and onStatus sequence, its end-of-stream messages).
///
/// `@unchecked Sendable`: its one mutable flag is read and written under `lock`; the rest is immutable.
public final class NginxRTMPServer: @unchecked Sendable {
    public let port: UInt16
    /// The temporary directory with `nginx.conf`, `error.log` and `nginx.pid`.
    public let directory: String
    private let process: Process
    private let lock = NSLock()
    private var stopped = false

    /// Where Debian installs the nginx binary and the RTMP module.
    public static let nginxPath = "/usr/sbin/nginx"
    public static let modulePaths = [
        "/usr/lib/nginx/modules/ngx_rtmp_module.so", "/usr/share/nginx/modules/ngx_rtmp_module.so",
    ]

    /// Why nginx-rtmp cannot run here, or `nil` if it can.
    public static var unavailableReason: String? {
        guard FileManager.default.isExecutableFile(atPath: nginxPath) else { return "\(nginxPath) is not installed" }
        guard modulePath != nil else { return "libnginx-mod-rtmp is not installed (no ngx_rtmp_module.so)" }
        return nil
    }

    static var modulePath: String? {
        modulePaths.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Starts nginx and waits (up to `startTimeout`) until it accepts connections. `rateLimit` (bytes per second)
    /// slows each file response down, so a test can interrupt a transfer half-way.
    /// `live` is added to the `application live` block (`"wait_key off;"` to relay Enhanced RTMP video).
    public init(
        startTimeout: Duration = .seconds(10), staticFiles root: String? = nil, rateLimit: Int? = nil, live: String = ""
    ) throws {
        if let reason = Self.unavailableReason { throw LoopbackError(reason) }
        port = try LoopbackPort.free()
        directory = NSTemporaryDirectory() + "liveplay-nginx-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let rtmp = "rtmp { server { listen 127.0.0.1:\(port); chunk_size 4096; application live { live on; \(live) } } }"
        let listen = "listen 127.0.0.1:\(port);"
        let log = "log_format ranges '$status $http_range $uri $http_if_range'; access_log \(directory)/access.log ranges;"
        let rate = rateLimit.map { "limit_rate \($0);" } ?? ""
        let http = root.map { "http { \(log) types { video/x-flv flv; } server { \(listen) root \($0); \(rate) } }" }
        let configuration = """
            load_module \(Self.modulePath!);
            daemon off;
            master_process off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log info;
            events { worker_connections 64; }
            \(http ?? rtmp)

            """
        try configuration.write(toFile: "\(directory)/nginx.conf", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.nginxPath)
        process.arguments = ["-p", directory, "-c", "\(directory)/nginx.conf", "-e", "\(directory)/error.log"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcess.run(process)
        let port = port
        let process = process
        guard LoopbackPort.wait(timeout: startTimeout, until: { !process.isRunning || LoopbackPort.isAccepting(port) }),
            process.isRunning
        else {
            stop()
            throw LoopbackError("nginx did not start on port \(port): \(errorLog.suffix(2000))")
        }
    }

    deinit {
        stop()
    }

    /// `http://127.0.0.1:PORT/NAME`, a file of the `staticFiles` directory.
    public func fileURL(_ name: String) -> String {
        "http://127.0.0.1:\(port)/\(name)"
    }

    /// `rtmp://127.0.0.1:PORT/live/NAME`.
    public func url(stream name: String) -> String {
        "rtmp://127.0.0.1:\(port)/live/\(name)"
    }

    /// Serving files: one line per request, its status, `Range` header, path and `If-Range` header
    /// (`206 bytes=1234- /a.flv "5f…"`, `200 - /a.flv -`).
    public var accessLog: String {
        (try? String(contentsOfFile: "\(directory)/access.log", encoding: .utf8)) ?? ""
    }

    /// nginx's error log so far (connection and stream events at level `info`).
    public var errorLog: String {
        (try? String(contentsOfFile: "\(directory)/error.log", encoding: .utf8)) ?? ""
    }

    /// Stops nginx gracefully (SIGTERM) and removes the directory.
    public func stop() {
        terminate(signal: SIGTERM)
    }

    /// Kills nginx outright (SIGKILL): its sockets close with no RTMP goodbye, as when a server dies.
    public func kill() {
        terminate(signal: SIGKILL)
    }

    private func terminate(signal: Int32) {
        let alreadyStopped = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        ChildProcess.terminate(process, signal: signal)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
