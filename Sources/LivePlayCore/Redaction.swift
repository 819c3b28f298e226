/// Stream URLs carry tokens in their query strings (`?txSecret=…&txTime=…`) and sometimes a password
/// in their user info. Everything liveplay logs or prints goes through this, unless the user asks for
/// secrets to be shown.
public enum Redaction {
    /// `url` with each query value and any user-info password replaced by `***`; keys are kept, so a
    /// person can still see *which* parameters were sent.
    public static func url(_ url: String) -> String {
        var text = Substring(url)
        var fragment = ""
        if let hash = text.firstIndex(of: "#") {
            fragment = String(text[hash...])
            text = text[..<hash]
        }
        var query: Substring?
        if let question = text.firstIndex(of: "?") {
            query = text[text.index(after: question)...]
            text = text[..<question]
        }
        var result = redactUserInfo(String(text))
        if let query {
            let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
                guard let equals = pair.firstIndex(of: "=") else { return pair.isEmpty ? "" : "\(pair)" }
                return "\(pair[..<equals])=***"
            }
            result += "?" + pairs.joined(separator: "&")
        }
        return result + fragment
    }

    private static func redactUserInfo(_ url: String) -> String {
        guard let scheme = url.firstRange(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return url }
        let userInfo = authority[..<at]
        let user = userInfo.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        let redacted = userInfo.contains(":") ? "\(user):***" : user
        return String(url[..<scheme.upperBound]) + redacted + String(rest[at...])
    }
}
