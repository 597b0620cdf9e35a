//! `ps` forms that print other processes' environments (procps-ng's ps(1)):
//! the BSD `e` option (`ps eww`, `ps auxe`, `ps -ef e`) and an output
//! format with the `environ` column (`ps -o pid,environ`, `--format`).
//! They read what `/proc/PID/environ` holds (tokens the user's other
//! shells carry), which is refused as a secret read, so they are too.

use super::reason::ReasonId;
use super::{Decision, Layer, Verdict};

/// UNIX (`-x`) options of procps' ps that take a value (attached or the
/// next argument).
const UNIX_VALUE: &[u8] = b"CGgOopqsUutk";
/// BSD (no dash) options that take a value.
const BSD_VALUE: &[u8] = b"OopqtUk";
/// GNU long options that take a value (`--opt VALUE` or `--opt=VALUE`).
const GNU_VALUE: &[&str] = &[
    "--cols",
    "--columns",
    "--width",
    "--context",
    "--deselect-xx",
    "--format",
    "--group",
    "--Group",
    "--lines",
    "--rows",
    "--pid",
    "--ppid",
    "--quick-pid",
    "--sid",
    "--sort",
    "--tty",
    "--user",
    "--User",
    "--signames",
];

/// The spelling that prints environments, if `argv` (the `ps` segment's
/// words, `ps` first) has one.
pub(super) fn environment_form(argv: &[String]) -> Option<String> {
    // An argument with a shell operator in it (`ps aux | grep x` given as
    // an argv) is no ps option: ps reads all its arguments before it
    // prints anything, and exits on that one with a usage error.
    if argv
        .iter()
        .skip(1)
        .any(|a| a.contains(['|', '&', ';', '<', '>', '(', ')']))
    {
        return None;
    }
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (opt, attached) = match long.split_once('=') {
                Some((o, v)) => (format!("--{o}"), Some(v.to_string())),
                None => (a.to_string(), None),
            };
            if !GNU_VALUE.contains(&opt.as_str()) {
                continue;
            }
            let value = match attached {
                Some(v) => v,
                None => {
                    i += 1;
                    argv.get(i - 1).cloned().unwrap_or_default()
                }
            };
            if opt == "--format" && format_has_environ(&value) {
                return Some(format!("{opt} {value}"));
            }
            continue;
        }
        let (letters, values) = match a.strip_prefix('-') {
            Some(l) => (l, UNIX_VALUE),
            None => (a, BSD_VALUE),
        };
        // A BSD operand of digits is a process list (`ps 1234`).
        if values == BSD_VALUE && letters.bytes().all(|b| b.is_ascii_digit() || b == b',') {
            continue;
        }
        for (k, c) in letters.bytes().enumerate() {
            if values == BSD_VALUE && c == b'e' {
                return Some(format!("ps {a}"));
            }
            if values.contains(&c) {
                let rest = &letters[k + 1..];
                let value = if rest.is_empty() {
                    i += 1;
                    argv.get(i - 1).cloned().unwrap_or_default()
                } else {
                    rest.to_string()
                };
                if matches!(c, b'o' | b'O') && format_has_environ(&value) {
                    return Some(format!("ps {a}"));
                }
                break;
            }
        }
    }
    None
}

/// Whether a ps output format (`pid,comm`, `pid environ=E`, `environ:40`)
/// names the `environ` column.
fn format_has_environ(format: &str) -> bool {
    format
        .split([',', ' ', '\t'])
        .map(|spec| spec.split(['=', ':']).next().unwrap_or(""))
        .any(|name| name.eq_ignore_ascii_case("environ"))
}

/// Refuses a `ps` that prints other processes' environments, with the
/// reason `/proc/PID/environ` gets.
pub(super) fn check(argv: &[String], v: &mut Verdict) {
    let Some(form) = environment_form(argv) else {
        return;
    };
    v.add(
        Layer::Policy,
        ReasonId::RootsSecret,
        Decision::Deny,
        format!(
            "`{form}` prints other processes' environments: it reads `/proc/PID/environ`, inside the protected path `/proc/PID`"
        ),
        Some("leave secrets alone: `ps aux` or `ps -o pid,comm` list processes without their environments; ask the user for the value you need".into()),
    );
}

#[cfg(test)]
mod tests {
    use super::environment_form;

    fn form(s: &str) -> Option<String> {
        let argv: Vec<String> = s.split_whitespace().map(String::from).collect();
        environment_form(&argv)
    }

    #[test]
    fn environment_printing_forms() {
        for s in [
            "ps eww",
            "ps e",
            "ps auxe",
            "ps aux e",
            "ps axew",
            "ps e -p 1",
            "ps -ef e",
            "ps -p 1 e",
            "ps -o environ",
            "ps -o pid,environ -p 1",
            "ps -opid,environ",
            "ps -efo environ",
            "ps -O environ",
            "ps axo pid,environ",
            "ps o environ=E",
            "ps --format pid,environ",
            "ps --format=environ:40",
            "ps -o ENVIRON",
        ] {
            assert!(form(s).is_some(), "{s}");
        }
    }

    #[test]
    fn ordinary_forms() {
        for s in [
            "ps",
            "ps aux",
            "ps -ef",
            "ps -e",
            "ps -eo pid,comm",
            "ps -o pid,comm",
            "ps -o pid,cmd -p 1",
            "ps -u root",
            "ps -U e",
            "ps -C sleep",
            "ps -p 1",
            "ps 1234",
            "ps axo pid,etime,args",
            "ps --sort=-%mem aux",
            "ps --pid 1",
            "ps -t pts/0",
            "ps -o comm= -p 1",
            "ps --format pid,ppid",
            "ps -C e",
            "ps -G e",
            "ps aux | grep e",
            "ps -ef 2>/dev/null",
        ] {
            assert_eq!(form(s), None, "{s}");
        }
    }
}
