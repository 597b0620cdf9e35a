//! Wrapper removal: `sudo`, `env`, `nice`, `timeout`, `xargs`, ... run the
//! program named in their arguments. The table of wrappers is data
//! (`profiles/wrappers.toml`, embedded); this module applies it to one
//! segment's words and says what it removed.

use serde::Deserialize;

use super::model::{Assignment, Word};

/// How one wrapper program treats its arguments (see `profiles/wrappers.toml`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WrapperSpec {
    /// Options without a value.
    pub flags: Vec<String>,
    /// Options that take a value.
    pub value_options: Vec<String>,
    /// Options whose value is optional and only ever attached (`-iR`,
    /// `--replace=R`, getopt's `optional_argument`): alone they take no
    /// value and the next word is not theirs (`xargs -i sh x` runs `sh`).
    /// An option here may also be named in one other value list
    /// (`write_files`, `replace_options`), which says what its value is.
    pub optional_value_options: Vec<String>,
    /// Options whose value is the replacement string the wrapper puts the
    /// input into, anywhere inside the command's words (`xargs -I R`,
    /// `-i[R]`, `--replace[=R]`).
    pub replace_options: Vec<String>,
    /// The replacement string of a `replace_options` option given without
    /// its optional value (`xargs -i` -> `{}`).
    pub replace_default: Option<String>,
    /// Operands before the wrapped command.
    pub leading_operands: usize,
    /// Raises privileges.
    pub escalates: bool,
    /// `NAME=value` words before the command set its environment.
    pub assignments: bool,
    /// Options whose value is re-split into a command line (`env -S`).
    pub split_string: Vec<String>,
    /// Options whose value becomes the working directory.
    pub chdir: Vec<String>,
    /// Options whose value is a file the wrapper reads (`xargs -a FILE`).
    pub read_files: Vec<String>,
    /// Options whose value is a file the wrapper writes (`strace -o FILE`,
    /// `time -o FILE`, `script -t FILE`): checked like `> FILE`.
    pub write_files: Vec<String>,
    /// Options whose value names a variable the wrapper sets for the
    /// command (`xargs --process-slot-var NAME`): checked like `NAME=...`.
    pub env_name_options: Vec<String>,
    /// With `shell_string_only`, the remaining operands are files the
    /// wrapper writes (`script [FILE]`).
    pub operand_writes: bool,
    /// The leading operands are files the wrapper creates or opens for
    /// writing (`flock FILE CMD`), checked like `> FILE`; a number is a
    /// file descriptor (`flock 9`), not a file.
    pub leading_writes: bool,
    /// Options whose value is a shell string (`su -c`, `script -c`).
    pub shell_string: Vec<String>,
    /// Remaining operands are not a command (only the `-c` string runs).
    pub shell_string_only: bool,
    /// The remaining words are joined and run by `sh -c` (`watch`).
    pub joins_to_shell: bool,
    /// The command gets more arguments at run time (`xargs`).
    pub template: bool,
    /// Without a command an interactive shell starts.
    pub no_command_is_shell: bool,
    /// Accepts `-NUMBER` (`nice -5`).
    pub numeric_flag: bool,
    /// Flags that only look the command up (`command -v`).
    pub query_flags: Vec<String>,
    /// The command run when none is given (`xargs` runs `echo`).
    pub default_command: Option<String>,
    /// Without a command the wrapper only prints (`env` alone lists the environment).
    pub lookup_only_without_command: bool,
    /// Without a command the wrapper runs nothing and reads no commands
    /// (it prints a usage error or its own state: `nice`, `timeout`). A
    /// wrapper that declares none of `no_command_is_shell`,
    /// `default_command`, `lookup_only_without_command` and this is not
    /// known to be harmless without a command, and such a use is unknown.
    pub no_command_ok: bool,
}

/// What unwrapping one wrapper produced.
#[derive(Debug, Clone, Default)]
pub struct Unwrapped {
    /// The words of the wrapped command (empty when there is none).
    pub rest: Vec<Word>,
    /// Assignments given to the wrapper (`env A=1 cmd`).
    pub assignments: Vec<Assignment>,
    /// New working directory (`env -C DIR`, `sudo -D DIR`).
    pub chdir: Option<Word>,
    /// Files the wrapper itself reads (`xargs -a FILE`): checked as reads.
    pub reads: Vec<Word>,
    /// Files the wrapper itself writes (`strace -o FILE`).
    pub writes: Vec<Word>,
    /// A shell string the wrapper hands to a shell (`su -c`, `watch`, `env -S`
    /// is re-split, not a shell, but is modelled the same way).
    pub shell_string: Option<Word>,
    /// The shell string came from `env -S` and is split by env's own rules
    /// ([`env_split`]), not parsed by a shell.
    pub split: bool,
    /// The command gets arguments at run time.
    pub template: bool,
    /// Replacement strings (`xargs -I R`): every occurrence inside the
    /// command's words is replaced by input at run time.
    pub replace: Vec<String>,
    /// Nothing is executed (`command -v x`, `env` alone).
    pub lookup_only: bool,
    /// The words named no command (what `rest` holds is the wrapper's
    /// default, `xargs` alone runs `echo`).
    pub no_command: bool,
    /// An interactive shell would start.
    pub interactive_shell: bool,
    /// Why the wrapper's arguments could not be modelled.
    pub unknown: Option<String>,
}

/// Applies `spec` to the words after the wrapper's own name.
pub fn unwrap(name: &str, spec: &WrapperSpec, args: &[Word]) -> Unwrapped {
    let mut out = Unwrapped {
        template: spec.template,
        ..Default::default()
    };
    let mut i = 0;
    let mut leading = spec.leading_operands;
    let mut options_done = false;
    while i < args.len() {
        let w = &args[i];
        let a = w.value.as_str();
        if !options_done && a == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if !options_done && a.starts_with('-') && a.len() > 1 {
            if spec.query_flags.iter().any(|f| f == a) {
                out.lookup_only = true;
                i += 1;
                continue;
            }
            if spec.flags.iter().any(|f| f == a) {
                i += 1;
                continue;
            }
            if spec.numeric_flag && a[1..].chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            // Options that take a value, in `-o v`, `-ov`, `--opt=v` and `--opt v` forms.
            let kinds: [(&Vec<String>, u8); 9] = [
                (&spec.value_options, 0),
                (&spec.split_string, 1),
                (&spec.chdir, 2),
                (&spec.shell_string, 3),
                (&spec.query_flags, 4),
                (&spec.read_files, 5),
                (&spec.write_files, 6),
                (&spec.env_name_options, 7),
                (&spec.optional_value_options, 0),
            ];
            let mut matched = None;
            for (list, kind) in kinds {
                for opt in list {
                    if a == opt {
                        matched = Some((kind, None, opt.as_str()));
                    } else if let Some(v) = a.strip_prefix(opt.as_str()) {
                        if opt.starts_with("--") && v.starts_with('=') {
                            matched = Some((kind, Some(v[1..].to_string()), opt.as_str()));
                        } else if !opt.starts_with("--") && opt.len() == 2 && !v.is_empty() {
                            matched = Some((kind, Some(v.to_string()), opt.as_str()));
                        }
                    }
                    if matched.is_some() {
                        break;
                    }
                }
                if matched.is_some() {
                    break;
                }
            }
            // Clusters of known short flags (`sudo -nE`).
            if matched.is_none() && !a.starts_with("--") {
                let all_flags = a[1..]
                    .chars()
                    .all(|c| spec.flags.iter().any(|f| f.len() == 2 && f.ends_with(c)));
                if all_flags {
                    i += 1;
                    continue;
                }
            }
            let Some((kind, attached, opt)) = matched else {
                out.unknown = Some(format!("`{name}` option `{a}` is not modelled"));
                return out;
            };
            let replaces = spec.replace_options.iter().any(|o| o == opt);
            if attached.is_none() && spec.optional_value_options.iter().any(|o| o == opt) {
                // An optional value is attached or absent: the next word
                // is not this option's (review 12, F1, F2).
                if replaces && let Some(d) = &spec.replace_default {
                    out.replace.push(d.clone());
                }
                i += 1;
                continue;
            }
            let value = match attached {
                Some(v) => {
                    // (The option word's spelling, with the attached value.)
                    i += 1;
                    w.with_value(v)
                }
                None => {
                    let Some(v) = args.get(i + 1) else {
                        out.unknown = Some(format!("`{name}` option `{a}` is missing its value"));
                        return out;
                    };
                    i += 2;
                    v.clone()
                }
            };
            if replaces {
                if value.unresolved {
                    out.unknown = Some(format!(
                        "`{name}` option `{a}` is given a replacement string that is not literal"
                    ));
                    return out;
                }
                out.replace.push(value.value.clone());
            }
            match kind {
                1 => {
                    out.split = true;
                    out.shell_string = Some(value);
                    // env -S: the string *is* the command plus the remaining words.
                    out.rest = args[i..].to_vec();
                    return out;
                }
                2 => out.chdir = Some(value),
                5 => out.reads.push(value),
                6 => out.writes.push(value),
                7 => out.assignments.push(Assignment {
                    name: value.value.clone(),
                    value: "0".into(),
                }),
                3 => out.shell_string = Some(value),
                _ => {}
            }
            continue;
        }
        if spec.assignments
            && !options_done
            && let Some((n, v)) = a.split_once('=')
            && is_name(n)
        {
            out.assignments.push(Assignment {
                name: n.to_string(),
                value: v.to_string(),
            });
            i += 1;
            continue;
        }
        if leading > 0 {
            // Wrappers stop reading options at their first operand.
            if spec.leading_writes && !a.bytes().all(|b| b.is_ascii_digit()) {
                out.writes.push(w.clone());
            }
            leading -= 1;
            i += 1;
            options_done = true;
            continue;
        }
        break;
    }
    if spec.shell_string_only {
        // `su -c STRING user`, `script -c STRING file`: the rest are not a command.
        let mut operands = &args[i..];
        if spec.operand_writes
            && let Some(dash) = operands.iter().position(|w| w.value == "--")
        {
            // `script [FILE] -- COMMAND [ARG...]` (util-linux 2.39 and
            // later): the words after `--` are the command.
            let command = &operands[dash + 1..];
            out.writes.extend(operands[..dash].iter().cloned());
            operands = &[];
            if !command.is_empty() {
                if out.shell_string.is_some() {
                    out.unknown = Some(format!(
                        "`{name}` is given both a command string and a command"
                    ));
                    return out;
                }
                out.rest = command.to_vec();
                return out;
            }
        }
        if out.shell_string.is_none() {
            if spec.no_command_is_shell {
                out.interactive_shell = true;
            } else if !spec.no_command_ok {
                out.unknown = Some(no_command_unknown(name));
            }
        }
        if spec.operand_writes {
            out.writes.extend(operands.iter().cloned());
        }
        return out;
    }
    out.rest = args[i..].to_vec();
    if spec.joins_to_shell && !out.rest.is_empty() {
        let joined = out
            .rest
            .iter()
            .map(|w| w.value.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let literal = out.rest.iter().all(|w| !w.unresolved);
        // (Spelled as its value.)
        let mut word = Word::literal(joined);
        word.literal = literal;
        word.unresolved = !literal;
        out.shell_string = Some(word);
        out.rest.clear();
        return out;
    }
    if out.rest.is_empty() && out.shell_string.is_none() {
        out.no_command = true;
        if let Some(d) = &spec.default_command {
            out.rest = vec![Word::literal(d.clone())];
        } else if spec.no_command_is_shell {
            out.interactive_shell = true;
        } else if spec.lookup_only_without_command {
            out.lookup_only = true;
        } else if !spec.no_command_ok {
            out.unknown = Some(no_command_unknown(name));
        }
    }
    out
}

impl WrapperSpec {
    /// Checks the spec's option lists against each other (run by the build
    /// script over profiles/wrappers.toml, so a broken entry fails the
    /// build): an option has one meaning, an optional value is spelled
    /// attached (`-iR`, `--replace=R`), and a replacement option takes a
    /// value.
    pub fn validate(&self) -> Result<(), String> {
        let kinds: [(&str, &Vec<String>); 9] = [
            ("flags", &self.flags),
            ("value_options", &self.value_options),
            ("split_string", &self.split_string),
            ("chdir", &self.chdir),
            ("shell_string", &self.shell_string),
            ("query_flags", &self.query_flags),
            ("read_files", &self.read_files),
            ("write_files", &self.write_files),
            ("env_name_options", &self.env_name_options),
        ];
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for (kind, list) in kinds {
            for o in list {
                if !o.starts_with('-') {
                    return Err(format!("{kind}: `{o}` is not an option"));
                }
                if let Some((_, k)) = seen.iter().find(|(s, _)| *s == o.as_str()) {
                    return Err(format!("`{o}` is in both {k} and {kind}"));
                }
                seen.push((o.as_str(), kind));
            }
        }
        for o in &self.optional_value_options {
            let short = o.len() == 2 && o.starts_with('-') && !o.starts_with("--");
            let long = o.len() > 2 && o.starts_with("--");
            if !short && !long {
                return Err(format!(
                    "optional_value_options: `{o}` is neither `-X` nor `--long`"
                ));
            }
            if let Some((_, k)) = seen.iter().find(|(s, _)| *s == o.as_str())
                && matches!(*k, "flags" | "query_flags" | "value_options")
            {
                return Err(format!("`{o}` is in both {k} and optional_value_options"));
            }
        }
        for o in &self.replace_options {
            let optional = self.optional_value_options.contains(o);
            if !optional && !self.value_options.contains(o) {
                return Err(format!(
                    "replace_options: `{o}` is in neither value_options nor optional_value_options"
                ));
            }
            if optional && self.replace_default.is_none() {
                return Err(format!(
                    "replace_options: `{o}` takes an optional value but replace_default is not set"
                ));
            }
        }
        Ok(())
    }
}

/// Why a wrapper given no command is not modelled.
fn no_command_unknown(name: &str) -> String {
    format!("what `{name}` does without a command is not modelled")
}

/// Whether `spec` says what the wrapper does when given no command.
pub fn no_command_declared(spec: &WrapperSpec) -> bool {
    spec.no_command_is_shell
        || spec.no_command_ok
        || spec.default_command.is_some()
        || spec.lookup_only_without_command
}

/// A shell variable name.
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Shells whose `-c STRING` is parsed as a nested command.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh",
];

/// What a shell invocation's arguments mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellArgs {
    /// `bash -c STRING [NAME [ARG...]]`
    Command {
        /// The index of the string in the arguments.
        string: usize,
    },
    /// `bash script.sh ...` (runs a file the validator cannot see).
    Script {
        /// The index of the script operand.
        script: usize,
    },
    /// `bash` or `bash -s`: reads commands from standard input.
    Stdin,
    /// Options we do not model.
    Unknown(String),
}

/// Reads bash-style options (`-c`, `-lc`, `-e -c`, `--login`, `-o opt`).
pub fn shell_args(args: &[Word]) -> ShellArgs {
    let mut i = 0;
    let mut has_c = false;
    while i < args.len() {
        let a = args[i].value.as_str();
        match a {
            "--" => {
                i += 1;
                break;
            }
            "--login" | "--noprofile" | "--norc" | "--posix" | "--restricted" | "--verbose"
            | "--noediting" | "--debugger" | "--dump-strings" | "--pretty-print" => {
                i += 1;
                continue;
            }
            "--rcfile" | "--init-file" => {
                // An interactive shell runs that file first: its commands
                // cannot be checked.
                return ShellArgs::Unknown(format!(
                    "`{a}` makes the shell run a startup file whose commands cannot be checked"
                ));
            }
            "-o" | "+o" | "-O" | "+O" => {
                i += 2;
                continue;
            }
            _ => {}
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 && !a.starts_with("--") {
            let letters = &a[1..];
            if letters
                .chars()
                .all(|c| "abcefhiklmnprstuvxBCEHPT".contains(c))
            {
                if letters.contains('c') {
                    has_c = true;
                }
                if letters.contains('s') && !has_c {
                    return ShellArgs::Stdin;
                }
                i += 1;
                continue;
            }
            return ShellArgs::Unknown(format!("shell option `{a}` is not modelled"));
        }
        if a.starts_with("--") {
            return ShellArgs::Unknown(format!("shell option `{a}` is not modelled"));
        }
        break;
    }
    if has_c {
        if i < args.len() {
            ShellArgs::Command { string: i }
        } else {
            ShellArgs::Unknown("`-c` without a command string".into())
        }
    } else if i < args.len() {
        if is_stdin_path(&args[i].value) {
            ShellArgs::Stdin
        } else {
            ShellArgs::Script { script: i }
        }
    } else {
        ShellArgs::Stdin
    }
}

/// Operands that name standard input (`sh -`, `bash /dev/stdin`): the
/// program then reads its code from there.
pub fn is_stdin_path(s: &str) -> bool {
    matches!(s, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<Word> {
        s.iter().map(|w| Word::literal(*w)).collect()
    }

    fn spec(toml_text: &str) -> WrapperSpec {
        toml::from_str(toml_text).expect("spec")
    }

    #[test]
    fn sudo_options_and_command() {
        let s = spec(
            r#"flags=["-n","-E"]
value_options=["-u"]
escalates=true"#,
        );
        let u = unwrap("sudo", &s, &words(&["-u", "root", "-nE", "rm", "-rf", "/"]));
        assert_eq!(
            u.rest.iter().map(|w| w.value.as_str()).collect::<Vec<_>>(),
            ["rm", "-rf", "/"]
        );
        let u = unwrap("sudo", &s, &words(&["-uroot", "ls"]));
        assert_eq!(u.rest[0].value, "ls");
        let u = unwrap("sudo", &s, &words(&["-X", "ls"]));
        assert!(u.unknown.is_some());
    }

    /// Optional values (getopt's `optional_argument`) are attached only:
    /// `xargs -i sh x` runs `sh` (review 12, F1); `-iR`/`--replace=R`
    /// give the replacement string, `-i` alone gives the default.
    #[test]
    fn optional_values_are_attached_only() {
        let s = spec(
            r#"value_options=["-I"]
optional_value_options=["-i","--replace","-l"]
replace_options=["-I","-i","--replace"]
replace_default="{}"
template=true"#,
        );
        s.validate().expect("valid");
        let rest = |u: &Unwrapped| u.rest.iter().map(|w| w.value.clone()).collect::<Vec<_>>();
        let u = unwrap("xargs", &s, &words(&["-i", "sh", "echo"]));
        assert_eq!(rest(&u), ["sh", "echo"]);
        assert_eq!(u.replace, ["{}"]);
        let u = unwrap("xargs", &s, &words(&["--replace", "sh", "echo"]));
        assert_eq!(rest(&u), ["sh", "echo"]);
        let u = unwrap("xargs", &s, &words(&["-l", "sh", "echo"]));
        assert_eq!(rest(&u), ["sh", "echo"]);
        assert!(u.replace.is_empty());
        let u = unwrap("xargs", &s, &words(&["-iR", "echo", "R"]));
        assert_eq!(rest(&u), ["echo", "R"]);
        assert_eq!(u.replace, ["R"]);
        let u = unwrap("xargs", &s, &words(&["--replace=%", "echo"]));
        assert_eq!(u.replace, ["%"]);
        let u = unwrap("xargs", &s, &words(&["-I", "X", "sh"]));
        assert_eq!(rest(&u), ["sh"]);
        assert_eq!(u.replace, ["X"]);
    }

    /// The build refuses a spec whose option lists contradict each other.
    #[test]
    fn validate_refuses_contradictions() {
        for bad in [
            r#"flags=["-i"]
optional_value_options=["-i"]"#,
            r#"value_options=["-i"]
optional_value_options=["-i"]"#,
            r#"flags=["-u"]
value_options=["-u"]"#,
            r#"optional_value_options=["-ab"]"#,
            r#"optional_value_options=["x"]"#,
            r#"replace_options=["-I"]"#,
            r#"optional_value_options=["-i"]
replace_options=["-i"]"#,
        ] {
            assert!(spec(bad).validate().is_err(), "{bad}");
        }
        spec(
            r#"optional_value_options=["-t"]
write_files=["-t"]"#,
        )
        .validate()
        .expect("an optional write file is valid");
    }

    /// Every option the tools' own `--help` shows with an optional value
    /// (`-x[ARG]`, `--long[=ARG]`) is declared attached-only in the
    /// built-in wrappers, or not modelled at all (then it is unknown).
    /// The help lines are GNU findutils 4.9.0 xargs, coreutils 9.1 env,
    /// procps-ng watch, util-linux 2.38.1 script and strace 6.x.
    #[test]
    fn optional_values_of_the_tools_help_are_declared() {
        const HELP: &[(&str, &str)] = &[
            (
                "xargs",
                "  -e, --eof[=END]              equivalent to -E END",
            ),
            (
                "xargs",
                "  -i, --replace[=R]            replace R in INITIAL-ARGS",
            ),
            ("xargs", "  -l[MAX-LINES]                similar to -L"),
            (
                "xargs",
                "  -L, --max-lines=MAX-LINES    use at most MAX-LINES",
            ),
            ("env", "      --block-signal[=SIG]    block delivery of SIG"),
            ("env", "      --default-signal[=SIG]  reset handling of SIG"),
            ("env", "      --ignore-signal[=SIG]   set handling of SIG"),
            ("watch", "  -d, --differences[=<permanent>]"),
            (
                "script",
                " -t[<file>], --timing[=<file>] deprecated alias to -T",
            ),
            ("strace", "  -D, --daemonize[=grandchild]"),
            ("strace", "  -r, --relative-timestamps[=PRECISION]"),
            ("strace", "  -y, --decode-fds[=path]"),
        ];
        // `xargs --max-lines` is optional too (getopt's table; its help
        // line shows `=`): `echo x | xargs --max-lines echo hi` prints `hi x`.
        let extra = [("xargs", "--max-lines")];
        let mut fails = Vec::new();
        let mut check = |tool: &str, opt: &str| {
            let Some(s) = crate::parse::wrapper_spec(tool) else {
                return;
            };
            let listed = [
                &s.flags,
                &s.value_options,
                &s.split_string,
                &s.chdir,
                &s.shell_string,
                &s.query_flags,
                &s.read_files,
                &s.write_files,
                &s.env_name_options,
            ]
            .iter()
            .any(|l| l.iter().any(|o| o == opt));
            let optional = s.optional_value_options.iter().any(|o| o == opt);
            // A short option given as a flag takes no value: right for
            // strace's short `-r` (its optional value is the long form's).
            let strace_short = tool == "strace" && !opt.starts_with("--");
            if listed && !optional && !strace_short {
                fails.push(format!("{tool} {opt}"));
            }
        };
        for (tool, line) in HELP {
            for tok in line.split([' ', ',']).filter(|t| t.starts_with('-')) {
                if let Some(i) = tok.find('[') {
                    check(tool, &tok[..i]);
                    // `-e, --eof[=END]`: the short form of an optional
                    // long one is optional too.
                    if let Some((short, _)) = line.trim_start().split_once(", ")
                        && short.len() == 2
                        && *tool != "strace"
                    {
                        check(tool, short);
                    }
                }
            }
        }
        for (tool, opt) in extra {
            check(tool, opt);
        }
        assert!(fails.is_empty(), "not attached-only: {fails:?}");
    }

    /// Every built-in wrapper passes the build's validation.
    #[test]
    fn builtin_wrappers_validate() {
        for (name, _) in crate::builtin::WRAPPERS {
            let s = crate::parse::wrapper_spec(name).expect("spec");
            s.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// Programs that start a shell reading standard input when given no
    /// command (their man pages): each one that is a built-in wrapper must
    /// say so, and every built-in wrapper declares what it does without a
    /// command (red team 9, F8: `printf 'rm -rf ~' | script -q /dev/null`).
    #[test]
    fn wrappers_declare_what_no_command_does() {
        const SHELL_WITHOUT_COMMAND: &[&str] = &[
            "sudo",
            "doas",
            "pkexec",
            "run0",
            "su",
            "runuser",
            "script",
            "chroot",
            "systemd-run",
            "unshare",
            "nsenter",
            "setarch",
            "linux32",
            "linux64",
            "newgrp",
            "sg",
            "firejail",
            "flatpak-spawn",
            "setpriv",
            "bwrap",
            "toolbox",
            "distrobox",
            "machinectl",
            "systemd-nspawn",
            "schroot",
            "fakeroot",
            "proot",
            "dbus-run-session",
        ];
        for (name, _) in crate::builtin::WRAPPERS {
            let spec = crate::parse::wrapper_spec(name).expect("spec");
            // The ones that declare nothing are judged unknown without a command.
            if !no_command_declared(&spec) {
                assert!(["strace", "ltrace"].contains(name), "{name}");
            }
            if SHELL_WITHOUT_COMMAND.contains(name) {
                assert!(
                    spec.no_command_is_shell,
                    "{name} starts a shell without a command"
                );
            }
        }
        for name in ["script", "chroot", "sudo", "su"] {
            assert!(crate::parse::wrapper_spec(name).is_some(), "{name}");
        }
    }

    #[test]
    fn script_without_command_is_a_shell() {
        let s = crate::parse::wrapper_spec("script").expect("script");
        for args in [
            &["-q", "/dev/null"][..],
            &[],
            &["log"],
            &["-E", "never", "-q", "/dev/null"],
            &["-q", "/dev/null", "--"],
        ] {
            let u = unwrap("script", &s, &words(args));
            assert!(u.interactive_shell, "{args:?}");
        }
        let u = unwrap("script", &s, &words(&["-q", "-c", "ls", "/dev/null"]));
        assert!(!u.interactive_shell);
        assert_eq!(u.shell_string.map(|w| w.value), Some("ls".to_string()));
        let u = unwrap("script", &s, &words(&["-q", "log", "--", "rm", "-rf", "x"]));
        assert_eq!(
            u.rest.iter().map(|w| w.value.as_str()).collect::<Vec<_>>(),
            ["rm", "-rf", "x"]
        );
        assert_eq!(u.writes[0].value, "log");
        let u = unwrap("script", &s, &words(&["-c", "ls", "log", "--", "id"]));
        assert!(u.unknown.is_some());
    }

    #[test]
    fn undeclared_no_command_is_unknown() {
        let u = unwrap(
            "strace",
            &spec(r#"value_options=["-p"]"#),
            &words(&["-p", "1"]),
        );
        assert!(u.unknown.is_some());
        let u = unwrap("nice", &spec("no_command_ok=true"), &[]);
        assert!(u.unknown.is_none() && u.rest.is_empty() && !u.interactive_shell);
    }

    #[test]
    fn env_assignments_and_split_string() {
        let s = spec(
            r#"flags=["-i"]
value_options=["-u"]
split_string=["-S"]
assignments=true"#,
        );
        let u = unwrap("env", &s, &words(&["-i", "A=1", "-u", "B", "rm", "x"]));
        assert_eq!(u.assignments.len(), 1);
        assert_eq!(u.rest[0].value, "rm");
        let u = unwrap("env", &s, &words(&["-S", "rm -rf ~"]));
        assert_eq!(
            u.shell_string.map(|w| w.value),
            Some("rm -rf ~".to_string())
        );
    }

    #[test]
    fn timeout_skips_duration() {
        let s = spec(
            r#"value_options=["-s"]
leading_operands=1"#,
        );
        let u = unwrap("timeout", &s, &words(&["-s", "KILL", "5", "rm", "x"]));
        assert_eq!(u.rest[0].value, "rm");
    }

    #[test]
    fn shell_args_forms() {
        assert_eq!(
            shell_args(&words(&["-c", "ls"])),
            ShellArgs::Command { string: 1 }
        );
        assert_eq!(
            shell_args(&words(&["-lc", "ls"])),
            ShellArgs::Command { string: 1 }
        );
        assert_eq!(
            shell_args(&words(&["-e", "-c", "ls", "n"])),
            ShellArgs::Command { string: 2 }
        );
        assert_eq!(
            shell_args(&words(&["x.sh"])),
            ShellArgs::Script { script: 0 }
        );
        assert_eq!(shell_args(&words(&[])), ShellArgs::Stdin);
    }
}

/// Splits an `env -S` string the way GNU env does: blanks separate
/// arguments; `'...'` is literal (only `\\` and `\'` are escapes in it);
/// `"..."` processes escapes; `\_` is a separator outside quotes and a space
/// inside double quotes; `\n \t \r \f \v \\ \" \' \$ \#` are escapes;
/// `\c` ends the string; `#` at the start of an argument starts a comment.
/// `${NAME}` (an environment variable) and anything env rejects give `Err`.
pub fn env_split(s: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = s.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') => {
                if let Some(w) = cur.take() {
                    out.push(w);
                }
            }
            (None, '#') if cur.is_none() => break,
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            (Some(q), _) if c == q => quote = None,
            (Some('\''), '\\') => {
                let w = cur.get_or_insert_with(String::new);
                match chars.peek() {
                    Some('\\' | '\'') => w.push(chars.next().unwrap_or('\\')),
                    _ => w.push('\\'),
                }
            }
            (Some('\''), _) => cur.get_or_insert_with(String::new).push(c),
            (_, '$') => {
                return Err("`env -S` expands an environment variable (`${...}`)".into());
            }
            (_, '\\') => {
                let Some(e) = chars.next() else {
                    return Err("`env -S` string ends with a backslash".into());
                };
                match e {
                    '_' if quote.is_none() => {
                        if let Some(w) = cur.take() {
                            out.push(w);
                        }
                    }
                    '_' => cur.get_or_insert_with(String::new).push(' '),
                    'c' => {
                        if quote.is_some() {
                            return Err("`\\c` inside quotes in `env -S`".into());
                        }
                        break;
                    }
                    'n' => cur.get_or_insert_with(String::new).push('\n'),
                    't' => cur.get_or_insert_with(String::new).push('\t'),
                    'r' => cur.get_or_insert_with(String::new).push('\r'),
                    'f' => cur.get_or_insert_with(String::new).push('\x0c'),
                    'v' => cur.get_or_insert_with(String::new).push('\x0b'),
                    '\\' | '"' | '\'' | '$' | '#' => cur.get_or_insert_with(String::new).push(e),
                    other => return Err(format!("`env -S` rejects the escape `\\{other}`")),
                }
            }
            (_, _) => cur.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err("`env -S` string has an unterminated quote".into());
    }
    if let Some(w) = cur.take() {
        out.push(w);
    }
    Ok(out)
}

#[cfg(test)]
mod env_split_tests {
    use super::env_split;

    #[test]
    fn splits_like_gnu_env() {
        assert_eq!(
            env_split("rm -f build\\_/outside/f").unwrap(),
            ["rm", "-f", "build", "/outside/f"]
        );
        assert_eq!(
            env_split("printf [%s] a\\_b").unwrap(),
            ["printf", "[%s]", "a", "b"]
        );
        assert_eq!(env_split("a \"b\\_c\" 'd e'").unwrap(), ["a", "b c", "d e"]);
        assert_eq!(env_split("perl -w # comment").unwrap(), ["perl", "-w"]);
        assert_eq!(env_split("a\\cb c").unwrap(), ["a"]);
        assert!(env_split("echo ${HOME}").is_err());
        assert!(env_split("echo \\x41").is_err());
        assert!(env_split("echo 'a").is_err());
    }
}
