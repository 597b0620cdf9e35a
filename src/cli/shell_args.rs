//! The run-mode command line, which must accept what a harness hands a
//! shell (`-c STRING`, `-lc`, `-c -l`, `--login -c`, `-ec`, `NAME ARG...`)
//! as well as safe-exec's own options and the `-- PROGRAM ARGS` form.

use std::ffi::OsString;

/// Options shared by run mode, `check` and `hook`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommonOptions {
    /// `--profile NAME|PATH`
    pub profile: Option<String>,
    /// `--cwd DIR`
    pub cwd: Option<String>,
    /// `--session ID`
    pub session: Option<String>,
    /// `--agent NAME`
    pub agent: Option<String>,
    /// `--timeout SECONDS` (can only shorten the profile's).
    pub timeout: Option<u64>,
    /// `--approval TOKEN` (run mode): a one-time approval issued by
    /// `hook --rewrite` when the agent's user approved this `ask`.
    pub approval: Option<String>,
    /// `--cwd-out FILE` (run mode): write the directory the command ended in
    /// to FILE, so `hook --rewrite` can carry `cd` over to the agent's shell.
    pub cwd_out: Option<String>,
}

/// A parsed run-mode invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunArgs {
    /// safe-exec's own options.
    pub common: CommonOptions,
    /// What to run.
    pub command: RunCommand,
    /// `-e`: errexit for the inner shell.
    pub errexit: bool,
    /// `-l` / `--login` was given (accepted; the inner shell is not a login shell).
    pub login: bool,
    /// `NAME` was given after `-c STRING` (otherwise `$0` defaults, see
    /// `run_cmd::default_dollar0`).
    pub name_given: bool,
}

/// What run mode runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunCommand {
    /// `-- PROGRAM ARGS...`
    List(Vec<String>),
    /// `-c STRING [NAME [ARG...]]`
    String {
        /// The string.
        text: String,
        /// `$0 $1 ...`
        positional: Vec<String>,
    },
    /// No `-c` and no `--`: a script on standard input (or an interactive terminal).
    Stdin,
}

/// A run-mode usage error (exit 125).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    /// An argument is not valid UTF-8.
    #[error("argument {0} is not valid UTF-8")]
    NotUtf8(usize),
    /// An option needs a value.
    #[error("option `{0}` needs a value")]
    MissingValue(String),
    /// An unknown option.
    #[error("unknown option `{0}`; see `safe-exec --help`")]
    UnknownOption(String),
    /// A bad value.
    #[error("{0}")]
    BadValue(String),
}

/// What a run-mode shell flag does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagEffect {
    /// `-c`: the first operand is the command string.
    CommandString,
    /// `-l`, `--login`: recorded; the inner shell is not a login shell.
    Login,
    /// `-e` (on) and `+e` (off): errexit for the inner shell.
    Errexit,
    /// `-o OPTION` (`+o` turns it off): `-o errexit` is `-e`, other options
    /// are accepted and ignored.
    SetOption,
    /// Accepted for bash compatibility, without effect (with its value, if
    /// it takes one).
    Ignored,
}

/// One bash flag run mode accepts. [`SHELL_FLAGS`] is the only list: the
/// hand parser ([`parse`]), `--help`, the man page and the completions
/// (`super::man::documented_command`) are all made from it.
#[derive(Debug, Clone, Copy)]
pub struct ShellFlag {
    /// The letter after `-` (or `+`), if the flag has one.
    pub short: Option<char>,
    /// The name after `--`, if the flag has one.
    pub long: Option<&'static str>,
    /// The flag takes the next word as its value (then the short form
    /// stands alone, never inside a cluster like `-lc`).
    pub value: Option<&'static str>,
    /// What it does.
    pub effect: FlagEffect,
    /// One line for `--help` and the man page.
    pub help: &'static str,
}

const fn flag(
    short: Option<char>,
    long: Option<&'static str>,
    value: Option<&'static str>,
    effect: FlagEffect,
    help: &'static str,
) -> ShellFlag {
    ShellFlag {
        short,
        long,
        value,
        effect,
        help,
    }
}

/// Help line of the flags accepted and ignored for bash compatibility.
const IGNORED: &str = "Accepted for bash compatibility; no effect";

/// Every bash flag of run mode (besides `--` and the options of
/// `super::Common`), in the order `--help` lists them.
pub const SHELL_FLAGS: &[ShellFlag] = &[
    flag(
        Some('c'),
        None,
        None,
        FlagEffect::CommandString,
        "Run STRING (the first operand) as a shell command; NAME ARG... after it become $0 $1 ...",
    ),
    flag(
        Some('l'),
        Some("login"),
        None,
        FlagEffect::Login,
        "Accepted for bash compatibility (-lc, --login -c); ignored",
    ),
    flag(
        Some('e'),
        None,
        None,
        FlagEffect::Errexit,
        "Exit on the first failing command of the -c STRING (passed to the inner shell; +e turns it off)",
    ),
    flag(
        Some('o'),
        None,
        Some("OPTION"),
        FlagEffect::SetOption,
        "bash `set -o OPTION`: `-o errexit` is -e; other options are accepted and ignored",
    ),
    flag(Some('O'), None, Some("SHOPT"), FlagEffect::Ignored, IGNORED),
    flag(None, Some("noprofile"), None, FlagEffect::Ignored, IGNORED),
    flag(None, Some("norc"), None, FlagEffect::Ignored, IGNORED),
    flag(None, Some("posix"), None, FlagEffect::Ignored, IGNORED),
    flag(None, Some("noediting"), None, FlagEffect::Ignored, IGNORED),
    flag(
        None,
        Some("rcfile"),
        Some("FILE"),
        FlagEffect::Ignored,
        IGNORED,
    ),
    flag(
        None,
        Some("init-file"),
        Some("FILE"),
        FlagEffect::Ignored,
        IGNORED,
    ),
    flag(Some('i'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('s'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('x'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('v'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('u'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('h'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('B'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('H'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('P'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('T'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('f'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('m'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('b'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('C'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('a'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('k'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('n'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('p'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('t'), None, None, FlagEffect::Ignored, IGNORED),
    flag(Some('E'), None, None, FlagEffect::Ignored, IGNORED),
];

fn short_flag(c: char) -> Option<&'static ShellFlag> {
    SHELL_FLAGS.iter().find(|f| f.short == Some(c))
}

fn long_flag(name: &str) -> Option<&'static ShellFlag> {
    SHELL_FLAGS.iter().find(|f| f.long == Some(name))
}

/// Converts argv to UTF-8 strings, reporting the first invalid one.
pub fn utf8_args(args: &[OsString]) -> Result<Vec<String>, UsageError> {
    args.iter()
        .enumerate()
        .map(|(i, a)| a.to_str().map(str::to_string).ok_or(UsageError::NotUtf8(i)))
        .collect()
}

/// The value options run mode shares with `check` and `hook`, exactly as
/// clap declares them ([`super::Common`]): one definition for the hand
/// parser here, the subcommands, `--help`, the man page and completions.
fn common_command() -> clap::Command {
    use clap::Args;
    super::Common::augment_args(clap::Command::new("safe-exec")).no_binary_name(true)
}

/// Reads `--profile X`, `--profile=X` and the other options of
/// [`super::Common`]; returns how many words were consumed, or 0 if `a` is
/// not one of them.
pub fn common_option(
    args: &[String],
    i: usize,
    common: &mut CommonOptions,
) -> Result<usize, UsageError> {
    use clap::FromArgMatches;
    let a = &args[i];
    if !a.starts_with("--") || a == "--" {
        return Ok(0);
    }
    let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
    let cmd = common_command();
    let known = cmd
        .get_arguments()
        .filter_map(|arg| arg.get_long())
        .any(|long| name.strip_prefix("--") == Some(long));
    if !known {
        return Ok(0);
    }
    let (words, used) = if a.contains('=') {
        (vec![a.clone()], 1)
    } else {
        match args.get(i + 1) {
            Some(v) => (vec![a.clone(), v.clone()], 2),
            None => return Err(UsageError::MissingValue(name.into())),
        }
    };
    let bad = |e: clap::Error| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        UsageError::BadValue(first.trim_start_matches("error: ").to_string())
    };
    let parsed = cmd
        .try_get_matches_from(&words)
        .and_then(|m| super::Common::from_arg_matches(&m))
        .map_err(bad)?
        .to_options();
    // Only the option just read is set in `parsed`.
    let CommonOptions {
        profile,
        cwd,
        session,
        agent,
        timeout,
        approval,
        cwd_out,
    } = parsed;
    common.profile = profile.or(common.profile.take());
    common.cwd = cwd.or(common.cwd.take());
    common.session = session.or(common.session.take());
    common.agent = agent.or(common.agent.take());
    common.timeout = timeout.or(common.timeout);
    common.approval = approval.or(common.approval.take());
    common.cwd_out = cwd_out.or(common.cwd_out.take());
    Ok(used)
}

/// Parses run-mode arguments (everything after the program name).
pub fn parse(args: &[String]) -> Result<RunArgs, UsageError> {
    let mut common = CommonOptions::default();
    let mut errexit = false;
    let mut login = false;
    let mut has_c = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let used = common_option(args, i, &mut common)?;
        if used > 0 {
            i += used;
            continue;
        }
        match a {
            "--" => {
                let rest = args[i + 1..].to_vec();
                if has_c {
                    // `bash -c -- STRING`: `--` ends options before the string.
                    return string_form(&args[i + 1..], common, errexit, login);
                }
                return Ok(RunArgs {
                    common,
                    command: RunCommand::List(rest),
                    errexit,
                    login,
                    name_given: false,
                });
            }
            _ if a.starts_with("--") => {
                let Some(f) = long_flag(&a[2..]) else {
                    return Err(UsageError::UnknownOption(a.to_string()));
                };
                if f.effect == FlagEffect::Login {
                    login = true;
                }
                if f.value.is_some() {
                    i += 1;
                }
            }
            _ if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 => {
                let on = a.starts_with('-');
                let mut chars = a[1..].chars();
                // A flag with a value stands alone: `-o errexit`, `+O extglob`.
                if let (Some(c), None) = (chars.next(), chars.next())
                    && let Some(f) = short_flag(c).filter(|f| f.value.is_some())
                {
                    let v = args.get(i + 1).map(String::as_str);
                    if f.effect == FlagEffect::SetOption && on && v == Some("errexit") {
                        errexit = true;
                    }
                    i += 2;
                    continue;
                }
                for c in a[1..].chars() {
                    let Some(f) = short_flag(c).filter(|f| f.value.is_none()) else {
                        return Err(UsageError::UnknownOption(a.to_string()));
                    };
                    match f.effect {
                        FlagEffect::CommandString => has_c = true,
                        FlagEffect::Login => login = true,
                        FlagEffect::Errexit => errexit = on,
                        FlagEffect::SetOption | FlagEffect::Ignored => {}
                    }
                }
            }
            _ if a.starts_with("--") => return Err(UsageError::UnknownOption(a.to_string())),
            _ => {
                if has_c {
                    return string_form(&args[i..], common, errexit, login);
                }
                return Err(UsageError::BadValue(format!(
                    "`{a}`: to run a program write `safe-exec -- {a} ...`, to run a shell string `safe-exec -c '...'`"
                )));
            }
        }
        i += 1;
    }
    if has_c {
        return Err(UsageError::MissingValue("-c".into()));
    }
    Ok(RunArgs {
        common,
        command: RunCommand::Stdin,
        errexit,
        login,
        name_given: false,
    })
}

fn string_form(
    rest: &[String],
    common: CommonOptions,
    errexit: bool,
    login: bool,
) -> Result<RunArgs, UsageError> {
    let Some(text) = rest.first() else {
        return Err(UsageError::MissingValue("-c".into()));
    };
    let mut positional: Vec<String> = rest[1..].to_vec();
    let name_given = !positional.is_empty();
    if positional.is_empty() {
        positional.push("safe-exec".into());
    }
    Ok(RunArgs {
        common,
        command: RunCommand::String {
            text: text.clone(),
            positional,
        },
        errexit,
        login,
        name_given,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> RunArgs {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("parses")
    }

    fn text(r: &RunArgs) -> &str {
        match &r.command {
            RunCommand::String { text, .. } => text,
            _ => "",
        }
    }

    #[test]
    fn bash_compatible_forms() {
        for form in [
            &["-c", "ls"][..],
            &["-lc", "ls"],
            &["-l", "-c", "ls"],
            &["-c", "-l", "ls"],
            &["--login", "-c", "ls"],
            &["-ec", "ls"],
            &["-e", "-c", "ls"],
            &["-cl", "ls"],
        ] {
            assert_eq!(text(&p(form)), "ls", "{form:?}");
        }
        assert!(p(&["-ec", "ls"]).errexit);
        assert!(p(&["-c", "-l", "ls"]).login);
    }

    #[test]
    fn positional_parameters() {
        let r = p(&["-c", "echo $0 $1", "name", "one"]);
        assert_eq!(
            r.command,
            RunCommand::String {
                text: "echo $0 $1".into(),
                positional: vec!["name".into(), "one".into()]
            }
        );
    }

    #[test]
    fn list_form_and_options() {
        let r = p(&["--profile", "strict", "--timeout=5", "--", "git", "status"]);
        assert_eq!(r.common.profile.as_deref(), Some("strict"));
        assert_eq!(r.common.timeout, Some(5));
        assert_eq!(
            r.command,
            RunCommand::List(vec!["git".into(), "status".into()])
        );
    }

    #[test]
    fn errors() {
        assert!(parse(&["-c".to_string()]).is_err());
        assert!(parse(&["--timeout".to_string(), "x".to_string(), "--".to_string()]).is_err());
        assert!(parse(&["git".to_string()]).is_err());
    }
}
