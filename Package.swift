// swift-tools-version: 6.0
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode comes from the tools version; imports are
/// internal unless a module says otherwise, so a C type cannot leak into public API (STYLE.md, rule 5).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "liveplay",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "LivePlay", targets: ["LivePlay"]),
        .library(name: "LivePlayTesting", targets: ["LivePlayTesting"]),
        .executable(name: "liveplay", targets: ["liveplay"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C libraries, each imported by exactly one wrapper module.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev", "libavutil-dev"])]
        ),
        .systemLibrary(
            name: "CRTMP",
            pkgConfig: "librtmp",
            providers: [.apt(["librtmp-dev"])]
        ),

        .target(name: "LivePlayCore", swiftSettings: swiftSettings),
        .target(name: "LivePlayFLV", dependencies: ["LivePlayCore"], swiftSettings: swiftSettings),
        .target(
            name: "LivePlayTransport",
            dependencies: ["LivePlayCore", "CRTMP"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayDecode",
            dependencies: ["LivePlayCore", "CFFmpeg"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlay",
            dependencies: [
                "LivePlayCore", "LivePlayFLV", "LivePlayTransport", "LivePlayDecode",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "liveplay",
            dependencies: [
                "LivePlay",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "decode-file-sample",
            dependencies: ["LivePlay"],
            path: "Samples/DecodeFile",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayTesting",
            dependencies: ["LivePlayCore", "LivePlayFLV"],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "LivePlayCoreTests",
            dependencies: ["LivePlayCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayFLVTests",
            dependencies: ["LivePlayFLV", "LivePlayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayDecodeTests",
            dependencies: ["LivePlayDecode", "LivePlay", "LivePlayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayTransportTests",
            dependencies: ["LivePlayTransport", "LivePlayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "liveplayTests",
            dependencies: ["liveplay", "LivePlayTesting"],
            swiftSettings: swiftSettings
        ),
    ]
)
