//! What an awk program does besides reading its input (issue 13): runs
//! commands (`system()`, pipes), reads files (`getline < FILE`), writes
//! files (`print > FILE`, `printf >> FILE`), changes which files it reads
//! (`ARGV[1] = ...`, `ARGC = ...`) or loads code (`@load`, `@include`).
//! File names that are string constants are returned for the path checks;
//! any other file expression is reported as not literal (fail closed).

use std::sync::OnceLock;

use regex::Regex;

/// What an awk program does besides reading its input.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Runs commands.
    pub exec: bool,
    /// Loads code or changes its input list: not checkable.
    pub unknown: Option<String>,
    /// Files it reads by name.
    pub reads: Vec<String>,
    /// Files it writes by name.
    pub writes: Vec<String>,
}

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// `"..."` → its contents, or `None` for any other expression.
fn string_constant(expr: &str) -> Option<String> {
    let e = expr.trim();
    let inner = e.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('"') {
        return None;
    }
    Some(inner.replace("\\\\", "\\"))
}

/// Reads an awk program.
pub fn effects(program: &str) -> Effects {
    static EXEC: OnceLock<Option<Regex>> = OnceLock::new();
    static LOAD: OnceLock<Option<Regex>> = OnceLock::new();
    static ARGV: OnceLock<Option<Regex>> = OnceLock::new();
    static GETLINE: OnceLock<Option<Regex>> = OnceLock::new();
    static PRINT: OnceLock<Option<Regex>> = OnceLock::new();
    let mut out = Effects::default();
    let (Some(exec), Some(load), Some(argv), Some(getline), Some(print)) = (
        re(
            &EXEC,
            r#"system\s*\(|\|&|\|\s*getline|(print|printf)\b[^;}]*\|"#,
        ),
        re(&LOAD, r"@\s*(load|include|namespace)\b"),
        re(
            &ARGV,
            r"\b(ARGV\s*\[[^\]]*\]|ARGC)\s*([-+*/%^]?=[^=]|\+\+|--)|(\+\+|--)\s*ARGC|\bsplit\s*\([^)]*ARGV|\bdelete\s+ARGV",
        ),
        re(
            &GETLINE,
            r#"getline\b[^;{}\n|]*?<\s*("(?:[^"\\]|\\.)*"|[^;}\s)]+)"#,
        ),
        re(
            &PRINT,
            r#"\b(?:print|printf)\b[^;{}\n]*?>>?\s*("(?:[^"\\]|\\.)*"|[^;}\s)]+)"#,
        ),
    ) else {
        out.unknown = Some("the awk program checks could not be built".into());
        return out;
    };
    out.exec = exec.is_match(program);
    if load.is_match(program) {
        out.unknown = Some("the awk program loads other code (`@load`, `@include`)".into());
    } else if argv.is_match(program) {
        out.unknown = Some("the awk program changes which files it reads (`ARGV`, `ARGC`)".into());
    }
    for c in getline.captures_iter(program) {
        let expr = c.get(1).map_or("", |m| m.as_str());
        match string_constant(expr) {
            Some(f) => out.reads.push(f),
            None => {
                out.unknown.get_or_insert_with(|| {
                    format!(
                        "the awk program reads a file named by `{expr}`, which is not a constant"
                    )
                });
            }
        }
    }
    for c in print.captures_iter(program) {
        let expr = c.get(1).map_or("", |m| m.as_str());
        match string_constant(expr) {
            Some(f) => out.writes.push(f),
            None => {
                out.unknown.get_or_insert_with(|| {
                    format!(
                        "the awk program writes a file named by `{expr}`, which is not a constant"
                    )
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_exec_and_input_changes() {
        assert_eq!(
            effects(r#"{getline l < "/etc/shadow"; print l}"#).reads,
            ["/etc/shadow"]
        );
        assert!(effects(r#"{getline l < f}"#).unknown.is_some());
        assert_eq!(effects(r#"{print > "out.txt"}"#).writes, ["out.txt"]);
        assert_eq!(
            effects(r#"{printf "%s", $1 >> "/tmp/x"}"#).writes,
            ["/tmp/x"]
        );
        assert!(effects(r#"{print > $2}"#).unknown.is_some());
        for p in [
            r#"BEGIN{ARGV[1]="/etc/shadow"} {print}"#,
            "BEGIN{ARGC=3}",
            "BEGIN{ARGV[ARGC++]=x}",
            "@load \"filefuncs\"",
            "@include \"x.awk\"",
        ] {
            assert!(effects(p).unknown.is_some(), "{p}");
        }
        assert!(effects(r#"{system("id")}"#).exec);
        assert!(effects(r#"{print | "sh"}"#).exec);
        assert!(effects(r#"{"id" | getline x}"#).exec);
        for p in [
            "{print $1}",
            "NR > 1 {print}",
            "{if ($1 > 3) print $2}",
            "{s += $1} END {print s}",
            "BEGIN{FS=\":\"} {print $1}",
        ] {
            let e = effects(p);
            assert!(
                !e.exec && e.unknown.is_none() && e.reads.is_empty() && e.writes.is_empty(),
                "{p}: {e:?}"
            );
        }
    }
}
