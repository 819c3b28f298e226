import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open output descriptor, written by one writer thread.
///
/// Regular files take whole writes. Anything else (a pipe, a socket, a terminal) is written after `poll`
/// says it has room, 4 KiB at a time (`PIPE_BUF` on Linux, so such a write never blocks), so a stalled
/// reader can be given up on within 100 ms.
final class OutputFile {
    let name: String
    let isRegularFile: Bool
    private var descriptor: Int32
    private let ownsDescriptor: Bool

    init(_ output: SinkOutput) throws(LivePlayError) {
        name = output.description
        switch output {
        case .standardOutput:
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
        case .descriptor(let descriptor):
            self.descriptor = descriptor
            ownsDescriptor = false
        case .file(let path):
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            ownsDescriptor = true
            guard descriptor >= 0 else {
                throw LivePlayError(.outputFailed, "cannot open \(path) for writing: \(describeErrno(errno))")
            }
        }
        var status = stat()
        isRegularFile = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    deinit {
        if ownsDescriptor, descriptor >= 0 { _ = Self.closeDescriptor(descriptor) }
    }

    /// Whether the far end of a pipe or socket has gone (`POLLERR` / `POLLHUP` on the write end); never for a file.
    var readerIsGone: Bool {
        guard !isRegularFile, descriptor >= 0 else { return false }
        var request = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&request, 1, 0) > 0 && request.revents & Int16(POLLERR | POLLHUP) != 0
    }

    /// Writes all of `bytes`.
    func append(_ bytes: UnsafeRawBufferPointer, isAbandoned: () -> Bool) throws(LivePlayError) {
        guard descriptor >= 0 else { throw LivePlayError(.outputFailed, "\(name) is already closed") }
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            if !isRegularFile {
                var request = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&request, 1, 100)
                if ready == 0 || (ready < 0 && errno == EINTR) {
                    if isAbandoned() { throw LivePlayError(.outputStalled, "\(name) stopped reading") }
                    continue
                }
                // Ready, an error or a hang-up: the write below says which.
            }
            let length = isRegularFile ? bytes.count - offset : min(bytes.count - offset, 4096)
            let written = write(descriptor, base + offset, length)
            if written > 0 {
                offset += written
                continue
            }
            let code = errno
            if written < 0, code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
            if code == EPIPE {
                throw LivePlayError(.outputClosed, "the reader of \(name) went away (EPIPE)")
            }
            throw LivePlayError(.outputFailed, "writing \(name) failed: \(describeErrno(code))")
        }
    }

    func append(_ bytes: [UInt8], isAbandoned: () -> Bool) throws(LivePlayError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(LivePlayError) in try append(buffer, isAbandoned: isAbandoned) }
        }
        try result.get()
    }

    /// Overwrites bytes at `offset` (header fields patched at the end); only for regular files.
    func overwrite(_ bytes: [UInt8], at offset: Int) throws(LivePlayError) {
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == bytes.count else {
            throw LivePlayError(.outputFailed, "patching \(name) at \(offset) failed: \(describeErrno(errno))")
        }
    }

    /// Closes a descriptor the sink opened; one it was given stays open. Errors `close` reports (a full
    /// disk on a network file system) are real write errors.
    func close() throws(LivePlayError) {
        guard ownsDescriptor, descriptor >= 0 else { return }
        let status = Self.closeDescriptor(descriptor)
        descriptor = -1
        guard status == 0 else {
            throw LivePlayError(.outputFailed, "closing \(name) failed: \(describeErrno(errno))")
        }
    }

    /// Releases the descriptor without caring about errors: the sink has already failed.
    func abort() {
        if ownsDescriptor, descriptor >= 0 { _ = Self.closeDescriptor(descriptor) }
        descriptor = -1
    }

    private static func closeDescriptor(_ descriptor: Int32) -> Int32 {
        #if canImport(Glibc)
            Glibc.close(descriptor)
        #else
            Darwin.close(descriptor)
        #endif
    }
}

/// `strerror`'s text for an errno value.
func describeErrno(_ code: Int32) -> String {
    String(cString: strerror(code))
}
