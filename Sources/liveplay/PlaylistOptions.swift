import ArgumentParser
import LivePlay
import LivePlayManifest

/// `liveplay list.m3u`, `--loop-file`, `--loop-playlist` (mpv's names): the items played one after another, each
/// autoplaying to the next; n / p in the window move through them.
struct PlaylistOptions: ParsableArguments {
    @Flag(help: "Play each item again when it ends (a playlist's item, or the one URL given).")
    var loopFile = false

    @Flag(help: "After a playlist's last item, play the first again (several URLs play as a playlist too).")
    var loopPlaylist = false

    var loop: LivePlaylist.Loop { loopFile ? .file : loopPlaylist ? .playlist : .none }

    func validate(urls: [String]) throws {
        if loopFile, loopPlaylist { throw ValidationError("--loop-file and --loop-playlist exclude each other") }
        if urls.contains(where: M3UPlaylist.names), urls.count > 1 {
            throw ValidationError("a playlist (.m3u) plays alone: give it as the one URL")
        }
    }

    /// The playlist a run plays, when it plays one: the M3U file or URL given, or the URLs given with a loop option.
    /// A playlist that cannot be read or is not one is a sentence on stderr and the exit status its reason gives.
    func playlist(for urls: [String], log: EventLog, options: TransportOptions) async throws -> LivePlaylist? {
        guard let first = urls.first, M3UPlaylist.names(first) else {
            return loop == .none ? nil : LivePlaylist(urls.map { LivePlaylist.Item($0) }, loop: loop)
        }
        do {
            return LivePlaylist(try await M3UPlaylist.read(first, transport: options), loop: loop)
        } catch {
            log.error("liveplay: \(error.message)")
            throw ExitCode(
                error.code == .badPlaylist ? ExitStatus.dataError
                    : error.code == .sourceNotFound ? ExitStatus.noInput : ExitStatus.unavailable)
        }
    }
}
