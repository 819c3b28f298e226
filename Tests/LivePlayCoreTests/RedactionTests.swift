import LivePlayCore
import Testing

@Suite struct RedactionTests {
    @Test(arguments: [
        ("http://cdn.example/live/a.flv?txSecret=abc123&txTime=5F00", "http://cdn.example/live/a.flv?txSecret=***&txTime=***"),
        ("rtmp://u:pass@host:1935/app/stream?token=xyz", "rtmp://u:***@host:1935/app/stream?token=***"),
        ("https://host/a.flv?flag&k=v#frag", "https://host/a.flv?flag&k=***#frag"),
        ("rtmp://127.0.0.1/live/test", "rtmp://127.0.0.1/live/test"),
    ])
    func queryValuesAndPasswordsAreHidden(_ input: String, _ expected: String) {
        #expect(Redaction.url(input) == expected)
        #expect(!Redaction.url(input).contains("abc123") && !Redaction.url(input).contains("pass@"))
    }
}
