//! Removes secrets from what the audit log and the session history keep:
//! `Authorization:`-style header values, passwords in URLs, values of
//! `--password=...`-style options (and the word after `--password`),
//! secret-looking `NAME=value` assignments and query parameters, and
//! well-known token shapes (GitHub, GitLab, Slack, AWS, OpenAI, JWT).
//! Better to over-redact a log line than to ship a credential to syslog.

use std::sync::OnceLock;

use regex::Regex;

/// What replaces a secret.
pub const MASK: &str = "[REDACTED]";

const SECRET_NAME: &str = r"(?i:[a-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|auth|session[_-]?id|cookie)[a-z0-9_.-]*)";

struct Rules {
    header: Regex,
    url_pass: Regex,
    option: Regex,
    assign: Regex,
    query: Regex,
    tokens: Regex,
    bare_option: Regex,
    option_space: Regex,
}

/// The compiled patterns; `None` only if one of the constant patterns above
/// failed to compile (a unit test compiles them), and then everything is
/// masked: redaction fails closed.
fn rules() -> Option<&'static Rules> {
    static R: OnceLock<Option<Rules>> = OnceLock::new();
    R.get_or_init(|| {
        Some(Rules {
            header: Regex::new(
                r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|private-token|cookie|set-cookie)(\s*:\s*)[^'\x22\n]*",
            )
            .ok()?,
            url_pass: Regex::new(r"([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@'\x22]*:)[^@\s/'\x22]+@").ok()?,
            option: Regex::new(&format!(r"(--?{SECRET_NAME}=)[^\s'\x22]+")).ok()?,
            assign: Regex::new(&format!(r"(\b{SECRET_NAME}=)[^\s'\x22&]+")).ok()?,
            query: Regex::new(&format!(r"([?&]{SECRET_NAME}=)[^\s&'\x22#]+")).ok()?,
            tokens: Regex::new(
                r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+)",
            )
            .ok()?,
            bare_option: Regex::new(&format!(r"^--?{SECRET_NAME}$")).ok()?,
            option_space: Regex::new(&format!(
                r#"((?:^|\s)--?{SECRET_NAME}\s+)('[^']*'|"[^"]*"|[^\s'"-][^\s'"]*)"#
            ))
            .ok()?,
        })
    })
    .as_ref()
}

/// Literals one of which every pattern needs (ASCII case-insensitively):
/// the secret names (`SECRET_NAME` and the header names all contain one).
const SECRET_WORDS: &[&str] = &[
    "passw",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    "auth",
    "session",
    "cookie",
];

/// Token shapes (case-sensitive, as in the `tokens` pattern).
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "AKIA",
    "sk-",
    "AIza",
    "eyJ",
];

/// Whether any pattern could match `s`: a cheap literal test so that the
/// patterns are compiled only for text that may hold a secret (compiling
/// them costs milliseconds, and most commands hold none). Non-ASCII text
/// always goes through the patterns (their case folding is Unicode's).
fn may_hold_secret(s: &str) -> bool {
    if !s.is_ascii() {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
        || (s.contains("://") && s.contains('@'))
        || TOKEN_PREFIXES.iter().any(|p| s.contains(p))
}

/// Redacts secrets inside one piece of text (a raw command, an argument,
/// an environment value).
pub fn text(s: &str) -> String {
    if !may_hold_secret(s) {
        return s.to_string();
    }
    let Some(r) = rules() else {
        return MASK.to_string();
    };
    let s = r.header.replace_all(s, format!("${{1}}${{2}}{MASK}"));
    let s = r.url_pass.replace_all(&s, format!("${{1}}{MASK}@"));
    let s = r.option.replace_all(&s, format!("${{1}}{MASK}"));
    let s = r.option_space.replace_all(&s, format!("${{1}}{MASK}"));
    let s = r.assign.replace_all(&s, format!("${{1}}{MASK}"));
    let s = r.query.replace_all(&s, format!("${{1}}{MASK}"));
    let s = r.tokens.replace_all(&s, MASK);
    s.into_owned()
}

/// Redacts an argument list: each argument as [`text`], and the argument
/// after a bare `--password`/`--token`/`-p`-style secret option.
pub fn args(argv: &[String]) -> Vec<String> {
    if !argv.iter().any(|a| may_hold_secret(a)) {
        return argv.to_vec();
    }
    let Some(r) = rules() else {
        return argv.iter().map(|_| MASK.to_string()).collect();
    };
    let mut out = Vec::with_capacity(argv.len());
    let mut mask_next = false;
    for a in argv {
        if mask_next {
            out.push(MASK.to_string());
            mask_next = false;
            continue;
        }
        mask_next = r.bare_option.is_match(a);
        out.push(text(a));
    }
    out
}

/// Redacts the value of an environment variable `name`.
pub fn env_value(name: &str, value: &str) -> String {
    let secret = may_hold_secret(name)
        && Regex::new(&format!("^{SECRET_NAME}$"))
            .map(|r| r.is_match(name))
            .unwrap_or(true);
    if secret {
        MASK.to_string()
    } else {
        text(value)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn every_pattern_compiles() {
        assert!(rules().is_some());
    }

    #[test]
    fn the_literal_prefilter_never_hides_a_secret() {
        // Each case would be redacted by a pattern; the prefilter must let
        // it through to the patterns, in several spellings.
        for s in [
            "curl -H 'Authorization: Bearer abc'",
            "curl -H 'X-Api-Key: abc'",
            "curl -H 'Cookie: a=b'",
            "curl -H 'PRIVATE-TOKEN: abc'",
            "git clone https://bob:hunter2@example.com/x",
            "mysql --PASSWORD=pw",
            "mysql --passwd pw",
            "DB_PWD=x make",
            "export MY_SECRET=x",
            "curl 'https://x/?api_key=abc'",
            "tool --access-key x",
            "tool --credentials x",
            "tool --session-id x",
            "echo ghp_aaaaaaaaaaaaaaaaaaaaaaaa",
            "echo github_pat_aaaaaaaaaaaaaaaaaaaaaaaa",
            "echo glpat-aaaaaaaaaaaaaaaaaaaa",
            "echo xoxb-aaaaaaaaaaaa",
            "echo AKIAAAAAAAAAAAAAAAAA",
            "echo sk-aaaaaaaaaaaaaaaaaaaaaaaa",
            "echo AIzaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "echo eyJaaaaaaaaa.eyJaaaaaaaaa.sig",
            "paſſword=x",
        ] {
            assert!(may_hold_secret(s), "{s}");
            assert_ne!(text(s), s, "{s} was not redacted");
        }
        // Negative control: an ordinary command skips the patterns.
        for s in ["git status", "/bin/true", "cargo test --all-targets"] {
            assert!(!may_hold_secret(s), "{s}");
            assert_eq!(text(s), s);
        }
    }

    use super::*;

    #[test]
    fn redacts_the_usual_suspects() {
        let s = text(
            "curl -H 'Authorization: Bearer abc.def' https://bob:hunter2@example.com/x?token=zzz&a=1 --password=pw GITHUB_TOKEN=ghp_aaaaaaaaaaaaaaaaaaaaaaaa",
        );
        assert!(!s.contains("abc.def"), "{s}");
        assert!(!s.contains("hunter2"), "{s}");
        assert!(!s.contains("zzz"), "{s}");
        assert!(!s.contains("=pw"), "{s}");
        assert!(!s.contains("ghp_"), "{s}");
        assert!(s.contains("a=1"), "{s}");
        let a = args(&[
            "mysql".into(),
            "--password".into(),
            "pw".into(),
            "db".into(),
        ]);
        assert_eq!(a, vec!["mysql", "--password", MASK, "db"]);
        assert_eq!(env_value("AWS_SECRET_ACCESS_KEY", "x"), MASK);
        assert_eq!(env_value("PATH", "/bin"), "/bin");
    }
}
