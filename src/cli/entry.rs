//! How safe-exec is entered by agents' shells: under the file name `bash`
//! (the agents only accept a shell whose name is `bash`), its own
//! subcommands run through the prefix or the configured shell, and whether
//! an agent is the caller (then no confirmation is read from the terminal).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::decide::{self, CommandInput, Situation};
use crate::profile::Profile;
use crate::run::ExecPlan;

use super::shell_args::CommonOptions;

/// Whether `word` selects one of safe-exec's subcommands that start none of
/// the agent's commands and may therefore run directly when they arrive
/// through the configured shell or the prefix (`safe-exec -c
/// '/usr/bin/safe-exec hook --json'`): every subcommand ([`super::SUBCOMMANDS`])
/// but `setup`, which changes the agent's configuration.
pub fn is_own_subcommand(word: &str) -> bool {
    word != "setup" && super::SUBCOMMANDS.contains(&word)
}

/// Whether safe-exec was started under the file name `bash` (the symlink
/// `/usr/lib/safe-exec/bin/bash`): it then behaves as the configured shell,
/// whatever its arguments.
pub fn started_as_bash() -> bool {
    crate::sys::start::args_os()
        .into_iter()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == "bash"))
        .unwrap_or(false)
}

/// This binary's real path, asked once per process (it is checked against
/// the interpreter, PATH's `bash` entries and the command's program).
pub(crate) fn own_exe() -> Option<PathBuf> {
    static OWN: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| crate::sys::path::canonicalize(&p).ok())
    })
    .clone()
}

/// The real bash is run by absolute path, and never safe-exec itself (a
/// profile naming `bash`, or `/bin/bash` replaced by a link to safe-exec,
/// would make safe-exec run itself forever).
pub fn real_shell_ok(interpreter: &str) -> Result<(), String> {
    if !interpreter.starts_with('/') {
        return Err(format!(
            "[shell] interpreter `{interpreter}` must be an absolute path (a PATH lookup could find safe-exec's own `bash`)"
        ));
    }
    if let (Some(me), Ok(it)) = (own_exe(), crate::sys::path::canonicalize(interpreter))
        && me == it
    {
        return Err(format!(
            "[shell] interpreter {interpreter} is safe-exec itself; point it at the real bash (/bin/bash)"
        ));
    }
    Ok(())
}

/// The agent running this command, when one is: `--agent`,
/// `SAFE_EXEC_AGENT`, Claude Code's `CLAUDECODE`, or a `CODEX_*` variable
/// (Codex sets `CODEX_SANDBOX*`, `CODEX_THREAD_ID`, ... for its commands).
pub fn under_agent(common: &CommonOptions) -> Option<String> {
    if let Some(a) = common.agent.clone().filter(|a| !a.is_empty()) {
        return Some(a);
    }
    if let Some(a) = std::env::var("SAFE_EXEC_AGENT")
        .ok()
        .filter(|a| !a.is_empty())
    {
        return Some(a);
    }
    if std::env::var_os("CLAUDECODE").is_some_and(|v| !v.is_empty()) {
        return Some("claude-code".into());
    }
    let codex = std::env::vars_os().any(|(k, _)| {
        k.to_str()
            .is_some_and(|k| k.starts_with("CODEX_") && k != "CODEX_HOME")
    });
    codex.then(|| "codex".into())
}

/// Where `program` resolves: a path with `/` against `cwd`, else `PATH`.
fn resolve(program: &str, cwd: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        return crate::sys::path::canonicalize(cwd.join(program)).ok();
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .and_then(|p| crate::sys::path::canonicalize(p).ok())
}

/// When the command is exactly one literal invocation of this very binary
/// with a subcommand [`is_own_subcommand`] accepts, its argv. A `--profile` file inside the
/// writable roots is not accepted here (the agent can write there), so
/// such a command is judged like any other.
pub fn own_subcommand(
    input: &CommandInput,
    profile: &Profile,
    sit: &Situation,
) -> Option<Vec<String>> {
    let me = own_exe()?;
    // Cheap filter first (this runs before every command): the program
    // word must at least mention this binary's file name.
    let name = me.file_name()?.to_str()?;
    let mentions = match input {
        CommandInput::List(v) => v.first().is_some_and(|p| p.contains(name)),
        CommandInput::String { text, .. } => text.contains(name),
    };
    if !mentions {
        return None;
    }
    let model = decide::parse_input(input, profile, sit);
    if !super::run_cmd::is_direct(&model) {
        return None;
    }
    let seg = model.segments.first()?;
    let argv = seg.argv_vec();
    let sub = argv.get(1)?;
    if !is_own_subcommand(sub) {
        return None;
    }
    if resolve(argv.first()?, &sit.places.cwd)? != me {
        return None;
    }
    let roots = profile.roots_shared(&sit.places);
    let mut it = argv.iter().skip(2).peekable();
    while let Some(a) = it.next() {
        let value = if a == "--profile" {
            it.peek().map(|v| v.as_str())
        } else {
            a.strip_prefix("--profile=")
        };
        if let Some(v) = value
            && (v.contains('/') || v.ends_with(".toml"))
        {
            let p = crate::policy::paths::resolve(&sit.places.cwd, v);
            if roots.write.iter().any(|w| p.starts_with(w)) {
                return None;
            }
        }
    }
    Some(argv)
}

/// Whether the command runs `safe-exec setup` (any segment, this very
/// binary): `setup` writes the user's own agent settings, which the
/// sandbox protects, so inside it it could only fail half-way. Run mode
/// refuses it up front with a message saying where to run it instead.
pub fn runs_own_setup(input: &CommandInput, profile: &Profile, sit: &Situation) -> bool {
    let Some(me) = own_exe() else { return false };
    let Some(name) = me.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let mentions = match input {
        CommandInput::List(v) => v.first().is_some_and(|p| p.contains(name)),
        CommandInput::String { text, .. } => text.contains(name) && text.contains("setup"),
    };
    if !mentions {
        return false;
    }
    let model = decide::parse_input(input, profile, sit);
    model.segments.iter().any(|seg| {
        seg.words.get(1).is_some_and(|a| a.value == "setup")
            && seg
                .words
                .first()
                .and_then(|p| resolve(&p.value, &seg.cwd))
                .is_some_and(|p| p == me)
    })
}

/// Replaces this process with safe-exec running `argv[1..]`.
pub fn exec_self(argv: &[String]) -> i32 {
    use std::os::unix::process::CommandExt;
    let Some(me) = own_exe() else {
        return super::error("cannot find safe-exec's own executable");
    };
    let err = std::process::Command::new(me)
        .arg0("safe-exec")
        .args(&argv[1..])
        .exec();
    super::error(format!(
        "cannot run safe-exec {}: {err}",
        argv[1..].join(" ")
    ))
}

/// `--cwd-out FILE`: the inner shell writes the directory it ends in to
/// FILE (an `EXIT` trap, so `exit N` in the command still reports it).
/// A command run directly (no shell) cannot change directory: nothing to do.
pub fn carry_cwd(plan: &mut ExecPlan, interpreter: &str, file: &str) {
    if plan.argv.first().map(OsString::as_os_str) != Some(std::ffi::OsStr::new(interpreter)) {
        return;
    }
    let Some(i) = plan.argv.iter().position(|a| a == "-c") else {
        return;
    };
    // Created here, outside the sandbox, so the inner shell only rewrites
    // an existing file (a profile may forbid creating files directly in
    // the temp directory). An existing file (not ours) is left alone.
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
        .is_ok();
    if !created {
        return;
    }
    if let Some(text) = plan.argv.get(i + 1).and_then(|t| t.to_str()) {
        let trap = format!(
            "trap {} EXIT\n",
            super::hook::rewrite::quote(&format!(
                "pwd -P >| {} 2>/dev/null",
                super::hook::rewrite::quote(file)
            ))
        );
        plan.argv[i + 1] = OsString::from(format!("{trap}{text}"));
    }
}

/// Removes from the command's `PATH` every directory whose `bash` is
/// safe-exec itself (`/usr/lib/safe-exec/bin`): a `bash` inside the
/// command is the real bash, already inside the sandbox.
///
/// "Is safe-exec" is the same file (device and inode, following links, one
/// `stat` per directory): a link to safe-exec, symbolic or hard, is
/// safe-exec.
pub fn strip_self_from_path(env: &mut [(OsString, OsString)]) {
    use std::os::unix::fs::MetadataExt;
    let Some(me) = own_exe().and_then(|p| std::fs::metadata(p).ok()) else {
        return;
    };
    let me = (me.dev(), me.ino());
    for (k, v) in env.iter_mut() {
        if k != "PATH" {
            continue;
        }
        let kept: Vec<PathBuf> = std::env::split_paths(v)
            .filter(|d| {
                std::fs::metadata(d.join("bash")).map_or(true, |m| (m.dev(), m.ino()) != me)
            })
            .collect();
        if let Ok(j) = std::env::join_paths(kept) {
            *v = j;
        }
    }
}
