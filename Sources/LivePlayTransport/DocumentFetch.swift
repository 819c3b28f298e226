import AsyncHTTPClient
import Foundation
import LivePlayCore
import NIOCore

/// A small document that names streams (a LAS manifest), read whole from a file or over HTTP(S), and never more
/// than `limit` bytes of it: a body past the limit comes back as `limit + 1` bytes, for the reader to refuse.
/// One request, no retries, head and body within the handshake and no-data timeouts together; the transport's own
/// TLS and header options apply.
public enum DocumentFetch {
    public static func read(_ url: String, limit: Int, options: TransportOptions) async throws(TransportError) -> [UInt8] {
        let address: StreamAddress
        do {
            address = try StreamAddress(parsing: url)
        } catch {
            throw TransportError(.invalidURL, error.message)
        }
        guard address.scheme == .http || address.scheme == .https else { return try readFile(address.path, limit: limit) }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPConnectionPool.configuration(options))
        // The deadline holds for the whole body too: AsyncHTTPClient's own covers the head only, and the transport
        // turns its read timeout off (``HTTPConnectionPool``), so a body that trickles or stalls is cut here.
        let timeout = options.handshakeTimeout + options.noDataTimeout
        let result = await withTaskGroup(of: Result<[UInt8], TransportError>?.self) { group in
            group.addTask {
                do throws(TransportError) {
                    return .success(try await read(url, at: address, limit: limit, with: client, options: options))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        try? await client.shutdown()
        guard let result else {
            throw TransportError(.noData, "\(address.hostAndPort) did not send the whole body in \(timeout.seconds) s")
        }
        return try result.get()
    }

    private static func read(
        _ url: String, at address: StreamAddress, limit: Int, with client: HTTPClient, options: TransportOptions
    ) async throws(TransportError) -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        for field in options.headers { request.headers.add(name: field.name, value: field.value) }
        let timeout = options.handshakeTimeout + options.noDataTimeout
        do {
            let response = try await client.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
            guard response.status == .ok else {
                throw TransportError(
                    .httpStatus, "\(address.hostAndPort) answered \(response.status.code) \(response.status.reasonPhrase)",
                    httpStatus: Int(response.status.code))
            }
            var body: [UInt8] = []
            for try await part in response.body {
                body += part.readableBytesView.prefix(limit + 1 - body.count)
                if body.count > limit { break }
            }
            return body
        } catch let error as TransportError {
            throw error
        } catch let error as HTTPClientError where error == .connectTimeout || error == .deadlineExceeded {
            throw TransportError(.connectFailed, "\(address.hostAndPort) did not answer in time", detail: "\(error)")
        } catch {
            throw TransportError(.connectFailed, "\(address.hostAndPort) could not be read", detail: "\(error)")
        }
    }

    private static func readFile(_ path: String, limit: Int) throws(TransportError) -> [UInt8] {
        guard let file = FileHandle(forReadingAtPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw TransportError(exists ? .openFailed : .notFound, exists ? "it cannot be opened" : "no such file")
        }
        defer { try? file.close() }
        do {
            return Array(try file.read(upToCount: limit + 1) ?? Data())
        } catch {
            throw TransportError(.readFailed, "it cannot be read", detail: "\(error)")
        }
    }
}
