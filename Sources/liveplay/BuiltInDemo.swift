import Foundation
import LivePlayLab

/// The built-in demo: the sample the package ships (`Resources/demo.flv`), served as a live stream in this
/// process through the lab's one seam for it, ``DemoStream``.
struct BuiltInDemo {
    private let stream: DemoStream
    var url: String { stream.url }

    static func start() async throws -> BuiltInDemo {
        guard let path = Bundle.module.path(forResource: "demo", ofType: "flv") else {
            throw LabError(.invalidState, "the demo stream is missing from the liveplay bundle")
        }
        return BuiltInDemo(stream: try await DemoStream.start(path: path))
    }

    func stop() async {
        await stream.stop()
    }
}
