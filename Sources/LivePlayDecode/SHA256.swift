import CFFmpeg

/// SHA-256 by libavutil (`av_sha`), which every build already links for decoding: the one hash liveplay needs
/// (the media cache names its files by it, docs/cache.md), without a second copy of BoringSSL in the build.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func digest(_ bytes: some Collection<UInt8>) -> [UInt8] {
        guard let context = av_sha_alloc() else { fatalError("libavutil could not allocate \(av_sha_size) bytes") }
        defer { av_free(UnsafeMutableRawPointer(context)) }
        av_sha_init(context, 256)
        let hashed = bytes.withContiguousStorageIfAvailable { buffer in
            update(context, buffer)
            return true
        }
        if hashed == nil { Array(bytes).withUnsafeBufferPointer { update(context, $0) } }
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { av_sha_final(context, $0.baseAddress) }
        return digest
    }

    /// The digest of `bytes` in lower-case hex (64 characters), as `sha256sum` prints it.
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in digest(bytes) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func update(_ context: OpaquePointer, _ buffer: UnsafeBufferPointer<UInt8>) {
        // av_sha_update takes a size_t length since libavutil 59; the pointer may be null for an empty input.
        av_sha_update(context, buffer.baseAddress, buffer.count)
    }
}
