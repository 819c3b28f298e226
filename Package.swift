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
        .library(name: "LivePlayWindow", targets: ["LivePlayWindow"]),
        .library(name: "LivePlayTesting", targets: ["LivePlayTesting"]),
        .library(name: "LivePlayDemo", targets: ["LivePlayDemo"]),
        .library(name: "LivePlayLab", targets: ["LivePlayLab"]),
        .library(name: "LivePlayFuzzing", targets: ["LivePlayFuzzing"]),
        .executable(name: "liveplay", targets: ["liveplay"]),
        .executable(name: "liveplay-lab", targets: ["liveplay-lab"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.25.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.0"),
    ],
    targets: [
        // C libraries, each imported by exactly one wrapper module.
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev", "libavutil-dev"])]
        ),
        // SDL2 (`libsdl2-dev`) by its header path: sdl2.pc's Cflags carry `-D_REENTRANT`, which SwiftPM rejects with
        // a warning on every build (.ci/setup checks `pkg-config --exists sdl2`). Its shim also asks Xlib
        // (libx11-dev, which libsdl2-dev depends on) whether a window manager runs, and brings SDL2_ttf's header
        // (libsdl2-ttf-dev): the window's words are drawn in a TrueType font.
        .systemLibrary(
            name: "CSDL2",
            providers: [.apt(["libsdl2-dev", "libx11-dev", "libsdl2-ttf-dev"])]
        ),
        // libavformat's muxers, for recording (FLV and fragmented MP4): LivePlayRecording is its one wrapper.
        // SDL2, SDL2_ttf, Xlib and libavformat are headers only at link time: CLazyLibraries defines their functions
        // as jumps and loads each library when a window, the sound device or a recording first needs it (process
        // start-up).
        // So libavformat is found by its header path too: avformat.pc's `--libs` would link it.
        .systemLibrary(
            name: "CFFmpegFormat",
            providers: [.apt(["libavformat-dev"])]
        ),
        .target(name: "CLazyLibraries"),
        // sd-bus's header (libsystemd-dev): CLazyLibraries loads libsystemd when a window first goes on the session bus.
        .systemLibrary(
            name: "CSDBus",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // libebur128's header: CLazyLibraries loads it when loudness normalisation first needs it.
        .systemLibrary(
            name: "CEBUR128",
            providers: [.apt(["libebur128-dev"])]
        ),
        .systemLibrary(
            name: "CRTMP",
            pkgConfig: "librtmp",
            providers: [.apt(["librtmp-dev"])]
        ),

        .target(name: "LivePlayCore", swiftSettings: swiftSettings),
        .target(name: "LivePlayFLV", dependencies: ["LivePlayCore"], swiftSettings: swiftSettings),
        .target(name: "LivePlayWire", dependencies: ["LivePlayCore", "LivePlayFLV"], swiftSettings: swiftSettings),
        // LAS manifests (renditions of one live stream): JSON through FoundationEssentials, without ICU.
        .target(name: "LivePlayManifest", swiftSettings: swiftSettings),
        // The fuzz targets' bodies: fuzz/ runs them under libFuzzer, the tests replay their regressions.
        .target(
            name: "LivePlayFuzzing", dependencies: ["LivePlayCore", "LivePlayFLV", "LivePlayWire", "LivePlayManifest"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayTransport",
            dependencies: [
                "LivePlayCore", "LivePlayFLV", "LivePlayWire", "CRTMP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayBuffering",
            dependencies: ["LivePlayCore", .product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: swiftSettings),
        .target(
            name: "LivePlayDecode",
            dependencies: ["LivePlayCore", "CFFmpeg"],
            swiftSettings: swiftSettings
        ),
        // MPRIS on the session bus, for a window: a front end's controller over the public API.
        .target(
            // LivePlayTransport for the one way liveplay names its threads (nameCurrentThread).
            name: "LivePlayMPRIS", dependencies: ["CSDBus", "CLazyLibraries", "LivePlayTransport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayLoudness",
            dependencies: ["CEBUR128", "CLazyLibraries"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayRecording",
            dependencies: ["LivePlayCore", "CFFmpegFormat", "CLazyLibraries"],
            swiftSettings: swiftSettings
        ),
        // The cache and the downloader: HTTP FLV files kept on disk, resumed with Range (docs/cache.md).
        .target(
            name: "LivePlayCache",
            dependencies: [
                // Its requests go through LivePlayTransport (HTTPConnectionPool): only Transport speaks HTTP.
                // SHA-256 for cache keys is libavutil's, through LivePlayDecode (its one wrapper).
                "LivePlayCore", "LivePlayTransport", "LivePlayRecording", "LivePlayDecode",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlay",
            dependencies: [
                "LivePlayCore", "LivePlayFLV", "LivePlayTransport", "LivePlayDecode", "LivePlayBuffering",
                "LivePlayRecording", "LivePlayCache", "LivePlayManifest", "LivePlayLoudness",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayWindow", dependencies: ["LivePlay", "CSDL2", "CLazyLibraries"], swiftSettings: swiftSettings
        ),
        // Many streams in one process for a Prometheus stack: metrics, the HTTP endpoints, sharding.
        .target(
            name: "LivePlayMonitor",
            dependencies: [
                "LivePlay",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "liveplay",
            dependencies: [
                "LivePlay",
                // LAS manifests' renditions, as `inspect` lists them.
                "LivePlayManifest",
                // `--window`: the SDL2 window and sound device (front ends that do not ask for them do not link SDL).
                "LivePlayWindow",
                // The window's player on the session bus (MPRIS): media keys and the desktop's media controls.
                "LivePlayMPRIS",
                // `monitor`: Prometheus metrics and sharding over many streams.
                "LivePlayMonitor",
                // Only for the built-in demo: the live loopback server, started in-process (not the whole lab).
                "LivePlayDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["Resources/README.md"],
            resources: [.copy("Resources/demo.flv")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "liveplay-simulate",
            dependencies: ["LivePlayTesting", "LivePlay"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "liveplay-allocations",
            dependencies: [
                "LivePlayTesting", "LivePlay", .product(name: "Logging", package: "swift-log"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "decode-file-sample",
            dependencies: ["LivePlay"],
            path: "Samples/DecodeFile",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "stutter-alarm", dependencies: ["LivePlay"], path: "Samples/StutterAlarm",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "multi-stream-monitor", dependencies: ["LivePlay"], path: "Samples/MultiStreamMonitor",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "custom-sink", dependencies: ["LivePlay"], path: "Samples/CustomSink", swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "channel-zapper", dependencies: ["LivePlay"], path: "Samples/ChannelZapper", swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "offline-player", dependencies: ["LivePlay"], path: "Samples/OfflinePlayer", swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "feed-player", dependencies: ["LivePlay"], path: "Samples/FeedPlayer", swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "rendition-watcher", dependencies: ["LivePlay"], path: "Samples/RenditionWatcher",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "window-player", dependencies: ["LivePlay", "LivePlayWindow"], path: "Samples/WindowPlayer",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LivePlayTesting",
            dependencies: [
                "LivePlayCore", "LivePlayFLV", "LivePlayLab", "LivePlay", "LivePlayBuffering",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The built-in demo's server, and the lab's: an FLV file looped as a live HTTP-FLV stream on loopback
        // (real-time pacing, GOP cache, wall-clock stamps).
        .target(
            name: "LivePlayDemo",
            dependencies: [
                "LivePlayCore", "LivePlayFLV",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The stream lab: the live server (LivePlayDemo), a TCP impairment proxy, a load generator, a recorder.
        .target(
            name: "LivePlayLab",
            dependencies: [
                "LivePlayCore", "LivePlayFLV", "LivePlayDemo",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "liveplay-lab",
            dependencies: [
                "LivePlayLab",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "LivePlayCoreTests",
            dependencies: ["LivePlayCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayFLVTests",
            dependencies: ["LivePlayFLV", "LivePlayFuzzing", "LivePlayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayDecodeTests",
            dependencies: ["LivePlayDecode", "LivePlay", "LivePlayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayTransportTests",
            dependencies: [
                "LivePlayTransport", "LivePlayWire", "LivePlayTesting", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayCacheTests",
            dependencies: [
                "LivePlayCache", "LivePlayTransport", "LivePlayTesting", "LivePlayLab",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayMonitorTests",
            dependencies: ["LivePlayMonitor", "LivePlay", "LivePlayTesting", "LivePlayLab",
                           .product(name: "Prometheus", package: "swift-prometheus")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayLoudnessTests",
            dependencies: ["LivePlayLoudness"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayManifestTests",
            dependencies: ["LivePlayManifest", "LivePlayFuzzing"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayWireTests",
            dependencies: ["LivePlayWire"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayBufferingTests",
            dependencies: ["LivePlayBuffering", "LivePlayTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayLabTests",
            dependencies: ["LivePlayLab", "LivePlayTesting", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayTests",
            dependencies: [
                "LivePlay", "LivePlayTesting", "LivePlayFLV", "LivePlayDecode", "LivePlayTransport", "LivePlayRecording",
                "LivePlayCache", "LivePlayLab", "LivePlayManifest",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LivePlayWindowTests",
            dependencies: ["LivePlayWindow", "LivePlay", "LivePlayTesting", "LivePlayLab"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "liveplayTests",
            dependencies: [
                "liveplay", "LivePlayTesting", "LivePlayLab", .product(name: "Logging", package: "swift-log"),
                // The control bar's layout, to click its controls where the window puts them.
                "LivePlayWindow",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
