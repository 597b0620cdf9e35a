//! Run mode: decide, confirm if needed, then run inside the sandbox.

use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::time::Duration;

use super::shell_args::{self, RunCommand};
use super::situation;
use super::{EXIT_DENIED, error};
use super::{approval, entry, harness};
use crate::confirm::{self, Answer};
use crate::decide::{self, CommandInput, Situation};
use crate::hooks::lifecycle::Lifecycle;
use crate::parse::{CommandModel, Form};
use crate::pipeline;
use crate::policy::{Decision, Layer};
use crate::profile::{self, Profile, SelectionInputs};
use crate::run::{self, ExecPlan};
use crate::sandbox::env;

/// Runs safe-exec in run mode with `args` (without the program name).
pub fn run(args: &[OsString]) -> i32 {
    let args = match shell_args::utf8_args(args) {
        Ok(a) => a,
        Err(e) => return deny_line(&format!("{e}; safe-exec only runs commands it can read")),
    };
    let mut parsed = match shell_args::parse(&args) {
        Ok(p) => p,
        Err(e) => return error(e),
    };
    default_dollar0(&mut parsed);
    let mut sit = match situation::build(&parsed.common, None, false) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let selection = match profile::select(&SelectionInputs::from_env(
        parsed.common.profile.clone(),
        sit.places.cwd.clone(),
    )) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    situation::apply_system_state(&mut sit, &selection.system);
    let profile = selection.profile;
    if let Err(e) = entry::real_shell_ok(&profile.doc.shell.interpreter) {
        return error(e);
    }
    // Codex's own shell steps (its snapshot script, its per-command
    // wrapper), recognised as a whole: see `harness`.
    let mut harness_run: Option<String> = None;
    if let RunCommand::String { text, .. } = &parsed.command {
        let own = entry::own_exe();
        let step = harness::claude_snapshot(text, &sit.places.home, parsed.login).or_else(|| {
            harness::recognise(
                text,
                &sit.places.home,
                &profile.doc.shell.interpreter,
                own.as_deref(),
            )
        });
        match step {
            Some(harness::Step::ClaudeSnapshot { dir }) => {
                if let Err(e) = std::fs::create_dir_all(&dir) {
                    return error(format!("cannot create {}: {e}", dir.display()));
                }
                let mut sandbox = profile.sandbox_spec(&sit.places, parsed.common.timeout);
                sandbox.write.push(dir);
                return run_harness_step(&profile, &sit, text, sandbox);
            }
            Some(harness::Step::CodexSnapshot) => {
                let sandbox = profile.sandbox_spec(&sit.places, parsed.common.timeout);
                return run_harness_step(&profile, &sit, text, sandbox);
            }
            Some(harness::Step::CodexExec {
                command,
                shell,
                run,
            }) => {
                parsed.command = RunCommand::String {
                    text: command,
                    positional: vec![shell],
                };
                harness_run = Some(run);
            }
            None => {}
        }
    }
    let input = match parsed.command {
        RunCommand::List(argv) => {
            if argv.is_empty() {
                return error("nothing to run after `--`; write `safe-exec -- PROGRAM [ARG...]`");
            }
            CommandInput::List(argv)
        }
        RunCommand::String { text, positional } => CommandInput::String { text, positional },
        RunCommand::Stdin => {
            if std::io::stdin().is_terminal() {
                return error(
                    "no command given. safe-exec is not an interactive shell: run `safe-exec -c 'COMMAND'` or `safe-exec -- PROGRAM ARGS`, or pipe a script to it (see `safe-exec --help`)",
                );
            }
            let mut script = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut script) {
                return deny_line(&format!(
                    "the script on standard input is not readable text: {e}"
                ));
            }
            CommandInput::String {
                text: script,
                positional: vec!["safe-exec".into()],
            }
        }
    };
    // safe-exec's own deciding subcommands, run through the prefix or the
    // configured shell (an agent running its hook command through its
    // shell): run them directly, they start no command of the agent's.
    if let Some(argv) = entry::own_subcommand(&input, &profile, &sit) {
        return entry::exec_self(&argv);
    }
    if entry::runs_own_setup(&input, &profile, &sit) {
        return deny_line(
            "`safe-exec setup` writes the agent's own settings, which the sandbox protects; it does not run through safe-exec's shell or prefix (try: run `safe-exec setup ...` in your own terminal, outside the agent)",
        );
    }
    let layer_opts = decide::LayerOptions {
        session: parsed.common.session.clone(),
        agent: parsed.common.agent.clone(),
        record: true,
        opts: serde_json::json!({"profile": profile.name, "timeout": parsed.common.timeout}),
        metadata: serde_json::json!({}),
    };
    let judged = pipeline::judge(&input, &profile, &sit, &layer_opts);
    let decided = &judged.decided;
    let mut life = match judged.lifecycle(
        &profile,
        selection.system.hooks_dir.as_deref(),
        &input,
        &sit,
    ) {
        Ok(l) => l,
        Err(e) => return error(e),
    };
    let mut verdict = judged.gated(&mut life, |verdict| {
        for w in &verdict.warnings {
            eprintln!("safe-exec: warning: {w}");
        }
    });
    match verdict.decision {
        Decision::Deny => return refuse(&mut life, &verdict),
        Decision::Ask => {
            let program = decided
                .model
                .segments
                .first()
                .map(|s| s.program.clone())
                .unwrap_or_default();
            let timeout = Duration::from_secs(profile.doc.confirmation.timeout_seconds);
            let agent = entry::under_agent(&parsed.common);
            let mut token_problem = None;
            let answer = if let Some(token) = parsed.common.approval.as_deref() {
                // Approved by the agent's user through `hook --rewrite`.
                match approval::redeem(
                    &sit.places.state,
                    token,
                    &input.raw(),
                    &sit.places.cwd,
                    &layer_opts.session_id(),
                ) {
                    Ok(()) => Answer::Yes,
                    Err(e) => {
                        token_problem = Some(e);
                        Answer::No
                    }
                }
            } else if pending_approved(&input, &sit) {
                // Approved by the agent's user when the hook asked.
                Answer::Yes
            } else if agent.is_some() {
                // The agent must not answer its own confirmation: under an
                // agent the command's terminal is the agent's.
                Answer::NoTerminal
            } else if sit.interactive || std::io::stdin().is_terminal() {
                confirm::ask(&verdict, &input.raw(), &program, timeout)
            } else {
                Answer::NoTerminal
            };
            life.confirmed(answer == Answer::Yes);
            if answer != Answer::Yes {
                let under = agent
                    .map(|a| format!("confirmation is needed and, under an agent ({a}), it is not read from the command's terminal; ask the user to approve it in the agent"));
                let why = match (&token_problem, &under, answer) {
                    (Some(t), _, _) => {
                        format!("confirmation is needed and the approval given is not valid: {t}")
                    }
                    (None, Some(u), _) => u.clone(),
                    (None, None, Answer::NoTerminal) => {
                        "confirmation is needed and there is no terminal to ask on".to_string()
                    }
                    (None, None, Answer::Timeout) => {
                        "confirmation is needed and nobody answered in time".to_string()
                    }
                    _ => "confirmation was refused".to_string(),
                };
                let asked: Vec<String> = verdict
                    .reasons
                    .iter()
                    .filter(|r| r.decision == Decision::Ask)
                    .map(|r| r.line())
                    .collect();
                let why = if asked.is_empty() {
                    why
                } else {
                    format!("{why}; it was needed because: {}", asked.join("; "))
                };
                verdict.add(
                    Layer::Confirmation,
                    crate::policy::ReasonId::ConfirmationRefused,
                    Decision::Deny,
                    why,
                    None,
                );
                return refuse(&mut life, &verdict);
            }
        }
        Decision::Allow => {}
    }
    if let Err(why) = life.record_decision(&verdict) {
        life.refused(&verdict);
        return deny_line(&why);
    }
    let mut plan = exec_plan(
        &input,
        &decided.model,
        &profile,
        &sit,
        parsed.errexit,
        parsed.common.timeout,
    );
    open_form_network(&mut plan, &verdict);
    if let Some(run) = harness_run
        && plan.argv.first().map(|a| a.as_os_str())
            == Some(std::ffi::OsStr::new(&profile.doc.shell.interpreter))
    {
        // Run Codex's whole wrapper (its snapshot, variables and PATH) so
        // the command sees what Codex meant it to; what was judged is the
        // model's command inside it.
        plan.argv = vec![
            profile.doc.shell.interpreter.clone().into(),
            "-c".into(),
            run.into(),
        ];
    }
    if let Some(f) = parsed.common.cwd_out.as_deref() {
        entry::carry_cwd(&mut plan, &profile.doc.shell.interpreter, f);
    }
    entry::strip_self_from_path(&mut plan.env);
    plan.supervise |= life.needs_result();
    let result = run::execute(plan);
    life.finished(&result);
    // The process exits next: freeing the profile (its rules, registry and
    // path caches) would only cost time. Plain data, no side effect on drop.
    std::mem::forget(profile);
    match result {
        Ok(outcome) => outcome.exit_code,
        Err(e) => {
            eprintln!("safe-exec: error: {e}");
            e.exit_code()
        }
    }
}

/// Whether the user already approved this command when the hook asked
/// (Claude Code with safe-exec as its shell or prefix): the model's
/// command is the whole string, or the `eval '...'` of Claude Code's
/// wrapper (`... && eval 'CMD' < /dev/null && pwd -P >| $TMPDIR/claude-XXXX-cwd`).
fn pending_approved(input: &CommandInput, sit: &Situation) -> bool {
    let raw = input.raw();
    let mut candidates = vec![raw.clone()];
    if let Some(m) = claude_eval(&raw) {
        candidates.push(m);
    }
    candidates
        .iter()
        .any(|c| approval::take_pending(&sit.places.state, c, &sit.places.cwd))
}

/// The model's command inside Claude Code's wrapper, if `raw` is one.
/// Claude Code quotes the command only when it must: a single word of
/// safe characters stays bare (`eval ./build.sh < /dev/null`), anything
/// else is one single-quoted word with `'` written as `'"'"'`. The cwd
/// sentinel is written in Claude Code's temp directory (`$TMPDIR`, or
/// `CLAUDE_CODE_TMPDIR`), whichever that is.
fn claude_eval(raw: &str) -> Option<String> {
    static R: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = R
        .get_or_init(|| {
            regex::Regex::new(
                r"(?s)^(.*?) && eval (?:'(.*)'|([A-Za-z0-9_\-.,:/@+=]+)) < /dev/null && pwd -P >\| /(?:[^ ']*/)?claude-[0-9a-f]+-cwd$",
            )
            .ok()
        })
        .as_ref()?;
    let caps = re.captures(raw)?;
    // Only Claude Code's own steps may stand before the `eval`: the
    // approval is for the model's command, nothing may ride on it.
    if !claude_prefix_ok(caps.get(1)?.as_str()) {
        return None;
    }
    if let Some(bare) = caps.get(3) {
        return Some(bare.as_str().to_string());
    }
    let inner = caps.get(2)?.as_str().to_string();
    let text = inner.replace("'\"'\"'", "'");
    // Any other quote would mean the text is not one quoted word.
    (!inner.replace("'\"'\"'", "").contains('\'')).then_some(text)
}

/// Whether `prefix` (what stands before ` && eval` in the wrapper) is made
/// only of Claude Code 2.1.330's own steps (measured): sourcing its
/// snapshot, switching extglob off (bash and zsh forms) and removing the
/// aliases/functions it shadows.
fn claude_prefix_ok(prefix: &str) -> bool {
    static R: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(step) = R
        .get_or_init(|| {
            regex::Regex::new(concat!(
                r"^(?:",
                r"source (?:'[^']*'|[^\s'\x22;&|<>$`]+) 2>/dev/null \|\| true",
                r"|(?:\\builtin )?shopt -u extglob 2>/dev/null \|\| true",
                r"|\{ \\builtin shopt -u extglob \|\| \\builtin setopt [A-Z_ ]+; \} >/dev/null 2>&1 \|\| true",
                r"|\{ \\builtin unalias -- '[A-Za-z0-9_-]+'; \\builtin unset -f -- '[A-Za-z0-9_-]+'; \} >/dev/null 2>&1 \|\| true",
                r")$"
            ))
            .ok()
        })
        .as_ref()
    else {
        return false;
    };
    prefix.split(" && ").all(|p| step.is_match(p))
}

/// Records a refusal (audit, guard, `post_tool_use_failure`), prints the
/// refusal line and returns 126.
fn refuse(life: &mut Lifecycle, verdict: &crate::policy::Verdict) -> i32 {
    if let Err(why) = life.record_decision(verdict) {
        eprintln!("safe-exec: warning: {why}");
    }
    life.refused(verdict);
    deny_line(&verdict.refusal_line())
}

/// bash sets `$0` to its own `argv[0]` when `-c STRING` has no `NAME`, so
/// `make SHELL=...`, `subprocess.run(shell=True, executable=...)` and the
/// like see the same `$0` with safe-exec as their shell.
fn default_dollar0(parsed: &mut shell_args::RunArgs) {
    if parsed.name_given {
        return;
    }
    let argv0 = crate::sys::start::args_os()
        .into_iter()
        .next()
        .and_then(|a| a.into_string().ok());
    if let (RunCommand::String { positional, .. }, Some(a0)) = (&mut parsed.command, argv0)
        && let Some(first) = positional.first_mut()
    {
        *first = a0;
    }
}

/// Prints the refusal line and returns 126.
pub fn deny_line(reasons: &str) -> i32 {
    eprintln!("safe-exec: denied: {reasons}");
    EXIT_DENIED
}

/// Builds what will run: a simple literal command is executed directly (no
/// shell in between); anything else runs under the profile's shell.
pub fn exec_plan(
    input: &CommandInput,
    model: &CommandModel,
    profile: &Profile,
    sit: &Situation,
    errexit: bool,
    timeout: Option<u64>,
) -> ExecPlan {
    let argv = exec_argv(input, model, profile, errexit);
    let scrubbed = env::scrub(std::env::vars_os(), &profile.doc.env);
    let sandbox = profile.sandbox_spec(&sit.places, timeout);
    let supervisor = supervisor_spec(profile, sit, &sandbox);
    ExecPlan {
        argv,
        env: scrubbed.kept,
        cwd: sit.places.cwd.clone(),
        sandbox,
        supervisor: Some(supervisor),
        // Background jobs (`cmd &`) must not outlive safe-exec: supervise so
        // the whole process group is reaped when the command ends.
        supervise: model.constructs.background,
        // safe-exec exits with the command's code right after the run.
        ends_process: true,
    }
}

/// What [`exec_plan`] runs: the argv (the command itself when it is one
/// direct invocation, else the interpreter with `-c`). `check` shows it
/// without building the rest of the plan (the scrubbed environment and the
/// supervisor's spec, which only a run needs).
pub fn exec_argv(
    input: &CommandInput,
    model: &CommandModel,
    profile: &Profile,
    errexit: bool,
) -> Vec<OsString> {
    match (input, model.form) {
        (CommandInput::List(argv), Form::List) if is_direct(model) => {
            argv.iter().map(OsString::from).collect()
        }
        (CommandInput::String { .. }, Form::String) if is_direct(model) => {
            model.segments[0].argv().map(OsString::from).collect()
        }
        (CommandInput::List(argv), _) => argv.iter().map(OsString::from).collect(),
        (CommandInput::String { text, positional }, _) => {
            let mut v: Vec<OsString> = vec![OsString::from(&profile.doc.shell.interpreter)];
            if errexit {
                v.push("-e".into());
            }
            v.push("-c".into());
            v.push(text.into());
            v.extend(positional.iter().map(OsString::from));
            v
        }
    }
}

/// Runs one of an agent's recognised harness steps (a shell snapshot) with
/// the real shell, confined and supervised like any other run.
fn run_harness_step(
    profile: &Profile,
    sit: &Situation,
    text: &str,
    sandbox: crate::sandbox::SandboxSpec,
) -> i32 {
    let supervisor = Some(supervisor_spec(profile, sit, &sandbox));
    let plan = ExecPlan {
        argv: vec![
            profile.doc.shell.interpreter.clone().into(),
            "-c".into(),
            text.into(),
        ],
        env: env::scrub(std::env::vars_os(), &profile.doc.env).kept,
        cwd: sit.places.cwd.clone(),
        sandbox,
        supervisor,
        supervise: false,
        ends_process: true,
    };
    match run::execute(plan) {
        Ok(o) => o.exit_code,
        Err(e) => {
            eprintln!("safe-exec: error: {e}");
            e.exit_code()
        }
    }
}

/// What the supervisor watches for a run in `sandbox`.
fn supervisor_spec(
    profile: &Profile,
    sit: &Situation,
    sandbox: &crate::sandbox::SandboxSpec,
) -> crate::supervisor::SupervisorSpec {
    crate::supervisor::SupervisorSpec {
        write_roots: sandbox
            .write
            .iter()
            .map(|r| crate::sys::path::canonicalize(r).unwrap_or_else(|_| r.clone()))
            .collect(),
        protected: profile.doc.paths.protected.clone(),
        exec_judge: Some(crate::policy::exec_judge(std::sync::Arc::clone(
            &profile.rules,
        ))),
        home: Some(sit.places.home.clone()),
        loopback: sandbox.network == crate::sandbox::NetworkAccess::Loopback,
        baselines: Some(crate::supervisor::protect::shared::dir_in(
            &sit.places.state,
        )),
        deny_read: sandbox.deny_read.clone(),
    }
}

/// An accepted structured network form (seed 002) gets exactly the network
/// it needs, and only when the profile's network is otherwise off.
pub fn open_form_network(plan: &mut ExecPlan, verdict: &crate::policy::Verdict) {
    open_form_network_in(&mut plan.sandbox, verdict);
}

/// [`open_form_network`] on the sandbox spec alone.
pub fn open_form_network_in(
    sandbox: &mut crate::sandbox::SandboxSpec,
    verdict: &crate::policy::Verdict,
) {
    if let Some(need) = verdict.network
        && matches!(
            sandbox.network,
            crate::sandbox::NetworkAccess::Off | crate::sandbox::NetworkAccess::Loopback
        )
        && verdict.decision != Decision::Deny
    {
        sandbox.network = need;
    }
}

/// Names bash runs as builtins (so a same-named binary like `/usr/bin/test`
/// or `/usr/bin/kill` would behave differently): always run through bash.
const SHELL_BUILTINS: &[&str] = &[
    "cd",
    "exec",
    "export",
    "set",
    "shopt",
    "unset",
    "eval",
    "source",
    ".",
    "exit",
    "wait",
    "pushd",
    "popd",
    "[[",
    ":",
    "command",
    "type",
    "test",
    "[",
    "let",
    "read",
    "printf",
    "echo",
    "kill",
    "umask",
    "ulimit",
    "alias",
    "unalias",
    "hash",
    "times",
    "trap",
    "declare",
    "typeset",
    "local",
    "readonly",
    "mapfile",
    "readarray",
    "getopts",
    "jobs",
    "fg",
    "bg",
    "disown",
    "history",
    "fc",
    "enable",
    "help",
    "logout",
    "return",
    "shift",
    "suspend",
    "builtin",
    "caller",
    "dirs",
    "compgen",
    "complete",
    "true",
    "false",
    "pwd",
];

/// One top-level command whose words are all literal, with nothing for a
/// shell to do: running its argv directly is exactly what bash would run.
pub(crate) fn is_direct(model: &CommandModel) -> bool {
    if model.segments.len() != 1 || !model.unknown.is_empty() {
        return false;
    }
    let s = &model.segments[0];
    let c = &model.constructs;
    s.depth == 0
        && s.wrappers.is_empty()
        && s.assignments.is_empty()
        && s.redirections.is_empty()
        && s.unknown.is_none()
        && s.words.iter().all(|w| w.literal)
        && !SHELL_BUILTINS.contains(&s.program.as_str())
        && !(c.pipeline
            || c.chaining
            || c.background
            || c.subshell_or_group
            || c.substitution
            || c.process_substitution
            || c.heredoc
            || c.control_flow
            || c.redirection)
}

#[cfg(test)]
mod tests {
    use super::claude_eval;

    fn wrap(eval_arg: &str, tmp: &str) -> String {
        format!(
            "source /h/.claude/shell-snapshots/s.sh 2>/dev/null || true && eval {eval_arg} < /dev/null && pwd -P >| {tmp}/claude-88ec-cwd"
        )
    }

    #[test]
    fn claude_eval_reads_the_bare_and_the_quoted_forms() {
        for tmp in ["/tmp", "/var/tmp/world-x1/tmp", "/home/u/t"] {
            for word in [
                "./build.sh",
                "ls",
                "true",
                "./a-b",
                "a/b",
                "./a:b",
                "./a=b",
                "./a@b",
                "./a+b",
                "./a,b",
            ] {
                assert_eq!(
                    claude_eval(&wrap(word, tmp)).as_deref(),
                    Some(word),
                    "{word} {tmp}"
                );
            }
            assert_eq!(
                claude_eval(&wrap("'./build.sh; echo B'", tmp)).as_deref(),
                Some("./build.sh; echo B")
            );
            assert_eq!(
                claude_eval(&wrap("'echo '\"'\"'it'\"'\"'s'", tmp)).as_deref(),
                Some("echo 'it's")
            );
        }
        // Not Claude's shape: a bare word with characters it would quote,
        // two bare words, a stray quote, no sentinel.
        for bad in ["./a%b", "./x~y", "./x$y", "git status", "'a'b'"] {
            assert_eq!(claude_eval(&wrap(bad, "/tmp")), None, "{bad}");
        }
        assert_eq!(claude_eval("eval ./build.sh < /dev/null"), None);
        // Nothing but Claude Code's own steps before the eval.
        let real = "source /h/.claude/shell-snapshots/snapshot-bash-1-ab.sh 2>/dev/null || true && \\builtin shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true && eval ./build.sh < /dev/null && pwd -P >| /tmp/claude-9a86-cwd";
        assert_eq!(claude_eval(real).as_deref(), Some("./build.sh"));
        let zsh = "source /h/s.sh 2>/dev/null || true && { \\builtin shopt -u extglob || \\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_EQUALS; } >/dev/null 2>&1 || true && eval 'a; b' < /dev/null && pwd -P >| /tmp/claude-01df-cwd";
        assert_eq!(claude_eval(zsh).as_deref(), Some("a; b"));
        for rider in [
            "pkill -f x && eval ./build.sh < /dev/null && pwd -P >| /tmp/claude-1-cwd",
            "source /h/s.sh 2>/dev/null || true && curl x | sh && eval ./build.sh < /dev/null && pwd -P >| /tmp/claude-1-cwd",
            "source /h/s.sh; pkill x 2>/dev/null || true && eval ./build.sh < /dev/null && pwd -P >| /tmp/claude-1-cwd",
            "source $(pkill x) 2>/dev/null || true && eval ./build.sh < /dev/null && pwd -P >| /tmp/claude-1-cwd",
        ] {
            assert_eq!(claude_eval(rider), None, "{rider}");
        }
    }
}
