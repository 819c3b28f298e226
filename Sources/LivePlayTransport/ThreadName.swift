import Foundation

/// Names the thread it is called on for the OS (Linux keeps 15 bytes), as `top -H`, `/proc/PID/task/*/comm` and crash
/// dumps show it: every thread liveplay starts calls it first.
///
/// Through the thread's own `/proc/thread-self/comm`, as `prctl(PR_SET_NAME)` does, not `Thread.current.name`:
/// Foundation passes that on only once the starting thread has stored the new thread's handle, which a busy machine
/// may not have done yet; the name was then lost and the thread kept its creator's (a libdispatch worker's,
/// `com.apple.root.default-qos`). That is what `sessionsShareAGroupsThread` saw: the work was on the group's thread,
/// under the wrong name.
package func nameCurrentThread(_ name: String) {
    let bytes = Array(name.utf8.prefix(15))
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}
