// swift-tools-version: 6.0
import PackageDescription

/// The same settings the root package gives its targets (see ../Package.swift).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

/// Benchmarks, kept out of the root package so `swift test` never builds them: `bash bench/run`.
let package = Package(
    name: "liveplay-bench",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "liveplay", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "liveplay-bench",
            dependencies: [
                .product(name: "LivePlay", package: "liveplay"),
                .product(name: "LivePlayTesting", package: "liveplay"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        )
    ]
)
