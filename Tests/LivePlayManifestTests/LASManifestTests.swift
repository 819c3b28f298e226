import LivePlayFuzzing
import LivePlayManifest
import Testing

/// LAS manifests as LAS servers and apps write them (KwaiVideoTeam/las's `client/las.js/demo/manifest.json` has this
/// shape), and the ones that must be refused, each with its sentence.
@Suite struct LASManifestTests {
    static func representation(
        _ id: Int, _ bitrate: Int, hidden: Bool = false, adaptive: Bool = true, selected: Bool = false
    ) -> String {
        """
        {"id": \(id), "codec": "avc1.64001f,mp4a.40.5", "url": "http://127.0.0.1:8080/live_\(bitrate).flv?token=s",
         "backupUrl": ["rtmp://127.0.0.1:1935/live/s_\(bitrate)"], "host": "127.0.0.1", "maxBitrate": \(bitrate),
         "width": \(bitrate / 2), "height": \(bitrate / 4), "frameRate": 25, "qualityType": "Q\(id)",
         "qualityTypeName": "q\(id)", "hidden": \(hidden), "disabledFromAdaptive": \(!adaptive),
         "defaultSelected": \(selected)}
        """
    }

    static func manifest(_ representations: [String], duration: String = "1000") -> [UInt8] {
        Array(
            """
            {"version": "1.0.0", "adaptationSet": [{"duration": \(duration), "id": 1,
             "representation": [\(representations.joined(separator: ","))]}]}
            """.utf8)
    }

    @Test func theRenditionsAreReadLowestBitrateFirstWithTheirBackups() throws {
        let manifest = try LASManifest(parsing: Self.manifest([
            Self.representation(3, 2500), Self.representation(1, 500, hidden: true),
            Self.representation(2, 1200, selected: true),
        ]))
        #expect(manifest.version == "1.0.0")
        #expect(manifest.groupOfPictures == .seconds(1))
        #expect(manifest.renditions.map(\.id) == [1, 2, 3])
        #expect(manifest.renditions.map(\.maxBitrate) == [500, 1200, 2500])
        let top = manifest.renditions[2]
        #expect(top.url == "http://127.0.0.1:8080/live_2500.flv?token=s")
        #expect(top.backupURLs == ["rtmp://127.0.0.1:1935/live/s_2500"])
        #expect(top.codec == "avc1.64001f,mp4a.40.5" && top.width == 1250 && top.height == 625 && top.frameRate == 25)
        #expect(top.qualityType == "Q3" && top.qualityTypeName == "q3" && top.label == "625p 2500 kbit/s (Q3)")
        #expect(manifest.startRendition.id == 2, "defaultSelected")
        #expect(manifest.choosable.map(\.id) == [2, 3], "hidden is adaptation's only")
    }

    /// Without `defaultSelected`, the lowest that adaptation may pick; the fields LAS leaves optional may be absent.
    @Test func withoutADefaultPlaybackStartsLowAndOptionalFieldsMayBeMissing() throws {
        let manifest = try LASManifest(parsing: Self.manifest([
            Self.representation(1, 400, adaptive: false), Self.representation(2, 900), Self.representation(3, 2000),
        ]))
        #expect(manifest.startRendition.id == 2)
        let bare = try LASManifest(parsing: Array(
            #"{"version":"1","adaptationSet":[{"representation":[{"id":7,"url":"rtmps://[::1]/live/a"}]}]}"#.utf8))
        #expect(bare.renditions.map(\.id) == [7] && bare.groupOfPictures == nil)
        #expect(bare.renditions[0].backupURLs.isEmpty && bare.renditions[0].maxBitrate == 0)
        #expect(bare.startRendition.id == 7)
    }

    @Test(arguments: [
        ("<html>502 Bad Gateway</html>", "it is not JSON"),
        (#"{"streams": []}"#, "it has no `version`: not a LAS manifest"),
        (#"{"version": "1"}"#, "it has no `adaptationSet`: not a LAS manifest"),
        (#"{"version": "1", "adaptationSet": []}"#, "its `adaptationSet` is empty: no rendition to play"),
        (#"{"version": "1", "adaptationSet": [{"representation": []}]}"#,
         "its `adaptationSet[0].representation` is empty: no rendition to play"),
        (#"{"version": "1", "adaptationSet": [{"representation": [{"id": 1, "url": "http://127.0.0.1/a.flv"}, {"id": 2}]}]}"#,
         "it has no `adaptationSet[0].representation[1].url`: not a LAS manifest"),
        (#"{"version": "1", "adaptationSet": [{"representation": [{"id": "one", "url": "http://127.0.0.1/a.flv"}]}]}"#,
         "its `adaptationSet[0].representation[0].id` is not what LAS puts there"),
        (#"{"version": "1", "adaptationSet": [{"representation": [{"id": 1, "url": "javascript:alert(1)"}]}]}"#,
         "representation 0 has a URL that is not HTTP(S) or RTMP(S)"),
        (#"{"version": "1", "adaptationSet": [{"representation": [{"id": 1, "url": "/etc/passwd"}]}]}"#,
         "representation 0 has a URL that is not HTTP(S) or RTMP(S)"),
        (#"{"version": "1", "adaptationSet": [{"representation": [{"id": 1, "url": "http://127.0.0.1/a.flv", "backupUrl": ["file:///a.flv"]}]}]}"#,
         "representation 0 has a URL that is not HTTP(S) or RTMP(S)"),
        (#"{"version": "1", "adaptationSet": [{"representation": [{"id": 1, "url": "http://127.0.0.1/a.flv"}, {"id": 1, "url": "http://127.0.0.1/b.flv"}]}]}"#,
         "representation 1 repeats the id 1"),
    ])
    func aManifestThatIsNotLASOrIsBrokenIsRefusedWithASentence(_ body: String, _ sentence: String) {
        #expect(throws: LASManifestError(sentence)) { try LASManifest(parsing: Array(body.utf8)) }
        #expect(FuzzTargets.lasManifest(Array(body.utf8)) == nil)
    }

    /// A body past 1 MiB is refused before it is parsed; deep nesting is an error, not a crash.
    @Test func aHugeOrDeepBodyIsRefused() {
        var huge = Self.manifest([Self.representation(1, 500)])
        huge += [UInt8](repeating: 0x20, count: LASManifest.maximumSize + 1 - huge.count)
        #expect(throws: LASManifestError("it is larger than 1 MiB: not a manifest")) { try LASManifest(parsing: huge) }
        let deep = Array(#"{"version":"1","adaptationSet":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(throws: LASManifestError.self) { try LASManifest(parsing: deep) }
    }

    /// `--rendition` plays any rendition by id (a hidden one too); `--max-bitrate` keeps the start under the cap.
    @Test func aRenditionIsChosenByIdOrUnderABitrateCap() throws {
        let manifest = try LASManifest(parsing: Self.manifest([
            Self.representation(1, 500), Self.representation(2, 1200, hidden: true),
            Self.representation(3, 2500, selected: true), Self.representation(4, 4000, adaptive: false),
        ]))
        #expect(try manifest.rendition(id: 2, maximumBitrate: nil).id == 2)
        #expect(try manifest.rendition(id: 4, maximumBitrate: 100).id == 4, "a choice by id is not capped")
        #expect(throws: LASManifestError("it has no rendition 9 (its renditions are 1, 2, 3, 4)")) {
            try manifest.rendition(id: 9, maximumBitrate: nil)
        }
        #expect(try manifest.rendition(id: nil, maximumBitrate: nil).id == 3)
        #expect(try manifest.rendition(id: nil, maximumBitrate: 2500).id == 3, "the start is within the cap")
        #expect(try manifest.rendition(id: nil, maximumBitrate: 2000).id == 2)
        #expect(try manifest.rendition(id: nil, maximumBitrate: 300).id == 1, "none under the cap: the lowest")
    }

    @Test func aManifestIsNamedByItsPath() {
        #expect(LASManifest.names("http://127.0.0.1:8080/las/manifest.json?token=x.flv"))
        #expect(LASManifest.names("/srv/Renditions.JSON"))
        #expect(!LASManifest.names("http://127.0.0.1:8080/live.flv?list=a.json"))
        #expect(!LASManifest.names("rtmp://127.0.0.1/live/stream"))
    }

    @Test func theFuzzTargetAcceptsRealManifests() {
        #expect(FuzzTargets.lasManifest(Self.manifest([Self.representation(1, 500), Self.representation(2, 900)])) == nil)
    }
}
