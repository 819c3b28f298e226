import LivePlayBuffering
import LivePlayCore
import Testing

@Suite struct ConfigurationChangesTests {
    static func ms(_ value: Int64) -> MediaTimestamp { MediaTimestamp(milliseconds: value) }

    @Test func aChangeAppliesFromTheFirstPacketAfterIt() {
        var changes = ConfigurationChanges<String>()
        changes.received(dts: Self.ms(0))
        changes.schedule("720p")
        // Packets buffered before the header still decode with the old configuration.
        #expect(changes.due(at: Self.ms(0)) == nil)
        changes.received(dts: Self.ms(1000))
        changes.received(dts: Self.ms(1040))
        #expect(changes.due(at: Self.ms(960)) == nil)
        #expect(changes.due(at: Self.ms(1000)) == "720p")
        #expect(changes.due(at: Self.ms(1040)) == nil, "once")
    }

    @Test func aChangeWithNoPacketYetWaits() {
        var changes = ConfigurationChanges<String>()
        changes.schedule("hevc")
        #expect(changes.due(at: Self.ms(5000)) == nil)
        changes.received(dts: Self.ms(6000))
        #expect(changes.due(at: Self.ms(5999)) == nil)
        #expect(changes.due(at: Self.ms(6000)) == "hevc")
    }

    @Test func changesWhosePacketsWereShedGiveWayToTheNewest() {
        var changes = ConfigurationChanges<String>()
        changes.schedule("a")
        changes.received(dts: Self.ms(100))
        changes.schedule("b")
        changes.received(dts: Self.ms(200))
        changes.schedule("c")
        changes.received(dts: Self.ms(300))
        // The buffer shed everything up to 300: the decoder goes straight to the newest.
        #expect(changes.due(at: Self.ms(300)) == "c")
        #expect(changes.due(at: Self.ms(400)) == nil)
    }
}
