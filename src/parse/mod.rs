//! Layer 0: turn what the caller handed us (an argv or a shell string) into
//! one typed [`CommandModel`]. Nothing here decides; it only describes, and
//! marks as `unknown` whatever it cannot describe exactly.

mod fast;
mod hazards;
pub mod model;
mod shell;
pub mod unwrap;
pub mod word;

use std::borrow::Cow;
use std::path::Path;

pub use model::{
    Assignment, CommandModel, Constructs, Form, Operator, Origin, Redirection, Segment, Word,
};

use crate::builtin;

/// What layer 0 needs to know about the caller's situation.
#[derive(Debug, Clone)]
pub struct ParseContext<'a> {
    /// Working directory the command starts in.
    pub cwd: Cow<'a, Path>,
    /// The user's home directory (for `~` and `$HOME`).
    pub home: Cow<'a, Path>,
    /// `$TMPDIR` if set.
    pub tmpdir: Option<String>,
    /// `$0 $1 ...` for `-c STRING NAME ARGS...`.
    pub positional: Cow<'a, [String]>,
    /// Maximum nesting of `bash -c`, substitutions and `eval`.
    pub max_depth: u32,
    /// Maximum number of simple commands.
    pub max_segments: usize,
    /// Maximum length of a shell string in bytes.
    pub max_length: usize,
    /// `CDPATH` is set in the caller's environment: `cd NAME` may go elsewhere.
    pub cdpath: bool,
    /// Harness steps to recognise (issue: configured shell); empty by default.
    /// Shared: `decide` hands every decision the profile's cached steps.
    pub trusted: std::sync::Arc<[crate::parse::shell::TrustedStep]>,
}

pub use shell::TrustedStep;
pub use shell::join_clean as shell_join;
pub use shell::join_physical;
pub use shell::shell_quote;

impl<'a> ParseContext<'a> {
    /// A context with the default limits. The paths (and the positional
    /// parameters) may be borrowed from the caller's situation: building
    /// a context for every decision then copies nothing.
    pub fn new(cwd: impl Into<Cow<'a, Path>>, home: impl Into<Cow<'a, Path>>) -> Self {
        Self {
            cwd: cwd.into(),
            home: home.into(),
            tmpdir: None,
            positional: Cow::Borrowed(&[]),
            max_depth: 8,
            max_segments: 1000,
            max_length: 256 * 1024,
            cdpath: false,
            trusted: std::sync::Arc::default(),
        }
    }
}

/// Parses a shell string (`-c STRING`).
pub fn parse_string(input: &str, ctx: &ParseContext) -> CommandModel {
    shell::Walker::new(ctx, Form::String).run_string(input)
}

/// Parses an argv list (`-- PROGRAM ARGS...`). No shell is involved, so every
/// word is literal; wrappers and nested `bash -c` are still unwrapped.
pub fn parse_list(argv: &[String], ctx: &ParseContext) -> CommandModel {
    shell::Walker::new(ctx, Form::List).run_list(argv)
}

/// Looks up a wrapper spec in the embedded table.
pub fn wrapper_spec(name: &str) -> Option<unwrap::WrapperSpec> {
    let idx = builtin::WRAPPERS
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()?;
    // build.rs deserialises every built-in wrapper, so this cannot fail; if
    // it still did, the wrapper is treated as raising privileges (refused
    // unless the profile allows escalation), never as a plain program.
    Some(
        serde_json::from_str(builtin::WRAPPERS[idx].1).unwrap_or_else(|_| unwrap::WrapperSpec {
            escalates: true,
            ..Default::default()
        }),
    )
}

/// Normalises a program word for the registry: `/usr/bin/rm`, `./rm`, `rm`
/// are all `rm`.
pub fn normalize_program(word: &str) -> String {
    // What follows the last `/` (`rsplit('/').next()`, found backwards
    // in one `memrchr`).
    let base = word.rfind('/').map_or(word, |i| &word[i + 1..]);
    if base.is_empty() {
        word.to_string()
    } else {
        base.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The vendored brush-parser's `parse_program_str` (the tokenizer
    /// reading the string in place) gives the tree or the error, source
    /// positions included, that the reader over the string's bytes gives,
    /// for generated strings of shell atoms (quotes, escapes, heredocs,
    /// multi-byte characters, unterminated constructs) and the tests'
    /// commands.
    #[test]
    fn parse_program_str_equals_the_reader() {
        const ATOMS: &[&str] = &[
            " ", "\t", "\n", ";", "&&", "||", "|", "&", ">", ">>", "<", "2>&1", "<<<", "<<E",
            "<<-E", "\nE\n", "E", "(", ")", "{", "}", "'", "\"", "\\", "$", "${", "$(", "$((", "`",
            "~", "*", "?", "[", "]", "#", "=", "!", "-", "x", "a=b", "rm", "git", "é", "日本",
            "if", "then", "fi", "for", "in", "do", "done", "case", "esac", "$HOME", "\"$x\"",
            "'a b'", "$'\\x41'", "<(", ">(", "{a,b}", "[[", "]]", "((", "))", "\r", "$[", "\\\n",
        ];
        let opts = brush_parser::ParserOptions::default();
        let same = |s: &str| {
            let want = brush_parser::Parser::new(s.as_bytes(), &opts).parse_program();
            let got = brush_parser::parse_program_str(s, &opts);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{s:?}");
        };
        let mut next = crate::sys::testing::xorshift_below(0x2545_f491_4f6c_dd1d);
        for _ in 0..4000 {
            let len = 1 + next(12);
            let s: String = (0..len).map(|_| ATOMS[next(ATOMS.len())]).collect();
            same(&s);
        }
        for s in [
            "git status && cargo test",
            "cat <<EOF\nhello $x\nEOF\n",
            "find . -name '*.rs' -exec wc -l {} +",
            "python3 -c 'import shutil; shutil.rmtree(\"/\")'",
            "a\nb\n\nc é \"日本\" $((1+2)) `id` $(ls | head -1)",
            "",
        ] {
            same(s);
        }
    }

    /// Digits before a redirection that do not fit an fd are a word, as
    /// bash reads them (the vendored parser `unwrap`ped the number and
    /// panicked, which aborts the shipped binary); a number that fits is
    /// the redirection's fd.
    #[test]
    fn an_io_number_too_large_for_an_fd_is_a_word() {
        for (s, argv, fd) in [
            ("echo 99999999999>x", vec!["echo", "99999999999"], None),
            ("echo 2147483648>x", vec!["echo", "2147483648"], None),
            ("echo 2147483647>x", vec!["echo"], Some(2_147_483_647)),
            ("echo 2>x", vec!["echo"], Some(2)),
        ] {
            let m = parse_string(s, &ctx());
            assert!(!m.is_unknown(), "{s}: {:?}", m.unknown);
            let seg = &m.segments[0];
            assert_eq!(seg.argv_vec(), argv, "{s}");
            assert_eq!(seg.redirections.len(), 1, "{s}");
            let r = &seg.redirections[0];
            assert_eq!(
                (r.op.as_str(), r.fd, r.target.as_str(), r.writes),
                (">", fd, "/work/repo/x", true),
                "{s}"
            );
        }
    }

    fn ctx() -> ParseContext<'static> {
        let mut c = ParseContext::new(Path::new("/work/repo"), Path::new("/home/u"));
        c.positional = vec!["safe-exec".to_string()].into();
        c
    }

    fn progs(s: &str) -> Vec<String> {
        parse_string(s, &ctx())
            .segments
            .iter()
            .map(|s| s.program.clone())
            .collect()
    }

    #[test]
    fn chaining_and_pipes() {
        let m = parse_string("git status && git clean -fdx | head; ls &", &ctx());
        assert_eq!(
            progs("git status && git clean -fdx | head; ls &"),
            ["git", "git", "head", "ls"]
        );
        assert!(m.constructs.chaining && m.constructs.pipeline && m.constructs.background);
        assert!(!m.is_unknown());
    }

    #[test]
    fn quoted_operators_are_data() {
        let m = parse_string("echo ';' \"&&\" 'rm -rf /'", &ctx());
        assert_eq!(m.segments.len(), 1);
        assert_eq!(m.segments[0].argv_vec(), ["echo", ";", "&&", "rm -rf /"]);
    }

    /// The argv is read from the words: serialised as the `argv` list in
    /// its former place (after `program`), and printed by `Debug` as the
    /// derive printed the field of its own, before `words`.
    #[test]
    fn a_segment_shows_its_argv_where_the_field_was() {
        let m = parse_string("sudo rm -rf 'a b' \"$HOME\"/x", &ctx());
        let s = &m.segments[0];
        assert_eq!(
            s.argv().collect::<Vec<_>>(),
            ["rm", "-rf", "a b", "/home/u/x"]
        );
        assert_eq!(s.argv_line(1), "-rf a b /home/u/x");
        assert_eq!(s.argv_line(9), "");
        let json = serde_json::to_string(s).expect("json");
        assert!(
            json.starts_with(
                r#"{"program":"rm","argv":["rm","-rf","a b","/home/u/x"],"assignments":[]"#
            ),
            "{json}"
        );
        assert!(!json.contains("words"), "{json}");
        let debug = format!("{s:?}");
        assert!(
            debug.starts_with(r#"Segment { program: "rm", argv: ["rm", "-rf", "a b", "/home/u/x"], words: [Word { value: "rm", raw: "rm", literal: true"#),
            "{debug}"
        );
        assert!(
            debug.contains(r#"Word { value: "a b", raw: "'a b'", literal: true, quoted: true"#),
            "{debug}"
        );
        let pretty = format!("{s:#?}");
        assert!(
            pretty.contains("    argv: [\n        \"rm\",\n"),
            "{pretty}"
        );
    }

    /// A word spelled as its value keeps one string; a word made from
    /// another with a new value keeps the other's spelling; equality and
    /// `Debug` read the spelling however it is kept.
    #[test]
    fn a_word_keeps_its_spelling() {
        let plain = Word::literal("--user=root");
        assert_eq!(plain.raw(), "--user=root");
        let value = plain.with_value("root".into());
        assert_eq!((value.value.as_str(), value.raw()), ("root", "--user=root"));
        assert!(value.literal);
        assert_eq!(plain.with_value("--user=root".into()), plain);
        let quoted = Word::spelled("a", "'a'").with_value("b".into());
        assert_eq!((quoted.value.as_str(), quoted.raw()), ("b", "'a'"));
        assert_eq!(Word::spelled("x", "x"), Word::spelled("x", "x".to_string()));
        assert_ne!(Word::spelled("x", "x"), Word::spelled("x", "'x'"));
        // The spelling kept apart, equal to the value: the same word.
        let mut resolved = Word::resolving("a");
        resolved.value.push('a');
        assert_eq!(resolved, Word::literal("a"));
        assert_eq!(format!("{resolved:?}"), format!("{:?}", Word::literal("a")));
        assert_eq!(
            format!("{:?}", Word::spelled("/dev/fd/63", "<(...)")),
            r#"Word { value: "/dev/fd/63", raw: "<(...)", literal: false, quoted: false, glob: false, unresolved: false }"#
        );
        assert_eq!(
            format!("{:?}", Word::literal("a")),
            r#"Word { value: "a", raw: "a", literal: true, quoted: false, glob: false, unresolved: false }"#
        );
    }

    #[test]
    fn wrappers_unwrap() {
        let m = parse_string("sudo -u root nice -n 19 timeout 5 nohup rm -rf /", &ctx());
        let s = &m.segments[0];
        assert_eq!(s.program, "rm");
        assert!(s.escalated);
        assert_eq!(s.wrappers, ["sudo", "nice", "timeout", "nohup"]);
        assert_eq!(progs("env -i A=1 /bin/rm x"), ["rm"]);
        assert_eq!(progs("env -S 'rm -rf ~'"), ["rm"]);
        assert_eq!(progs("command rm x"), ["rm"]);
        assert_eq!(progs("busybox rm -rf x"), ["rm"]);
        assert_eq!(progs("\\rm x"), ["rm"]);
    }

    #[test]
    fn nested_shells_and_eval() {
        assert_eq!(progs("sh -lc 'rm -rf ~'"), ["rm"]);
        assert_eq!(progs("bash -c \"bash -c 'git push --force'\""), ["git"]);
        assert_eq!(progs("eval 'git status'"), ["git"]);
        assert_eq!(progs("bash <<<'rm -rf ~'"), ["rm"]);
        assert!(parse_string("echo 'rm -rf ~' | zsh", &ctx()).is_unknown());
        assert!(parse_string("eval \"$(printf x)\"", &ctx()).is_unknown());
    }

    #[test]
    fn substitutions_are_walked() {
        let m = parse_string("echo \"$(rm -rf ~/proj)\"", &ctx());
        assert!(m.constructs.substitution);
        assert!(m.segments.iter().any(|s| s.program == "rm"));
        let m = parse_string("diff <(rm -rf x) y", &ctx());
        assert!(m.constructs.process_substitution);
        assert!(m.segments.iter().any(|s| s.program == "rm"));
    }

    #[test]
    fn non_literal_programs_are_unknown() {
        for s in [
            "c=rm; $c -rf ~",
            "${x} a",
            "$(printf rm) -rf ~",
            "/???/r? -rf ~",
            "{rm,-rf,~}",
            "rm${IFS}-rf${IFS}~",
        ] {
            let m = parse_string(s, &ctx());
            assert!(
                m.is_unknown() || m.segments.iter().any(|s| s.program == "rm"),
                "{s}"
            );
        }
        assert!(parse_string("f(){ rm -rf ~; }; f", &ctx()).is_unknown());
        assert!(parse_string("((x=1))", &ctx()).is_unknown());
    }

    #[test]
    fn cwd_is_tracked() {
        let m = parse_string("mkdir -p build && cd build && rm -rf x", &ctx());
        assert_eq!(m.segments[2].cwd, PathBuf::from("/work/repo/build"));
        let m = parse_string("cd / && rm -rf x", &ctx());
        assert_eq!(m.segments[1].cwd, PathBuf::from("/"));
        let m = parse_string("(cd /tmp); ls", &ctx());
        assert_eq!(m.segments[1].cwd, PathBuf::from("/work/repo"));
    }

    #[test]
    fn find_exec_and_xargs_templates() {
        let m = parse_string("find . -name '*.o' -exec rm -f {} +", &ctx());
        assert_eq!(
            m.segments
                .iter()
                .map(|s| s.program.as_str())
                .collect::<Vec<_>>(),
            ["rm", "find"]
        );
        assert!(m.segments[0].template);
        let m = parse_string("echo ~ | xargs rm -rf", &ctx());
        assert!(m.segments[1].template);
        assert_eq!(m.segments[1].program, "rm");
    }

    #[test]
    fn redirections_resolve() {
        let m = parse_string("echo x > ~/.bashrc 2>/dev/null", &ctx());
        let r = &m.segments[0].redirections;
        assert_eq!(r[0].target, "/home/u/.bashrc");
        assert!(r[0].writes);
        assert_eq!(r[1].target, "/dev/null");
        let m = parse_string("cat <<'EOF'\nrm -rf /\nEOF", &ctx());
        assert_eq!(m.segments.len(), 1);
        assert_eq!(m.segments[0].stdin_data.as_deref(), Some("rm -rf /\n"));
    }

    #[test]
    fn bad_input_is_unknown_not_a_panic() {
        assert!(parse_string("echo 'unterminated", &ctx()).is_unknown());
        assert!(parse_string(&"(".repeat(10_000), &ctx()).is_unknown());
        let long = "a".repeat(2 * 1024 * 1024);
        assert!(parse_string(&long, &ctx()).is_unknown());
        let many = "true;".repeat(10_000);
        assert!(parse_string(&many, &ctx()).is_unknown());
        let mut nested = String::from("rm -rf ~");
        for _ in 0..12 {
            nested = format!("bash -c {}", crate::parse::shell::shell_quote(&nested));
        }
        assert!(parse_string(&nested, &ctx()).is_unknown());
    }
}
