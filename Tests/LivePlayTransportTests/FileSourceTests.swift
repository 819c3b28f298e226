import LivePlayTesting
import LivePlayTransport
import Testing

@Suite struct FileSourceTests {
    @Test func readsTheWholeFileInChunksOfTheGivenSize() throws {
        let path = try Fixture.audioOnly.path()
        let expected = try Fixtures.bytes(path)
        let source = try FileSource(path: path, chunkSize: 1000)
        var chunks: [[UInt8]] = []
        while let chunk = try source.read() { chunks.append(chunk) }
        #expect(chunks.dropLast().allSatisfy { $0.count == 1000 })
        #expect(chunks.flatMap { $0 } == expected)
        #expect(try source.read() == nil)
    }

    @Test func missingFilesAndDirectoriesAreClearErrors() {
        #expect(throws: TransportError(.notFound, "no such file: /nonexistent.flv")) {
            try FileSource(path: "/nonexistent.flv")
        }
        #expect { try FileSource(path: "/tmp") } throws: { ($0 as? TransportError)?.code == .openFailed }
    }
}
