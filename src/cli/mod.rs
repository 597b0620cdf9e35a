//! The command line: run mode (`--` and `-c`, bash-compatible), and the
//! subcommands `check`, `classify`, `profile`, `rules`, `doctor`.

pub mod approval;
mod check;
pub mod entry;
pub mod harness;
pub mod hook;
pub mod info;
mod log;
pub mod man;
mod run_cmd;
pub mod setup;
pub mod shell_args;
mod situation;

use std::ffi::OsString;

use clap::{Args, Parser, Subcommand};

/// Exit code: safe-exec itself failed (usage, profile, sandbox set-up).
pub use info::classify_string;

/// Exit code: safe-exec itself failed (usage, profile, sandbox set-up).
pub const EXIT_ERROR: i32 = 125;
/// Run mode's exit codes, one line for `--help`.
pub const EXIT_CODES: &str = "Exit codes: the command's own; 126 denied; 127 not found; 125 safe-exec error; 124 timed out; 128+N killed by signal N.";
/// Exit code: denied.
pub const EXIT_DENIED: i32 = 126;

/// safe-exec's subcommands (run mode is parsed separately, see `shell_args`).
#[derive(Debug, Parser)]
#[command(
    name = "safe-exec",
    version = version_text(),
    about = "Decide allow/ask/deny for a command, explain why, and run what is allowed under Landlock and seccomp.",
    long_about = "Run mode:\n  safe-exec [OPTIONS] -- PROGRAM [ARG...]\n  safe-exec [OPTIONS] -c STRING [NAME [ARG...]]\n\nRun mode's options: `safe-exec --help`.",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decide without running: exit 0 allow, 2 deny, 3 ask.
    Check(CheckArgs),
    /// The regex safety classifier alone (seed 004).
    Classify(ClassifyArgs),
    /// List, show or check profiles.
    Profile {
        /// What to do with profiles.
        #[command(subcommand)]
        action: ProfileAction,
    },
    /// List the safety rules.
    Rules {
        /// What to do with rules.
        #[command(subcommand)]
        action: RulesAction,
    },
    /// Show recent decisions from the audit log.
    Log(LogArgs),
    /// Agent hook protocol (Claude Code / Codex `PreToolUse`) on stdin.
    Hook(hook::HookArgs),
    /// Report what this kernel can enforce for each built-in profile.
    Doctor {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the safe-exec hook into an agent's user settings (Claude Code,
    /// Codex with its trust entry), check it and say what was done.
    Setup(setup::SetupArgs),
    /// Print the man page safe-exec(1) (roff) to stdout.
    Man,
    /// Print a shell completion script to stdout.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: man::Shell,
    },
}

/// Options every deciding subcommand shares, and run mode too: the one
/// definition (clap) that run mode's hand parser
/// ([`shell_args::common_option`]), `--help`, the man page and the
/// completions all read.
#[derive(Debug, Args, Clone, Default)]
pub struct Common {
    /// Profile name (see `safe-exec profile list`) or path to a profile file.
    #[arg(long, value_name = "NAME|PATH", value_hint = clap::ValueHint::FilePath)]
    pub profile: Option<String>,
    /// Working directory the command runs in.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub cwd: Option<String>,
    /// Session id (guard state, audit).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Name of the agent issuing the command.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Wall-clock limit in seconds (can only shorten the profile's).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// One-time approval token that `hook --rewrite` puts in front of a
    /// command the person approved (not for manual use).
    #[arg(long, value_name = "TOKEN")]
    pub approval: Option<String>,
    /// Write the directory the command ends in to FILE (`hook --rewrite`
    /// uses it so that `cd` carries over to the agent's next call).
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub cwd_out: Option<String>,
}

impl Common {
    /// As the plain options the layers read.
    pub fn to_options(&self) -> shell_args::CommonOptions {
        shell_args::CommonOptions {
            profile: self.profile.clone(),
            cwd: self.cwd.clone(),
            session: self.session.clone(),
            agent: self.agent.clone(),
            timeout: self.timeout,
            approval: self.approval.clone(),
            cwd_out: self.cwd_out.clone(),
        }
    }
}

/// `check`
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Decide as for a command nothing confines (the hook without
    /// `--rewrite`): only the static policy stands between it and the system.
    #[arg(long)]
    pub unconfined: bool,
    /// Explain the decision layer by layer.
    #[arg(long)]
    pub explain: bool,
    /// Shared options.
    #[command(flatten)]
    pub common: Common,
    /// A shell string to check (`-c STRING [NAME [ARG...]]`).
    #[arg(short = 'c', value_name = "STRING")]
    pub string: Option<String>,
    /// `-- PROGRAM [ARG...]`, or `NAME ARG...` after `-c STRING`.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    pub rest: Vec<String>,
}

/// `log`
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Print the records as JSON lines (decision, then its result).
    #[arg(long)]
    pub json: bool,
    /// How many decisions to show (the most recent).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Profile whose [audit] file to read.
    #[arg(long)]
    pub profile: Option<String>,
}

/// `classify`
#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// Print `{"severity": ..., "matchedRules": [...]}`.
    #[arg(long)]
    pub json: bool,
    /// Profile whose custom rules apply.
    #[arg(long)]
    pub profile: Option<String>,
    /// The command line to classify.
    pub string: String,
}

/// `profile ...`
#[derive(Debug, Subcommand)]
pub enum ProfileAction {
    /// List the built-in profiles.
    List,
    /// Print a profile after `extends` is merged.
    Show {
        /// Name or path.
        name: String,
    },
    /// Validate a profile file, including every example it carries.
    Check {
        /// Path or name.
        file: String,
    },
}

/// `rules ...`
#[derive(Debug, Subcommand)]
pub enum RulesAction {
    /// List the safety rules.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Profile whose custom rules to include.
        #[arg(long)]
        profile: Option<String>,
    },
}

/// `--version` text: the version and the Landlock ABI the build targets.
pub const fn version_text() -> &'static str {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (Landlock ABI up to 9 via the landlock crate; seccomp filter compiled by safe-exec)"
    )
}

/// `safe-exec --version`: the build's version and Landlock ABI, and what the
/// running kernel offers (one syscall, so `--version` stays fast).
pub fn version_long() -> String {
    let kernel = match crate::sandbox::kernel::landlock_abi() {
        0 => "this kernel offers no Landlock".to_string(),
        n => format!("this kernel offers ABI {n}"),
    };
    format!(
        "safe-exec {}\nLandlock: built for ABI up to {} (landlock crate); {kernel}\nseccomp: own BPF filter, {}\n",
        env!("CARGO_PKG_VERSION"),
        crate::sandbox::landlock::CRATE_ABI,
        std::env::consts::ARCH,
    )
}

/// The first words that select a subcommand (or clap's help and version)
/// instead of run mode: [`Cli`]'s subcommands, checked against it by a test
/// (a `Cli::command()` here would cost every run-mode start).
pub const SUBCOMMANDS: &[&str] = &[
    "check",
    "classify",
    "hook",
    "profile",
    "rules",
    "doctor",
    "man",
    "completions",
    "log",
    "setup",
    "help",
    "--help",
    "-h",
    "--version",
    "-V",
];

/// Entry point: returns the process exit code.
pub fn main() -> i32 {
    let args: Vec<OsString> = crate::sys::start::args_os();
    // (`execve` with an empty argv gives no program name.)
    let rest = args.get(1..).unwrap_or_default();
    let first = rest.first().and_then(|a| a.to_str());
    if entry::started_as_bash() {
        return as_bash(rest);
    }
    if rest.len() == 1 && matches!(first, Some("--version" | "-V")) {
        print!("{}", version_long());
        return 0;
    }
    if rest.len() == 1 && matches!(first, Some("--help" | "-h" | "help")) {
        // Run mode's options and the subcommands, from the one definition.
        restore_sigpipe();
        return man::help(first != Some("-h"));
    }
    if first.is_some_and(|f| SUBCOMMANDS.contains(&f)) {
        // Only for subcommands that start no programs: `check` and `hook`
        // write to validator and hook programs' standard input, where a
        // closed pipe must be an error, not a silent death.
        if first.is_some_and(|f| {
            matches!(
                f,
                "doctor" | "rules" | "profile" | "classify" | "log" | "man" | "completions"
            )
        }) {
            restore_sigpipe();
        }
        // `hook` answers in its own protocol (exit 1, or a JSON deny).
        if first != Some("hook")
            && let Some(i) = args.iter().position(|a| a.to_str().is_none())
        {
            return error(format!(
                "argument {i} is not valid UTF-8; safe-exec only decides on commands it can read"
            ));
        }
        let parsed = match parse_narrow(&args) {
            Some(command) => Ok(Cli { command }),
            None => Cli::try_parse_from(&args),
        };
        let cli = match parsed {
            Ok(c) => c,
            Err(e) if first == Some("hook") => return hook::usage_failure(rest, &e),
            Err(e) => {
                let code = if e.use_stderr() { EXIT_ERROR } else { 0 };
                let _ = e.print();
                return code;
            }
        };
        return match cli.command {
            Command::Check(a) => check::run(a),
            Command::Classify(a) => info::classify(a),
            Command::Hook(a) => hook::run(a),
            Command::Profile { action } => info::profile(action),
            Command::Rules { action } => info::rules(action),
            Command::Doctor { json } => info::doctor(json),
            Command::Man => man::man(),
            Command::Completions { shell } => man::completions(shell),
            Command::Log(a) => log::run(a),
            Command::Setup(a) => setup::run(a),
        };
    }
    run_cmd::run(rest)
}

/// The arguments of `check` and `hook`, the subcommands an agent starts for
/// every command, parsed with a command line that holds that subcommand
/// alone: the same derived definition of its arguments as in [`Cli`], so a
/// parse that succeeds gives the same value; building all of [`Cli`] (every
/// subcommand and its help) cost ~100k instructions per start. `None` for
/// any other subcommand and whenever this parse fails, including `--help`:
/// the caller then parses with [`Cli`], which gives the usual messages.
pub fn parse_narrow(args: &[OsString]) -> Option<Command> {
    use clap::FromArgMatches;
    let first = args.get(1)?.to_str()?;
    let sub = match first {
        "check" => CheckArgs::augment_args(clap::Command::new("check")),
        "hook" => hook::HookArgs::augment_args(clap::Command::new("hook")),
        _ => return None,
    };
    let mut cli = clap::Command::new("safe-exec").subcommand(sub);
    let matches = cli.try_get_matches_from_mut(args).ok();
    // Freeing the parser's tables would only cost time: the process ends
    // soon after deciding.
    std::mem::forget(cli);
    let matches = matches?;
    let (name, sub) = matches.subcommand()?;
    let command = match name {
        "check" => CheckArgs::from_arg_matches(sub).ok().map(Command::Check),
        "hook" => hook::HookArgs::from_arg_matches(sub)
            .ok()
            .map(Command::Hook),
        _ => None,
    };
    std::mem::forget(matches);
    command
}

/// safe-exec under the file name `bash`: exactly the configured-shell mode
/// (`-c STRING`, `-lc`, a script on stdin). `bash FILE ARGS` runs the real
/// bash on the script as an argv, judged like `safe-exec -- /bin/bash FILE`;
/// `bash --version` is answered by the real bash.
fn as_bash(rest: &[OsString]) -> i32 {
    let first = rest.first().and_then(|a| a.to_str());
    let real = ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|b| entry::real_shell_ok(b).is_ok() && std::path::Path::new(b).exists())
        .unwrap_or("/bin/bash");
    match first {
        Some("--version") | Some("--help") => {
            use std::os::unix::process::CommandExt;
            let err = std::process::Command::new(real).args(rest).exec();
            error(format!("cannot run {real}: {err}"))
        }
        Some(f) if !f.starts_with('-') && !f.starts_with('+') => {
            let mut v: Vec<OsString> = vec!["--".into(), real.into()];
            v.extend(rest.iter().cloned());
            run_cmd::run(&v)
        }
        _ => run_cmd::run(rest),
    }
}

/// The Rust runtime ignores SIGPIPE, so printing into a closed pipe
/// (`safe-exec doctor | head -1`) would panic. The informational
/// subcommands die quietly like other command-line tools instead. (Run mode
/// does not need this: the command it starts gets default signal handling.)
fn restore_sigpipe() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    // SAFETY: setting a signal disposition to SIG_DFL at start-up, before any
    // thread exists; no handler code is involved.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) };
}

/// Prints `safe-exec: error: ...` and returns 125.
pub fn error(msg: impl std::fmt::Display) -> i32 {
    eprintln!("safe-exec: error: {msg}");
    EXIT_ERROR
}
