/// Runs `body`, then `cleanup` however `body` ends: a `defer` that can await (a server to stop, a window to close).
public func withCleanup<Result>(
    _ body: () async throws -> Result, cleanup: () async -> Void
) async throws -> Result {
    do {
        let result = try await body()
        await cleanup()
        return result
    } catch {
        await cleanup()
        throw error
    }
}
