import Foundation
import LivePlay
import LivePlayTesting
import Testing

/// HTTPS-FLV against `openssl s_server -WWW` with a self-signed certificate made here.
@Suite struct HTTPSSessionTests {
    final class TLSServer {
        let port: Int
        private let process: Process

        init(directory: String) throws {
            let port = try LoopbackPort.free()
            self.port = Int(port)
            try ExternalTool.check(
                "openssl",
                ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "\(directory)/key.pem", "-out",
                    "\(directory)/cert.pem"])
            process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(ExternalTool.find("openssl")))
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.arguments = [
                "s_server", "-quiet", "-accept", "127.0.0.1:\(port)", "-cert", "cert.pem", "-key", "key.pem", "-WWW",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        deinit {
            // Foundation's waitUntilExit spins a run loop; a plain kill is enough for a test server.
            kill(process.processIdentifier, SIGKILL)
        }
    }

    static func serve() throws -> TLSServer {
        let directory = Fixtures.directory + "/tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Fixture.h264AAC.path(), toPath: directory + "/stream.flv")
        return try TLSServer(directory: directory)
    }

    static func configuration(insecure: Bool) -> LivePlayConfiguration {
        LivePlayConfiguration(
            connectRetryCount: 20, connectRetryInterval: .milliseconds(100),
            transport: TransportOptions(connectTimeout: .seconds(2), allowsInsecureTLS: insecure))
    }

    @Test func aSelfSignedCertificateIsRejectedUnlessAllowed() async throws {
        let server = try Self.serve()
        let url = "https://127.0.0.1:\(server.port)/stream.flv"
        // Allowed: it plays (retries cover the moment before s_server listens).
        let allowed = await SessionRecording.record(url, configuration: Self.configuration(insecure: true)) {
            $0.code == .playBegin
        }
        #expect(allowed.codes.contains(2001) && allowed.codes.contains(2003) && allowed.codes.contains(2004))
        // Verified: the handshake fails on the certificate, which is a server connection failure.
        var strict = Self.configuration(insecure: false)
        strict.connectRetryCount = 0
        let rejected = await SessionRecording.record(url, configuration: strict)
        #expect(rejected.codes == [3002, -2301])
        #expect(rejected.events.first?.message.contains("TLS") == true || rejected.events.first?.message.contains("certificate") == true,
            "\(rejected.events.first?.message ?? "")")
    }
}
