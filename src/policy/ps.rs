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

/// UNIX options whose letters alone cannot make the UNIX reading fail.
const UNIX_SURE: &[u8] = b"AacdeFfHjLlMmNnPTVwXZ";
/// Letters procps' BSD reading accepts; another one makes it fail (and
/// ps print nothing).
const BSD_KNOWN: &[u8] = b"-AaCcefghHjkLlMmnNOopqrSsTtUuVvwXxZ";

/// The spelling that prints environments, if `argv` (the `ps` segment's
/// words, `ps` first) has one. procps reads the arguments a second time
/// when the UNIX reading fails (`-aux` is `-a -u x`; user `x` missing:
/// read as BSD `aux`), and then a dash argument's letters are BSD options
/// (`-auxe`, `-axe`: BSD `e`): when the UNIX reading may fail, that BSD
/// reading is judged too.
pub(super) fn environment_form(argv: &[String]) -> Option<String> {
    reading(argv, false).or_else(|| {
        if unix_may_fail(argv) {
            reading(argv, true)
        } else {
            None
        }
    })
}

/// Whether procps' UNIX reading of `argv` may fail (and ps fall back to
/// reading every argument as BSD options): a dash argument with a letter
/// other than the flags that always parse, or a user or group name that
/// may not exist (`-u x`), a process list that is not numbers, `-x`/`-y`
/// without `-l`. Formats, commands and ttys are taken to parse.
fn unix_may_fail(argv: &[String]) -> bool {
    // `-y` (and `-x`, its Unixware spelling) is refused without `-l`.
    let long_format = argv
        .iter()
        .skip(1)
        .any(|a| !a.starts_with("--") && a.starts_with('-') && a.contains('l'));
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        i += 1;
        if a.starts_with("--") {
            if !a.contains('=') && GNU_VALUE.contains(&a) {
                i += 1;
            }
            continue;
        }
        let Some(letters) = a.strip_prefix('-') else {
            continue;
        };
        if letters.is_empty() {
            return true;
        }
        for (k, c) in letters.bytes().enumerate() {
            if UNIX_SURE.contains(&c) || (matches!(c, b'x' | b'y') && long_format) {
                continue;
            }
            if !UNIX_VALUE.contains(&c) {
                return true;
            }
            let rest = &letters[k + 1..];
            let value = if rest.is_empty() {
                i += 1;
                argv.get(i - 1).map(String::as_str).unwrap_or_default()
            } else {
                rest
            };
            let numbers = !value.is_empty()
                && value
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b',' | b' '));
            if matches!(c, b'u' | b'U' | b'g' | b'G' | b'p' | b'q' | b's') && !numbers {
                return true;
            }
            break;
        }
    }
    false
}

/// The spelling that prints environments in one reading of `argv`: the
/// UNIX one (dash arguments are UNIX options), or, `force_bsd`, procps'
/// second reading (dash arguments are BSD options too; an unknown BSD
/// letter fails it, and ps prints nothing).
fn reading(argv: &[String], force_bsd: bool) -> Option<String> {
    // The second reading prints only when every argument passes it: its
    // first spelling is kept until the end.
    let mut found = None;
    macro_rules! hit {
        ($form:expr) => {{
            let form = $form;
            if !force_bsd {
                return Some(form);
            }
            found.get_or_insert(form);
        }};
    }
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
                hit!(format!("{opt} {value}"));
            }
            continue;
        }
        // In procps' second reading, an argument without a dash (that is
        // no option's value) fails it: ps prints only the first error.
        if force_bsd && !a.starts_with('-') {
            return None;
        }
        let (letters, values) = match a.strip_prefix('-') {
            Some(l) if !force_bsd => (l, UNIX_VALUE),
            Some(l) => (l, BSD_VALUE),
            None => (a, BSD_VALUE),
        };
        if force_bsd
            && !letters
                .bytes()
                .all(|b| BSD_KNOWN.contains(&b) || b.is_ascii_digit() || b == b',')
        {
            return None;
        }
        // A BSD operand of digits is a process list (`ps 1234`).
        if values == BSD_VALUE && letters.bytes().all(|b| b.is_ascii_digit() || b == b',') {
            continue;
        }
        for (k, c) in letters.bytes().enumerate() {
            if values == BSD_VALUE && c == b'e' {
                hit!(format!("ps {a}"));
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
                    hit!(format!("ps {a}"));
                }
                break;
            }
        }
    }
    found
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
            // Read again as BSD options when the UNIX reading fails.
            "ps -auxe",
            "ps -axe",
            "ps -aexu",
            "ps -xe",
            "ps -ae -x",
            "ps -e -x -p 1",
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
            "ps -aux",
            "ps -ax",
            "ps -axu",
            "ps -ef -u 0",
            "ps -ef -p 1",
            "ps -elyf",
            "ps -u root -o pid,comm",
            "ps -eF",
            "ps -e -G e",
            // The second reading fails on an argument without a dash.
            "ps -ae -u nobody-such",
            "ps -e -u x",
            "ps -eyw",
            "ps -xe -C e",
            "ps -aexu 0",
        ] {
            assert_eq!(form(s), None, "{s}");
        }
    }
}
