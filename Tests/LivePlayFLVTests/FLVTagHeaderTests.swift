import LivePlayFLV
import Testing

/// The one reader of FLV tag headers (§E.4.1), shared by the demuxer, the ring's framer, the thumbnail index and the
/// demo server's splitter.
@Suite struct FLVTagHeaderTests {
    @Test func readsTypeSizeTheExtendedTimestampAndTheStreamID() throws {
        // A video tag of 0x010203 bytes at 0x7F_ABCDEF ms (the extension byte is the high 8 bits), stream id 0.
        let bytes: [UInt8] = [0xEE, 0x09, 0x01, 0x02, 0x03, 0xAB, 0xCD, 0xEF, 0x7F, 0, 0, 0, 0xEE]
        let header = try #require(FLVTagHeader(bytes, at: 1))
        #expect(header.type == .video && header.dataSize == 0x01_0203 && header.timestamp == 0x7FAB_CDEF)
        #expect(header.isPlausible(maximumTagSize: 1 << 20, strict: true))
        #expect(!header.isPlausible(maximumTagSize: 0x01_0202), "over the bound on a tag's size")
        #expect(FLVTagHeader(bytes, at: 3) == nil, "fewer than 11 bytes")
    }

    @Test func theFilterBitAnUnknownTypeAndAStreamIDAreNotPlausible() throws {
        var bytes: [UInt8] = [0x28, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]
        #expect(try #require(FLVTagHeader(bytes, at: 0)).type == nil, "an encrypted audio tag")
        bytes[0] = 0x07
        #expect(try #require(FLVTagHeader(bytes, at: 0)).isPlausible(maximumTagSize: 1 << 20) == false)
        bytes[0] = 0x12
        bytes[10] = 1
        let script = try #require(FLVTagHeader(bytes, at: 0))
        #expect(script.isPlausible(maximumTagSize: 1 << 20) && !script.isPlausible(maximumTagSize: 1 << 20, strict: true))
    }
}
