import Foundation
import LivePlayLab
import Logging

/// The built-in demo: the stream lab's live server, in this process on a free loopback port, looping the
/// sample the package ships (`Resources/demo.flv`) with its GOP cache and wall-clock stamps.
struct DemoStream {
    let url: String
    private let server: LiveFLVServer

    static func start() async throws -> DemoStream {
        guard let path = Bundle.module.path(forResource: "demo", ofType: "flv") else {
            throw LabError(.invalidState, "the demo stream is missing from the liveplay bundle")
        }
        var logger = Logger(label: "liveplay.demo")
        logger.logLevel = .error
        let server = try LiveFLVServer(
            path: path, configuration: LiveFLVServer.Configuration(port: 0, threads: 1), logger: logger)
        let port = try await server.start()
        return DemoStream(url: "http://127.0.0.1:\(port)/live.flv", server: server)
    }

    func stop() async {
        await server.stop()
    }
}
