// swift-tools-version: 6.0
import PackageDescription

/// liveplay's fuzzers, kept out of the root package so `swift test` never builds them: `bash fuzz/run`.
/// Each executable is libFuzzer's `LLVMFuzzerTestOneInput` around a target in `LivePlayFuzzing`.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .unsafeFlags(["-parse-as-library"]),
]

let package = Package(
    name: "liveplay-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "liveplay", path: "..")],
    targets: ["FLV", "AMF", "CodecConfiguration", "RTMP", "HTTPFLV", "URL", "Manifest", "Playlist"].map { name in
        .executableTarget(
            name: "Fuzz\(name)",
            dependencies: [.product(name: "LivePlayFuzzing", package: "liveplay")],
            swiftSettings: swiftSettings
        )
    }
)
