import LivePlay
import LivePlayManifest
import Testing

/// The viewer's choice of rendition as a front end steps through it (`b`, the window's rendition button): from
/// adaptation to the lowest rendition shown, up by bitrate, then adaptation again; and what the button says.
struct RenditionChoiceTests {
    static func state(playing: Int, adapts: Bool) throws -> PlaybackState {
        var state = PlaybackState()
        state.manifest = try LASManifest(parsing: Array(#"""
            {"version": "1.0.0", "adaptationSet": [{"representation": [
             {"id": 3, "url": "http://127.0.0.1:1/top.flv", "maxBitrate": 2500, "height": 720},
             {"id": 1, "url": "http://127.0.0.1:1/low.flv", "maxBitrate": 500, "height": 360},
             {"id": 9, "url": "http://127.0.0.1:1/secret.flv", "maxBitrate": 900, "hidden": true},
             {"id": 2, "url": "http://127.0.0.1:1/mid.flv", "maxBitrate": 1200}]}]}
            """#.utf8))
        state.rendition = playing
        state.adaptsRendition = adapts
        return state
    }

    @Test func theChoiceGoesFromAdaptationUpByBitrateAndBack() throws {
        #expect(try Self.state(playing: 3, adapts: true).nextRendition == .rendition(1))
        #expect(try Self.state(playing: 1, adapts: false).nextRendition == .rendition(2))
        #expect(try Self.state(playing: 2, adapts: false).nextRendition == .rendition(3))
        #expect(try Self.state(playing: 3, adapts: false).nextRendition == .auto)
        #expect(PlaybackState().nextRendition == nil, "no manifest")
    }

    @Test func theButtonSaysTheRenditionAndWhetherAdaptationChose() throws {
        #expect(try Self.state(playing: 1, adapts: true).renditionLabel == "AUTO 360P")
        #expect(try Self.state(playing: 3, adapts: false).renditionLabel == "720P")
        #expect(try Self.state(playing: 2, adapts: false).renditionLabel == "1200K", "no height: the bitrate")
        #expect(PlaybackState().renditionLabel == nil)
    }
}
