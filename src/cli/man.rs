//! `safe-exec man` and `safe-exec completions SHELL`: what the packages
//! install as `safe-exec(1)` and the bash/zsh/fish completions, generated
//! from the clap definitions in `super::Cli`.
//!
//! Run mode (`-- PROGRAM`, `-c STRING`) is parsed by hand in `shell_args`,
//! not by clap, so the documented command is `Cli` plus run mode's options
//! and operands, made from the same definitions the hand parser reads:
//! `super::Common` (clap) and `shell_args::SHELL_FLAGS`. It drives
//! `safe-exec --help`, the man page and the completions; it never parses
//! anything.

use std::io::Write;

use clap::{Arg, ArgAction, CommandFactory, ValueHint};

use super::Cli;
use super::shell_args::{FlagEffect, SHELL_FLAGS, ShellFlag};

/// The shells `completions` can generate for.
pub use clap_complete::Shell;

const DESCRIPTION: &str = "\
safe-exec stands between an AI coding agent and the kernel. It parses the command the agent \
wants to run (an argv list or a bash string), decides allow, ask or deny from a profile with \
reasons a person can read, runs what was allowed under Landlock and seccomp (writes confined to \
the allowed roots, secrets unreadable, network off), and reports what it did to hooks and an \
audit log.

It is used three ways: as a prefix (safe-exec -- git status), as the configured shell of a \
harness or agent user (SHELL=/usr/bin/safe-exec; anything that calls $SHELL -c STRING or \
bash -lc STRING), and as a PreToolUse hook of Claude Code or Codex (safe-exec hook).

Without a subcommand, safe-exec runs in run mode: `safe-exec [OPTIONS] -- PROGRAM [ARG...]` \
runs an argv, `safe-exec [OPTIONS] -c STRING [NAME [ARG...]]` runs a shell string; NAME and \
ARG become $0, $1, ... as in bash. The bash flag forms -c, -lc, -l -c, -c -l, --login -c, -ec \
and -e -c are accepted: -e is passed to the inner shell, the login flag is accepted and ignored. \
With neither -c nor --, a script is read from standard input.";

const SYNOPSIS: &str = r#".SH SYNOPSIS
\fBsafe\-exec\fR [\fIOPTIONS\fR] \fB\-\-\fR \fIPROGRAM\fR [\fIARG\fR...]
.br
\fBsafe\-exec\fR [\fIOPTIONS\fR] [\fB\-l\fR] [\fB\-e\fR] \fB\-c\fR \fISTRING\fR [\fINAME\fR [\fIARG\fR...]]
.br
\fBsafe\-exec\fR \fICOMMAND\fR [\fIARGS\fR]
"#;

/// Extra man page sections (roff), after the generated ones.
const EXTRA_SECTIONS: &str = r#".SH "EXIT STATUS"
In run mode (\fB\-\-\fR and \fB\-c\fR), following the coreutils wrapper convention:
.TP
\fIthe command's own code\fR
the command ran.
.TP
\fB124\fR
the command ran past its time limit and was killed (whole process group).
.TP
\fB125\fR
safe\-exec itself failed: usage, bad profile, or the sandbox could not be set up.
A line starting \fBsafe\-exec: error:\fR says what to fix.
.TP
\fB126\fR
denied by policy, validator, guard, a hook, or an unanswered confirmation.
A line starting \fBsafe\-exec: denied:\fR gives the reasons.
.TP
\fB127\fR
program not found.
.TP
\fB128+N\fR
the command was killed by signal N (a seccomp kill shows as 159).
.PP
\fBcheck\fR exits 0 (allow), 2 (deny), 3 (ask) or 125 (error).
\fBclassify\fR exits 0 whatever it found, 125 on error.
.SH "PROFILES"
A profile is a TOML file: mode, allowed roots, the command registry, safety rules,
shell\-shape limits, sandbox settings, hooks, guard limits and the audit sink.
The built\-in profiles (\fBsafe\-exec profile list\fR) are embedded in the binary;
the packages also install them under \fI/usr/share/safe\-exec/profiles/\fR for reading.
.PP
Selection: \fB\-\-profile\fR, then \fBSAFE_EXEC_PROFILE\fR, then the user file,
then the system file, then the built\-in \fBdefault\fR.
The system file can pin a profile (\fBpin = true\fR): then the command line, the
environment and the user file may only choose something at least as strict, and
any attempt to loosen it is exit 125.
Files inside the working tree never configure safe\-exec.
.SH "FILES"
.TP
\fI/etc/safe\-exec/config.toml\fR
system configuration: \fBprofile\fR, \fBpin\fR, \fBhooks_dir\fR, \fBstate_dir\fR.
.TP
\fI$XDG_CONFIG_HOME/safe\-exec/config.toml\fR (default \fI~/.config/safe\-exec/config.toml\fR)
user configuration; cannot loosen a pinned profile.
.TP
\fI/usr/share/safe\-exec/profiles/\fR
copies of the built\-in profiles, to read or to start your own from.
.SH "ENVIRONMENT"
.TP
\fBSAFE_EXEC_PROFILE\fR
profile name or path, as \fB\-\-profile\fR.
.TP
\fBSAFE_EXEC_STATE_DIR\fR
the state directory (audit log, guard sessions): \fI{state}\fR. Default
\fI$XDG_STATE_HOME/safe\-exec\fR, else \fI~/.local/state/safe\-exec\fR; the system
file's \fBstate_dir\fR wins over both.
.TP
\fBSAFE_EXEC_SYSTEM_CONFIG\fR
path of the system configuration instead of \fI/etc/safe\-exec/config.toml\fR
(tests, unprivileged installs); ignored when \fI/etc/safe\-exec/config.toml\fR exists.
.TP
\fBSAFE_EXEC_HOOKS_DIR\fR
directory of hook programs instead of \fI/etc/safe\-exec/hooks.d\fR; ignored when
\fI/etc/safe\-exec/config.toml\fR exists.
.TP
\fBSAFE_EXEC_SESSION\fR
session id recorded in the audit log and used by the guard, as \fB\-\-session\fR.
.TP
\fBSAFE_EXEC_AGENT\fR
name of the calling agent, as \fB\-\-agent\fR; set, no person is asked to confirm.
.TP
\fBSAFE_EXEC_SANDBOX\fR, \fBSAFE_EXEC_NETWORK_DISABLED\fR
set by safe\-exec in the environment of every sandboxed command (the second when
the network is off), so tools and test suites can tell.
.TP
\fBSAFE_EXEC_DECIDE_MEMORY_LIMIT\fR
live heap bytes a decision may use (default 1 GiB); it can only lower the
bound. Exceeding it is a refusal (\fBcheck\fR exit 2, the hook blocks).
.TP
\fBSAFE_EXEC_HOOK_MEMORY_MB\fR, \fBSAFE_EXEC_HOOK_TIMEOUT_MS\fR
address\-space limit (MiB, default 1024) and time limit (ms, default 8000) of
the child process in which \fBhook\fR decides; a child that runs out of either
is a block in both hook protocols, never an allow.
.TP
\fBTMPDIR\fR
the \fI{tmp}\fR placeholder of profiles (default \fI/tmp\fR).
.SH "EXAMPLES"
.nf
safe\-exec \-\- git status
safe\-exec \-c 'ls src | head \-n 3'
safe\-exec check \-\-explain \-c 'rm \-rf ~'
safe\-exec classify \-\-json 'curl \-fsSL https://example.com/i.sh | sh'
sudo chsh \-s /usr/bin/safe\-exec agent
.fi
.SH "SEE ALSO"
\fBbash\fR(1), \fBlandlock\fR(7), \fBseccomp\fR(2), /usr/share/doc/safe\-exec/
"#;

/// The command as documented: the clap subcommands plus run mode.
pub fn documented_command() -> clap::Command {
    use clap::Args;
    super::Common::augment_args(Cli::command())
        .subcommand_required(false)
        .args_conflicts_with_subcommands(true)
        .long_about(DESCRIPTION)
        .after_help(super::EXIT_CODES)
        .override_usage(
            "safe-exec [OPTIONS] -- PROGRAM [ARG...]\n       \
             safe-exec [OPTIONS] -c STRING [NAME [ARG...]]\n       \
             safe-exec COMMAND [ARGS]",
        )
        .args(SHELL_FLAGS.iter().filter_map(shell_flag_arg))
        .arg(
            Arg::new("program")
                .value_name("PROGRAM [ARG]...")
                .num_args(1..)
                .last(true)
                .value_hint(ValueHint::CommandWithArguments)
                .help("After `--`: the program and its arguments, run as an argv (no shell)"),
        )
}

/// The clap argument that documents one run-mode shell flag (`None` for
/// `-h`, which clap's own help flag documents).
fn shell_flag_arg(f: &ShellFlag) -> Option<Arg> {
    if f.short == Some('h') {
        return None;
    }
    // clap ids are `&'static str`: the long name, else the letter itself.
    const LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let id: &'static str = match (f.long, f.short) {
        (Some(l), _) => l,
        (None, Some(c)) => {
            let at = LETTERS.find(c)?;
            &LETTERS[at..at + 1]
        }
        (None, None) => return None,
    };
    let mut arg = Arg::new(id).help(f.help).long_help(f.help);
    if let Some(c) = f.short {
        arg = arg.short(c);
    }
    if let Some(l) = f.long {
        arg = arg.long(l);
    }
    arg = match (f.effect, f.value) {
        (FlagEffect::CommandString, _) => arg.value_name("STRING"),
        (_, Some(v)) => arg.value_name(v),
        (_, None) => arg.action(ArgAction::SetTrue),
    };
    if f.effect == FlagEffect::Ignored {
        // Listed by `--help`, the man page and the completions; `-h` stays short.
        arg = arg.hide_short_help(true);
    }
    Some(arg)
}

/// `safe-exec --help` (`long`) or `-h`: run mode and the subcommands.
pub fn help(long: bool) -> i32 {
    let mut cmd = documented_command();
    let text = if long {
        cmd.render_long_help()
    } else {
        cmd.render_help()
    };
    // Styled on a terminal, plain text into a pipe or file.
    let text = if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        text.ansi().to_string()
    } else {
        text.to_string()
    };
    write_stdout(text.as_bytes())
}

/// Renders `safe-exec(1)` in roff.
pub fn render_man(out: &mut dyn Write) -> std::io::Result<()> {
    let cmd = documented_command();
    let man = clap_mangen::Man::new(cmd.clone())
        .source(concat!("safe-exec ", env!("CARGO_PKG_VERSION")))
        .manual("User Commands");
    man.render_title(out)?;
    man.render_name_section(out)?;
    out.write_all(SYNOPSIS.as_bytes())?;
    man.render_description_section(out)?;
    man.render_options_section(out)?;
    // One page for everything: each subcommand's usage and purpose here
    // (the generated list would point at per-subcommand pages).
    writeln!(out, ".SH COMMANDS")?;
    let mut built = cmd;
    built.build();
    for sub in built.get_subcommands_mut() {
        if sub.get_name() == "help" {
            continue;
        }
        let nested: Vec<clap::Command> = sub
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .cloned()
            .collect();
        if nested.is_empty() {
            render_usage(out, sub)?;
        } else {
            for mut child in nested {
                render_usage(out, &mut child)?;
            }
        }
    }
    out.write_all(EXTRA_SECTIONS.as_bytes())?;
    man.render_version_section(out)?;
    Ok(())
}

fn render_usage(out: &mut dyn Write, cmd: &mut clap::Command) -> std::io::Result<()> {
    let usage = cmd.render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ");
    writeln!(out, ".TP")?;
    for line in usage.lines() {
        writeln!(out, "\\fB{}\\fR", roff_escape(line.trim()))?;
    }
    if let Some(about) = cmd.get_about() {
        writeln!(out, "{}", roff_escape(&about.to_string()))?;
    }
    Ok(())
}

fn roff_escape(s: &str) -> String {
    let s = s.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// `safe-exec man`: prints the man page to stdout.
pub fn man() -> i32 {
    let mut buf = Vec::new();
    if let Err(e) = render_man(&mut buf) {
        return super::error(format!("cannot render the man page: {e}"));
    }
    write_stdout(&buf)
}

/// `safe-exec completions SHELL`: prints the completion script to stdout.
pub fn completions(shell: Shell) -> i32 {
    let mut cmd = documented_command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "safe-exec", &mut buf);
    write_stdout(&buf)
}

fn write_stdout(buf: &[u8]) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(buf).and_then(|()| out.flush()) {
        Ok(()) => 0,
        // A closed pipe (`| head`) is not safe-exec's failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => super::error(format!("cannot write: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_command_is_consistent() {
        documented_command().debug_assert();
    }

    #[test]
    fn man_page_describes_run_mode_and_every_subcommand() {
        let mut buf = Vec::new();
        render_man(&mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(
            text.starts_with(".ie") || text.contains(".TH safe-exec 1"),
            "{text}"
        );
        for needle in [
            "\\-c STRING",
            "\\-\\-profile",
            "EXIT STATUS",
            "/etc/safe\\-exec/config.toml",
            "check",
            "classify",
            "doctor",
            "completions",
        ] {
            assert!(text.contains(needle), "man page lacks {needle:?}");
        }
    }

    #[test]
    fn completions_know_subcommands_and_run_mode_options() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let mut cmd = documented_command();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, "safe-exec", &mut buf);
            let text = String::from_utf8(buf).unwrap();
            for needle in ["doctor", "profile", "timeout"] {
                assert!(text.contains(needle), "{shell}: lacks {needle}");
            }
        }
    }
}
