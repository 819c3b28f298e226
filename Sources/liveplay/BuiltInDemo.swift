import Foundation
import LivePlayDemo

/// The built-in demo: the sample the package ships (`Resources/demo.flv`), served as a live stream in this
/// process through ``DemoStream``: the binary links LivePlayDemo, whose one job that is, and not the stream lab.
struct BuiltInDemo {
    private let stream: DemoStream
    var url: String { stream.url }

    static func start() async throws -> BuiltInDemo {
        guard let path = Bundle.module.path(forResource: "demo", ofType: "flv") else {
            throw DemoError(.readFailed, "the demo stream is missing from the liveplay bundle")
        }
        return BuiltInDemo(stream: try await DemoStream.start(path: path))
    }

    func stop() async {
        await stream.stop()
    }
}
