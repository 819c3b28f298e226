internal import CSDBus

/// A value of a D-Bus property or argument, with its type signature (D-Bus Specification, "Type System").
enum BusValue: Equatable, Sendable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case double(Double)
    case int64(Int64)
    case strings([String])
    /// `a{sv}`: MPRIS's `Metadata`.
    case dictionary([(String, BusValue)])

    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .double: "d"
        case .int64: "x"
        case .strings: "as"
        case .dictionary: "a{sv}"
        }
    }

    static func == (lhs: BusValue, rhs: BusValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.strings(let a), .strings(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a.map(\.0) == b.map(\.0) && a.map(\.1) == b.map(\.1)
        default: false
        }
    }
}

/// Writes to an sd-bus message (`OpaquePointer` to `sd_bus_message`), through sd-bus's non-variadic calls; the first
/// failure is kept and the rest are skipped, so a message is sent whole or not at all.
struct BusWriter {
    let message: OpaquePointer
    private(set) var failed: Int32 = 0

    init(_ message: OpaquePointer) {
        self.message = message
    }

    private static func code(_ character: Character) -> CChar { CChar(bitPattern: character.asciiValue!) }

    private mutating func check(_ result: Int32) {
        if failed == 0, result < 0 { failed = result }
    }

    mutating func write(_ value: BusValue) {
        switch value {
        case .string(let text): check(text.withCString { sd_bus_message_append_basic(message, Self.code("s"), $0) })
        case .objectPath(let path): check(path.withCString { sd_bus_message_append_basic(message, Self.code("o"), $0) })
        case .bool(let flag):
            var raw: Int32 = flag ? 1 : 0
            check(sd_bus_message_append_basic(message, Self.code("b"), &raw))
        case .double(var number): check(sd_bus_message_append_basic(message, Self.code("d"), &number))
        case .int64(var number): check(sd_bus_message_append_basic(message, Self.code("x"), &number))
        case .strings(let texts):
            container("a", "s") { writer in for text in texts { writer.write(.string(text)) } }
        case .dictionary(let entries):
            container("a", "{sv}") { writer in
                for (key, value) in entries { writer.entry(key, value) }
            }
        }
    }

    /// A `{sv}` entry: a name and its value in a variant.
    mutating func entry(_ key: String, _ value: BusValue) {
        container("e", "sv") { writer in
            writer.write(.string(key))
            writer.variant(value)
        }
    }

    mutating func variant(_ value: BusValue) {
        container("v", value.signature) { $0.write(value) }
    }

    mutating func container(_ type: Character, _ contents: String, _ body: (inout BusWriter) -> Void) {
        guard failed == 0 else { return }
        check(contents.withCString { sd_bus_message_open_container(message, Self.code(type), $0) })
        body(&self)
        check(sd_bus_message_close_container(message))
    }
}

/// Reads a method call's arguments, in order; `nil` where the call does not carry what was asked.
struct BusReader {
    let message: OpaquePointer

    private static func code(_ character: Character) -> CChar { CChar(bitPattern: character.asciiValue!) }

    func string(_ type: Character = "s") -> String? {
        var pointer: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, Self.code(type), &pointer) > 0, let pointer else { return nil }
        return String(cString: pointer)
    }

    func int64() -> Int64? {
        var value: Int64 = 0
        return sd_bus_message_read_basic(message, Self.code("x"), &value) > 0 ? value : nil
    }

    /// A variant holding a double (`Volume`'s `Set`).
    func variantDouble() -> Double? {
        guard "d".withCString({ sd_bus_message_enter_container(message, Self.code("v"), $0) }) > 0 else { return nil }
        var value = 0.0
        let read = sd_bus_message_read_basic(message, Self.code("d"), &value)
        _ = sd_bus_message_exit_container(message)
        return read > 0 ? value : nil
    }
}
