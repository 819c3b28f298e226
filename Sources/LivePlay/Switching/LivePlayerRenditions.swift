import LivePlayBuffering
import LivePlayCore
public import LivePlayManifest

/// A LAS manifest's renditions while a playback started from one runs (its session read the manifest and says so in
/// its state): adaptation fed by the net status once a second, the viewer's choice, and what each switch is told
/// with. A switch goes through ``LivePlayer/switchStream(to:)``: the other rendition preloads and playback moves to
/// it at a keyframe both share.
extension LivePlayer {
    /// What plays of a manifest.
    public enum RenditionChoice: Sendable, Hashable {
        /// Adaptation chooses (``RenditionAdaptation``).
        case auto
        /// This rendition, by its id, until ``auto`` is chosen again.
        case rendition(Int)
    }

    struct RenditionPlayback: Sendable {
        var manifest: LASManifest
        /// The id playing.
        var playing: Int
        /// The ids adaptation picks among (not `disabledFromAdaptive`, within the bitrate cap), lowest first.
        var adaptive: [LASManifest.Rendition]
        /// nil while the viewer's choice holds, or with fewer than two renditions to pick among.
        var adaptation: RenditionAdaptation?
        /// The switch under way: to and from (ids) and why.
        var pending: (to: Int, from: Int, reason: String)?
        /// The keyframe the pending switch asked its rendition to start at (LAS's `startPts`), and whether it did.
        var startAsked: (keyframe: MediaTimestamp, honoured: Bool)?
        var switches = 0

        init(manifest: LASManifest, playing: Int, configuration: LivePlayConfiguration, at now: Duration) {
            self.manifest = manifest
            self.playing = playing
            let cap = configuration.maximumBitrate ?? .max
            adaptive = manifest.renditions.filter { !$0.disabledFromAdaptive && $0.maxBitrate <= cap }
            if configuration.adaptiveBitrate, configuration.rendition == nil { adapt(at: now) }
        }

        /// Adaptation from the rendition playing (or the nearest below it that adaptation may pick).
        mutating func adapt(at now: Duration) {
            let bitrate = manifest.renditions.first { $0.id == playing }?.maxBitrate ?? 0
            guard adaptive.count > 1 else { return adaptation = nil }
            let index = adaptive.lastIndex { $0.maxBitrate <= bitrate } ?? 0
            var adaptation = RenditionAdaptation(bitrates: adaptive.map(\.maxBitrate), current: index)
            adaptation.played(index, at: now)
            self.adaptation = adaptation
        }
    }

    /// The manifest playing and the id of its rendition; nil when the playback was not started from a manifest.
    public var rendition: (manifest: LASManifest, playing: Int)? {
        state.withLock { $0.renditions.map { ($0.manifest, $0.playing) } }
    }

    /// Plays a rendition of the manifest playing (turning adaptation off), or lets adaptation choose again (TUIPlayer's
    /// `switchResolution`, Brightcove's rendition selection). The switch is told with 2015 (`from`, `to`, `reason`
    /// `manual`).
    /// - Throws: ``LivePlayError`` (`badManifest`) when nothing plays from a manifest, or it has no such rendition.
    public func selectRendition(_ choice: RenditionChoice) throws(LivePlayError) {
        let now = time.elapsed()
        let next: LASManifest.Rendition? = try state.withLock { (state) throws(LivePlayError) -> LASManifest.Rendition? in
            guard var playback = state.renditions else {
                throw LivePlayError(.badManifest, "nothing plays from a LAS manifest")
            }
            defer { state.renditions = playback }
            guard case .rendition(let id) = choice else {
                playback.adapt(at: now)
                state.playbackState.adaptsRendition = playback.adaptation != nil
                return nil
            }
            guard let chosen = playback.manifest.renditions.first(where: { $0.id == id }) else {
                throw LivePlayError(.badManifest, "the manifest has no rendition \(id)")
            }
            playback.adaptation = nil
            state.playbackState.adaptsRendition = false
            guard id != playback.playing else { return nil }
            playback.pending = (id, playback.playing, "manual")
            return chosen
        }
        if let next { try switchStream(to: next) }
    }

    /// Switches to a rendition of the manifest, with its `backupUrl`s (then the configuration's) as its backups.
    func switchStream(to rendition: LASManifest.Rendition) throws(LivePlayError) {
        let backups = rendition.backupURLs + state.withLock { $0.configuration.backupURLs }
        try switchStream(to: rendition.url, backups: backups, asksStart: true)
    }

    /// Follows the manifest through the playback's updates, amending what they tell (the net status's rendition,
    /// 2015's `from`, `to` and `reason`); returns the rendition adaptation decided to switch to.
    static func followRenditions(
        _ update: inout PlayerUpdate, in state: inout State, at now: Duration
    ) -> LASManifest.Rendition? {
        switch update {
        case .state(var playback):
            if let manifest = playback.manifest, let id = playback.rendition, state.renditions?.manifest != manifest {
                state.renditions = RenditionPlayback(
                    manifest: manifest, playing: id, configuration: state.configuration, at: now)
            }
            // Every playback's state tells the manifest, also that of a rendition switched to (whose session did not
            // read it): the rendition playing, and whether adaptation chooses.
            guard let renditions = state.renditions else { return nil }
            playback.manifest = renditions.manifest
            playback.rendition = renditions.playing
            playback.adaptsRendition = renditions.adaptation != nil
            update = .state(playback)
        case .netStatus(var status):
            guard var playback = state.renditions else { return nil }
            defer { state.renditions = playback }
            status.rendition = playback.playing
            status.renditionSwitches = playback.switches
            update = .netStatus(status)
            guard playback.pending == nil,
                let decision = playback.adaptation?.observe(
                    at: now, buffered: .milliseconds(status.cacheMilliseconds), target: status.target,
                    receivedKbps: status.netSpeedKbps)
            else { return nil }
            let next = playback.adaptive[decision.to]
            playback.pending = (next.id, playback.playing, decision.reason.rawValue)
            return next
        case .event(var event):
            guard var playback = state.renditions, let pending = playback.pending,
                event.code == .streamSwitchSucceeded || event.code == .streamSwitchFailed
            else { return nil }
            defer { state.renditions = playback }
            event.parameters["from"] = .int(Int64(pending.from))
            event.parameters["to"] = .int(Int64(pending.to))
            // −2307 has a `reason` of its own: why the switch failed.
            event.parameters[event.code == .streamSwitchSucceeded ? "reason" : "rendition_reason"] = .string(pending.reason)
            if let asked = playback.startAsked {
                event.parameters["start_pts_ms"] = .int(asked.keyframe.milliseconds)
                event.parameters["start_pts_honoured"] = .bool(asked.honoured)
            }
            update = .event(event)
            playback.pending = nil
            playback.startAsked = nil
            if event.code == .streamSwitchSucceeded {
                playback.playing = pending.to
                playback.switches += 1
            } else if let from = playback.adaptive.firstIndex(where: { $0.id == pending.from }),
                let to = playback.adaptive.firstIndex(where: { $0.id == pending.to })
            {
                // Adaptation goes on from the rendition still playing, the other held off as a failed probe is.
                playback.adaptation?.switchFailed(to: to, playing: from, at: now)
            }
        }
        return nil
    }
}
