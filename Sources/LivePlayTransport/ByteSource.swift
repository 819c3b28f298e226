import Foundation
import LivePlayCore
public import LivePlayFLV

/// What a connection reports on its way to, and while, delivering media.
public enum TransportEvent: Sendable, Hashable {
    /// The host name resolved to `addresses` (`"ip:port"`; at once for an IP literal).
    case resolved(addresses: [String])
    /// TCP (and TLS, for HTTPS) is up to `serverAddress` (`"ip:port"`, with `[]` around IPv6). HTTP-FLV
    /// reports it with the response headers: AsyncHTTPClient connects and requests in one step.
    case connected(serverAddress: String)
    /// The protocol handshake is done: RTMP's C0–S2 exchange, or a 2xx HTTP response.
    case handshakeDone
    /// The server started the stream (RTMP `NetStream.Play.Start` or StreamBegin).
    case streamBegin
    /// What the server said of the stream, for diagnostics: an RTMP `onStatus` code, or `StreamEOF` for the
    /// user control event that ends a stream (nginx-rtmp's only word when the publisher leaves).
    case serverStatus(String)
    /// The source is finite media on demand, not a live stream: a local file, or an HTTP response with a
    /// `Content-Length` of `length` bytes. Reported once, before the first bytes.
    case onDemand(length: Int64)
    /// What an HTTP server said of the file it is sending (a response with a `Content-Length`): its length,
    /// where the body starts in it, and its validators. Reported before ``onDemand(length:)``.
    case remoteFile(RemoteFile)
    /// FLV bytes, in order; the first chunk starts with the FLV header (HTTP-FLV, files).
    case bytes([UInt8])
    /// FLV tags that arrived already framed, in order (RTMP's media messages): no FLV header, no bytes to
    /// parse again.
    case tags([FLVTag])
    /// The server asked the player to reconnect (Enhanced RTMP's `NetConnection.Connect.ReconnectRequest`), to
    /// `tcUrl` when it named one. The connection ends right after it, before the stream's next keyframe, so the
    /// next connection picks up at that keyframe: a planned move, not a loss.
    case moveRequested(tcUrl: String?)
    /// RTMP: the server rejected Enhanced RTMP's `connect` (or closed before answering it); the connection ends here
    /// and the next one, made at once and outside the retry budget, sends librtmp's plain `connect`.
    case enhancedConnectRefused

    /// One of the steps of connecting: resolved, connected, handshake done, the stream begun.
    public var isConnectionStep: Bool {
        switch self {
        case .resolved, .connected, .handshakeDone, .streamBegin: true
        default: false
        }
    }

    /// The media this event carries, counted as an FLV byte stream would carry it (so HTTP-FLV and RTMP
    /// report received bytes alike); 0 for the others.
    public var mediaByteCount: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .tags(let tags): tags.reduce(0) { $0 + $1.framedSize }
        default: 0
        }
    }
}

/// One connection attempt of a ``ByteSource``: pull-based, so bytes have backpressure.
///
/// Nothing happens until the first ``next()``. It returns `nil` only when the stream *finished by
/// design* (an HTTP body with a Content-Length fully read; RTMP Play.Stop, Play.Complete or
/// UnpublishNotify). Every other end — the server closing a live stream, a socket error, silence — is
/// thrown as a ``TransportError``, so the caller can take the reconnect path. Cancelling the calling
/// task interrupts a pending ``next()``; ``close()`` releases the connection and is idempotent.
public protocol ByteConnection: AnyObject {
    func next() async throws(TransportError) -> TransportEvent?
    func close() async
}

/// A place FLV bytes come from: a URL of some transport, or a file.
public protocol ByteSource: Sendable {
    /// A new, not yet started, connection attempt.
    func makeConnection() -> any ByteConnection

    /// A connection that starts `offset` bytes into the media (HTTP `Range`, a file seek), at a tag that a
    /// file's keyframe index points to. Its bytes start with an FLV header of their own, so the demuxer
    /// reads on from that tag; a server that ignores the range sends the whole file, which reads as usual.
    /// `nil` when the source cannot start anywhere but at its beginning (a live stream).
    func makeConnection(startingAt offset: Int64) -> (any ByteConnection)?

    /// The same stream from the application at `tcUrl` (a server's reconnect request); nil when the source
    /// cannot move (then the move reconnects to where it was).
    func moved(toTcUrl tcUrl: String) -> (any ByteSource)?

    /// The source the connections after the first use, when they differ: an HTTP-FLV request that asked a LAS server
    /// for a start point (``LASStart``) asks a reconnect without one. nil: the same.
    var reconnecting: (any ByteSource)? { get }
}

extension ByteSource {
    public func makeConnection(startingAt offset: Int64) -> (any ByteConnection)? { nil }
    public func moved(toTcUrl tcUrl: String) -> (any ByteSource)? { nil }
    public var reconnecting: (any ByteSource)? { nil }
}

/// A file an HTTP server sends, as its response head describes it (RFC 9110 §8.8, §14.4): enough for a cache to
/// continue it with `Range` later and to notice that it changed in between (`If-Range`).
public struct RemoteFile: Sendable, Hashable {
    /// The whole file's length in bytes.
    public var length: Int64
    /// The byte of the file the body starts at: the offset asked for when the server honoured `Range` (206),
    /// 0 when it sent the whole file (no range asked, `Range` ignored, or `If-Range` failed: the file changed).
    public var bodyStart: Int64
    /// `ETag`, as the server sent it (quotes and `W/` included).
    public var entityTag: String?
    /// `Last-Modified`, as the server sent it.
    public var lastModified: String?

    public init(length: Int64, bodyStart: Int64 = 0, entityTag: String? = nil, lastModified: String? = nil) {
        self.length = length
        self.bodyStart = bodyStart
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// What to send as `If-Range` to continue this file: a strong `ETag`, else `Last-Modified` (RFC 9110
    /// §13.1.5: a weak tag cannot validate a range); `nil` when the server gave neither, and the file cannot
    /// be continued safely.
    public var validator: String? {
        if let entityTag, !entityTag.hasPrefix("W/") { return entityTag }
        return lastModified
    }
}

/// The FLV header and first PreviousTagSize a connection that starts mid-file puts before its bytes (audio
/// and video flagged, as the sequence headers already seen say what there is).
let resumedStreamHeader: [UInt8] = [0x46, 0x4C, 0x56, 0x01, 0x05, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00]

/// Whether an RTMP `connect` carries Enhanced RTMP v2's fields (`fourCcList`, the FourCC info maps, `capsEx`).
public enum RTMPEnhancedConnect: String, Sendable, Hashable, CaseIterable {
    /// Enhanced first; a server that rejects it, or closes before answering it, gets librtmp's plain `connect` at
    /// once, and keeps getting it for the rest of the session (a legacy server whose AMF0 reader does not know
    /// nested objects rejects the enhanced one: rtmplite's "Missing app path").
    case auto
    /// Always enhanced: a server that rejects it is a failed connection.
    case on
    /// Always librtmp's plain `connect` (no HEVC / AV1 / multitrack negotiation).
    case off
}

/// Settings every network transport honours.
public struct TransportOptions: Sendable, Hashable {
    /// Deadline for resolving the host name.
    public var resolveTimeout: Duration
    /// Deadline for the TCP (and TLS) connection.
    public var connectTimeout: Duration
    /// Deadline for the protocol handshake up to the first media (RTMP handshake, connect, play; HTTP headers).
    public var handshakeTimeout: Duration
    /// A connection that delivers no bytes this long (TCP open, server silent) counts as lost.
    public var noDataTimeout: Duration
    /// Media seconds per wall second below which, sustained over ``goodputWindow``, the link counts as lost.
    public var minimumGoodput: Double
    public var goodputWindow: Duration
    /// Request headers (HTTP-FLV), in order: Referer, User-Agent, Cookie and whatever a CDN demands.
    public var headers: [HTTPHeaderField]
    /// Accept self-signed or otherwise unverifiable TLS certificates (testing only).
    public var allowsInsecureTLS: Bool
    /// RTMP buffer length announced to the server.
    public var rtmpBufferLength: Duration
    /// HTTP-FLV: after each read of the socket, wait this long before the next, so a read takes whatever arrived
    /// meanwhile in one piece (SRS's "merged read"): far fewer reads and wake-ups per stream for a process that
    /// watches hundreds, arrival times coarser by as much. Zero (the default): read as soon as bytes arrive.
    public var readInterval: Duration
    /// RTMP: whether `connect` carries Enhanced RTMP v2's fields (``RTMPEnhancedConnect``).
    public var rtmpEnhanced: RTMPEnhancedConnect = .auto

    public init(
        resolveTimeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(5),
        handshakeTimeout: Duration = .seconds(10), noDataTimeout: Duration = .seconds(5),
        minimumGoodput: Double = 0.1, goodputWindow: Duration = .seconds(10), headers: [HTTPHeaderField] = [],
        allowsInsecureTLS: Bool = false, rtmpBufferLength: Duration = .milliseconds(1000), readInterval: Duration = .zero
    ) {
        self.resolveTimeout = resolveTimeout
        self.connectTimeout = connectTimeout
        self.handshakeTimeout = handshakeTimeout
        self.noDataTimeout = noDataTimeout
        self.minimumGoodput = minimumGoodput
        self.goodputWindow = goodputWindow
        self.headers = headers
        self.allowsInsecureTLS = allowsInsecureTLS
        self.rtmpBufferLength = rtmpBufferLength
        self.readInterval = readInterval
    }
}

/// One request header.
public struct HTTPHeaderField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `"Name: value"`, as `--header` takes it.
    public init?(parsing line: String) {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        self.name = name
        self.value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
}

/// Chooses the transport a URL names.
public enum StreamURL {
    public enum Kind: String, Sendable, CaseIterable {
        case httpFLV = "http-flv"
        case rtmp
        case file
    }

    /// `http(s)://…` is HTTP-FLV, `rtmp(s)://…` RTMP, a path or `file://` a local file. Every field is checked
    /// first (``StreamAddress``): a malformed URL is ``TransportError/Code/invalidURL``, never a trap later.
    public static func kind(of url: String) throws(TransportError) -> Kind {
        let address: StreamAddress
        do {
            address = try StreamAddress(parsing: url)
        } catch {
            throw TransportError(.invalidURL, error.message)
        }
        switch address.scheme {
        case .http, .https: return .httpFLV
        case .rtmp, .rtmps: return .rtmp
        case .file: return .file
        }
    }
}
