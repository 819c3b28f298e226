import LivePlayTransport
import Testing

/// LAS's `startPts` on a request's URL: put first, replaced, removed for a reconnect, other parameters kept.
@Suite struct LASStartTests {
    @Test func theStartGoesFirstAndComesOffAgain() {
        #expect(LASStart.url("http://h/live/a.flv", startingAt: 1200) == "http://h/live/a.flv?startPts=1200")
        let token = "http://h/a.flv?token=x&startPts=5&b=1"
        #expect(LASStart.url(token, startingAt: -800) == "http://h/a.flv?startPts=-800&token=x&b=1")
        #expect(LASStart.startPts(in: token) == 5)
        #expect(LASStart.startPts(in: "http://h/a.flv?xstartPts=5") == nil)
        #expect(LASStart.removed(from: token) == "http://h/a.flv?token=x&b=1")
        #expect(LASStart.removed(from: "http://h/a.flv?startPts=5") == "http://h/a.flv")
    }

    @Test func aReconnectAsksForTheLiveEdge() async throws {
        let urls = try await HTTPConnectionPool.withPool(options: TransportOptions(), logger: .init(label: "test")) {
            pool in
            let asked = HTTPFLVSource(
                url: "http://127.0.0.1:1/a.flv?startPts=400&k=v", options: TransportOptions(), pool: pool,
                logger: .init(label: "test"))
            let plain = asked.reconnecting as? HTTPFLVSource
            return (plain?.url, plain?.reconnecting == nil)
        }
        #expect(urls.0 == "http://127.0.0.1:1/a.flv?k=v")
        #expect(urls.1)
    }
}
