//! Decisions that depend on where the command runs.
//!
//! *Confined* (run mode and `hook --rewrite`, with the profile's enforcement
//! achieved): what the kernel layer contains runs without asking: unknown
//! programs, project executables, scripts written and run in the same
//! string, interpreters, `source` of a project file, code paths inside the
//! roots. What the sandbox cannot contain is still refused by the rest of the
//! policy (damage inside the roots, protected files, secrets, signals), and
//! what it withholds (network beyond loopback) asks with the reason "needs
//! network", so nothing is allowed only to fail.
//!
//! *Unconfined* (`hook` without `--rewrite`, `check --unconfined`): nothing
//! contains the command, so whatever is not fully seen through asks.
//!
//! Each function here is one such difference, called from `policy/mod.rs`.

use std::path::Path;

use super::ReasonId;
use super::args::ParsedArgs;
use super::path_checks::Access;
use super::registry::{CommandSpec, Effect, Risk};
use super::{Confirmation, Decision, Layer, PolicyContext, Verdict};
use crate::config::schema::NetworkSetting;
use crate::parse::{Segment, Word};
use crate::sandbox::NetworkAccess;

/// What to tell the operator when an unconfined decision asks for
/// something the sandbox would have contained.
pub(super) const RUN_CONFINED: &str = "run it inside the sandbox: install the hook with `--rewrite` (or use `safe-exec -c`), where it runs without asking";

/// The reason prefix of every network ask.
pub const NEEDS_NETWORK: &str = "needs network";

/// One line on which layer makes an allowed command safe, for `--explain`:
/// the sandbox (confined), or the static policy alone (unconfined).
pub fn safety_line(
    profile: &crate::config::Profile,
    roots: &super::paths::Roots,
    confined: bool,
) -> String {
    if !confined {
        return "seen through by the static policy: nothing confines it here".into();
    }
    let writes = roots
        .write
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let loopback = profile.doc.sandbox.network >= NetworkSetting::Loopback
        && crate::supervisor::loopback_enforced();
    let net = match profile.doc.sandbox.network {
        NetworkSetting::Full => "network open (the profile says so)",
        _ if loopback => "no network but loopback",
        _ => "no network",
    };
    format!(
        "runs confined: writes only in {writes}, {net}, secrets unreadable ([paths] deny_read), no process outlives it"
    )
}

/// An unknown program in a confined run: the sandbox contains it. Returns
/// whether it was handled (otherwise the profile's `unknown_commands`
/// applies). Unknown subcommands of registered programs (`git frob`) are
/// not handled: the program may change the project's history.
pub fn unregistered(ctx: &PolicyContext, v: &mut Verdict, missing: &str) -> bool {
    let ask = ctx.profile.doc.policy.unknown_commands == crate::config::schema::Action::Ask;
    if !ctx.confined || !ask || missing.contains(' ') {
        return false;
    }
    v.note(
        Layer::Policy,
        format!("{missing}: not in the registry; runs confined, the sandbox contains it"),
    );
    v.risk = v.risk.max(Risk::Write);
    true
}

/// A program run by path from outside the system directories (`./gradlew`,
/// `bin/test`, `.venv/bin/python`, `~/bin/tool`): allowed confined; asks
/// unconfined, saying what it is.
pub fn project_program(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict, dir: &Path) {
    project_program_named(&seg.words[0].value, ctx, v, dir);
}

/// [`project_program`] of the program `written` (a wrapper in front of
/// the segment's own program: `nice`, `env`, `xargs`).
pub fn project_program_named(written: &str, ctx: &PolicyContext, v: &mut Verdict, dir: &Path) {
    if ctx.confined {
        v.note(
            Layer::Policy,
            format!(
                "`{written}` is a program from `{}`; runs confined",
                dir.display()
            ),
        );
        v.risk = v.risk.max(Risk::Write);
        return;
    }
    let d = super::decision_of(ctx.profile.doc.policy.unknown_commands).max(Decision::Ask);
    v.add(
        Layer::Policy,
        ReasonId::RegistryUntrustedPath,
        d,
        format!(
            "`{written}` is a program from `{}`, not a system program: what it does cannot be checked, and nothing confines it here",
            dir.display()
        ),
        Some(RUN_CONFINED.into()),
    );
}

/// What each redirection of `model` writes, where the string shows it: a
/// heredoc or here-string fed to the writer (`cat <<'EOF' > t.py`), or the
/// arguments of `echo`/`printf`.
pub fn written_text(model: &crate::parse::CommandModel) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    for s in &model.segments {
        let text = match (&s.stdin_data, s.program.as_str()) {
            (Some(d), _) => Some(d.clone()),
            (None, "echo" | "printf") => Some(s.argv_line(1)),
            _ => None,
        };
        let Some(text) = text else { continue };
        for r in s.redirections.iter().filter(|r| r.writes) {
            out.push((super::paths::resolve(&s.cwd, &r.target), text.clone()));
        }
    }
    out
}

/// Shells whose script is parsed as commands.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash"];

/// A file that this same command writes and then runs (`cat <<'EOF' >
/// t.py ... EOF` then `python t.py`). Confined: allowed, but what the
/// string shows of the file is checked: a shell script's commands by the
/// whole policy, other code by the rules (like `python -c`). Unconfined:
/// unknown, since nothing contains it.
pub fn written_then_run(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    path: &Path,
    file: &str,
    name: &str,
    code: &mut Vec<String>,
) {
    if !ctx.confined {
        super::unknown_with(
            v,
            ctx,
            &format!(
                "`{name}` runs `{file}`, which this same command writes; its content cannot be checked, and nothing confines it here"
            ),
            RUN_CONFINED,
        );
        return;
    }
    v.note(
        Layer::Policy,
        format!("`{name}` runs `{file}`, which this command writes; runs confined"),
    );
    v.risk = v.risk.max(Risk::Write);
    let Some((_, text)) = ctx.written_text.iter().rev().find(|(p, _)| p == path) else {
        return;
    };
    let shebang = text.lines().next().unwrap_or("");
    let shell = SHELLS.contains(&name)
        || (seg.words[0].value == file
            && (!shebang.starts_with("#!")
                || SHELLS.iter().any(|s| {
                    shebang.ends_with(&format!("/{s}")) || shebang.ends_with(&format!(" {s}"))
                })));
    if !shell {
        code.push(text.clone());
        super::code_paths(name, text, seg, ctx, v);
        return;
    }
    let pctx = crate::parse::ParseContext::new(seg.cwd.as_path(), ctx.roots.home.as_path());
    let model = crate::parse::parse_string(text, &pctx);
    let inner = super::evaluate(&model, ctx, Some(text));
    for r in inner
        .reasons
        .iter()
        .filter(|r| r.decision != Decision::Allow)
    {
        v.add_data(
            r.layer,
            &r.rule,
            r.decision,
            format!(
                "in `{file}`, which this command writes and runs: {}",
                r.message
            ),
            r.suggestion.clone(),
        );
    }
    v.risk = v.risk.max(inner.risk);
    for w in inner.warnings {
        v.warn(w);
    }
}

/// `source FILE` / `. FILE` of a readable file inside a writable root
/// (`source .venv/bin/activate`) in a confined run. Returns whether the
/// segment's "unknown" is lifted.
pub fn source_inside_roots(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) -> bool {
    if !ctx.confined || !matches!(seg.program.as_str(), "source" | ".") {
        return false;
    }
    let Some(f) = seg.words.get(1).filter(|w| !w.unresolved && !w.glob) else {
        return false;
    };
    let p = ctx.resolve(seg, &f.value);
    let inside = ctx.roots.write.iter().any(|w| p.starts_with(w));
    if !inside || ctx.roots.check_read(&p).is_err() {
        return false;
    }
    v.note(
        Layer::Policy,
        format!(
            "`{} {}` runs a project file; runs confined",
            seg.program, f.value
        ),
    );
    v.risk = v.risk.max(Risk::Write);
    true
}

/// The file of a `source FILE` that is not lifted: still a read, checked
/// like one (`source .env` reads a secret).
pub fn source_reads(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    if !matches!(seg.program.as_str(), "source" | ".") {
        return;
    }
    if let Some(f) = seg.words.get(1).filter(|w| !w.unresolved && !w.glob) {
        super::path_operand(seg, ctx, v, f, Access::Read, false, &seg.program);
    }
}

/// Variables that name where code is loaded from, and are fine when they
/// point inside the roots of a confined run (`PYTHONPATH=. pytest`).
const CODE_PATH_VARIABLES: &[&str] = &["PYTHONPATH", "NODE_PATH"];

/// `NODE_OPTIONS` that only tune the runtime (`--max-old-space-size=4096`),
/// none that load code (`--require`, `--import`, `--loader`).
fn harmless_node_options(value: &str) -> bool {
    const SAFE: &[&str] = &[
        "--max-old-space-size",
        "--max_old_space_size",
        "--max-semi-space-size",
        "--stack-size",
        "--no-warnings",
        "--no-deprecation",
        "--trace-warnings",
        "--trace-deprecation",
        "--enable-source-maps",
        "--experimental-vm-modules",
        "--unhandled-rejections",
        "--dns-result-order",
        "--openssl-legacy-provider",
        "--no-experimental-fetch",
    ];
    let value = value.trim_matches(['"', '\'']);
    !value.trim().is_empty()
        && value.split_whitespace().all(|t| {
            let flag = t.split('=').next().unwrap_or(t);
            SAFE.contains(&flag) && !t.contains('$') && !t.contains('`')
        })
}

/// Every entry of a code path inside a writable root; `$NAME` (the
/// caller's own value, `PYTHONPATH=$PYTHONPATH:.`) is kept as it is.
fn inside_roots(name: &str, value: &str, cwd: &Path, ctx: &PolicyContext) -> bool {
    let own = [format!("${name}"), format!("${{{name}}}")];
    value.split(':').all(|e| {
        if own.iter().any(|o| o == e) {
            return true;
        }
        // `$(pwd)`: the working directory, like `$PWD`.
        let e = if matches!(e, "$(pwd)" | "`pwd`") {
            "."
        } else {
            e
        };
        if e.contains('$') || e.contains('`') {
            return false;
        }
        let p = super::paths::resolve_anchored(
            &ctx.roots.anchors,
            cwd,
            if e.is_empty() { "." } else { e },
        );
        ctx.roots.write.iter().any(|w| p.starts_with(w))
    })
}

/// `export PYTHONPATH=.` / a bare `PYTHONPATH=src` on its own: the
/// variable set for later commands. Fine when every value the command
/// gives it points inside the roots (confined or not: the later commands
/// are judged on their own).
pub fn assigned_code_path_ok(
    name: &str,
    model: &crate::parse::CommandModel,
    ctx: &PolicyContext,
) -> bool {
    if !CODE_PATH_VARIABLES.contains(&name) {
        return false;
    }
    let mut values = Vec::new();
    for s in &model.segments {
        for a in s.assignments.iter().filter(|a| a.name == name) {
            values.push((a.value.clone(), s.cwd.clone()));
        }
        if matches!(
            s.program.as_str(),
            "export" | "declare" | "typeset" | "readonly" | "local"
        ) {
            for w in &s.words[1..] {
                if let Some((n, val)) = w.value.split_once('=')
                    && n == name
                {
                    values.push((val.to_string(), s.cwd.clone()));
                }
            }
        }
    }
    !values.is_empty()
        && values
            .iter()
            .all(|(val, cwd)| inside_roots(name, val, cwd, ctx))
}

/// `PYTHONPATH=DIR` / `NODE_PATH=DIR`: every entry inside a writable root.
/// Confined: allowed (returns true). Unconfined: asks (the project's code
/// runs unseen) and returns true, so the assignment is not denied as an
/// injection. Anything else returns false: the caller's check applies.
pub fn code_path_assignment(
    name: &str,
    value: &str,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) -> bool {
    if name == "NODE_OPTIONS" && harmless_node_options(value) {
        v.note(
            Layer::Policy,
            format!("`NODE_OPTIONS={value}` only tunes the runtime"),
        );
        return true;
    }
    if !CODE_PATH_VARIABLES.contains(&name) {
        return false;
    }
    if !inside_roots(name, value, &seg.cwd, ctx) {
        return false;
    }
    if ctx.confined {
        v.note(
            Layer::Policy,
            format!("`{name}={value}` loads code from inside the roots; runs confined"),
        );
        v.risk = v.risk.max(Risk::Write);
    } else {
        v.add(
            Layer::Policy,
            ReasonId::PolicyCodePath,
            Decision::Ask,
            format!(
                "`{name}={value}` loads the project's code, which cannot be checked, and nothing confines it here"
            ),
            Some(RUN_CONFINED.into()),
        );
    }
    true
}

/// Whether an interpreter invocation runs code (anything but `--version` /
/// `--help`): a script, inline code, a module, a Makefile, standard input.
fn runs_code(p: &ParsedArgs, seg: &Segment) -> bool {
    let informational = |w: &str| {
        matches!(
            w,
            "--version" | "-V" | "-v" | "--help" | "-h" | "-help" | "version"
        )
    };
    !p.operands.is_empty()
        || seg.stdin_data.is_some()
        || seg.pipe_index > 0
        || p.options.is_empty()
        || !p.options.iter().all(|o| informational(&o.written))
}

/// An interpreter (or a tool that runs the project's code: `make`, `npm
/// test`) in an unconfined decision: the code cannot be seen, so it asks.
pub fn unconfined_interpreter(
    name: &str,
    spec: &CommandSpec,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    if ctx.confined || !spec.interpreter || !runs_code(p, seg) {
        return;
    }
    // `javac -proc:none`, `cargo package --no-verify`: the options that
    // stop it running the project's code (a response file can still name
    // processors: `unconfined_named_content`).
    if p.options.iter().any(|o| {
        o.spec
            .names
            .iter()
            .any(|n| spec.code_off.iter().any(|off| off == n))
    }) {
        return;
    }
    v.add(
        Layer::Policy,
        ReasonId::PolicyUnconfinedCode,
        Decision::Ask,
        format!("`{name}` runs code that cannot be fully checked, and nothing confines it here"),
        Some(RUN_CONFINED.into()),
    );
}

/// Unconfined: what a program reads because its *input* names it, content
/// the policy does not parse — options from a response file (`gcc @opts`,
/// `javac @args`, `rustc @args`: `-wrapper`, `-processorpath`,
/// `-Clinker=` come in that way), files named by `#include` or
/// `include_str!` (entries with `reads_named`), a `--files0-from` list,
/// a roff page's `.so` (`man -l`, `man ./x.1`). Not seen through, so it
/// asks; confined, the sandbox contains what is read and run.
pub fn unconfined_named_content(
    name: &str,
    spec: &CommandSpec,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    if ctx.confined {
        return;
    }
    let response = spec
        .response_files
        .then(|| {
            p.operands
                .iter()
                .find(|(w, _)| w.value.len() > 1 && w.value.starts_with('@'))
        })
        .flatten();
    let why = if let Some((w, _)) = response {
        format!(
            "`{name} {}` takes options from a response file, which are not seen",
            w.raw()
        )
    } else if spec.reads_named && runs_code(p, seg) {
        format!(
            "`{name}` reads the files its input names (`#include`, `include_str!`, response files), which are not seen"
        )
    } else if let Some(o) = p
        .options
        .iter()
        .find(|o| o.spec.effects.contains(&Effect::ReadsNamed))
    {
        format!(
            "`{name} {}` uses file names from content that is not seen (a list of names, a page's `.so`, a stored name)",
            o.written
        )
    } else if name == "man" && p.operands.iter().any(|(w, _)| w.value.contains('/')) {
        format!("`{name}` formats a local file, whose `.so` requests read files that are not seen")
    } else {
        return;
    };
    v.add(
        Layer::Policy,
        ReasonId::PolicyUnconfinedNamed,
        Decision::Ask,
        format!("{why}, and nothing confines it here"),
        Some(RUN_CONFINED.into()),
    );
}

/// A program file given to a command that is not an interpreter but runs
/// it (`sed -f x.sed`, `awk -f x.awk`, `gawk -i lib`): in an unconfined
/// decision its content is code that is not seen (GNU sed's `e` command,
/// awk's `system()`), so it asks, like `python3 x.py`. Standard input and
/// a file this same string writes are judged where the value is checked.
pub fn unconfined_program_file(
    name: &str,
    spec: &CommandSpec,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    use super::registry::ValueType;
    if ctx.confined || spec.interpreter {
        return;
    }
    // gawk's `-i FILE` (`--include`) loads awk source from FILE or
    // `FILE.awk` on AWKPATH (`.` first); `-i inplace` is the in-place
    // editing extension that ships with gawk.
    if matches!(name, "awk" | "gawk")
        && let Some(o) = p
            .options
            .iter()
            .find(|o| o.name == "-i" && o.value.as_ref().is_some_and(|w| w.value != "inplace"))
    {
        v.add(
            Layer::Policy,
            ReasonId::PolicyUnconfinedCode,
            Decision::Ask,
            format!(
                "`{name} {}` loads awk source that cannot be checked, and nothing confines it here",
                o.written
            ),
            Some(RUN_CONFINED.into()),
        );
        return;
    }
    let values = p
        .options
        .iter()
        .filter(|o| o.spec.value_type == Some(ValueType::Script))
        .filter_map(|o| o.value.as_ref())
        .chain(
            p.operands
                .iter()
                .filter(|(_, t)| *t == ValueType::Script)
                .map(|(w, _)| *w),
        );
    for w in values {
        if super::values::is_descriptor_path(&w.value)
            || ctx.written.contains(&ctx.resolve(seg, &w.value))
        {
            continue;
        }
        v.add(
            Layer::Policy,
            ReasonId::PolicyUnconfinedCode,
            Decision::Ask,
            format!(
                "`{name}` runs the program in `{}`, which cannot be checked, and nothing confines it here",
                w.value
            ),
            Some(RUN_CONFINED.into()),
        );
        return;
    }
}

/// An operand whose value comes from an expansion (`$(...)`, `$VAR`), of a
/// program with options that run programs, write or delete: unconfined, the
/// value could turn into such an option. Option values (`git commit -m
/// "$(...)"`) and programs without such options are seen through.
pub fn unconfined_expanded_operand(
    name: &str,
    spec: &CommandSpec,
    p: &ParsedArgs,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    if ctx.confined || spec.option_style == super::registry::OptionStyle::None {
        return;
    }
    let Some((w, _)) = p.operands.iter().find(|(w, _)| w.unresolved) else {
        return;
    };
    let risky = spec.options.iter().map(|o| o.spec()).any(|o| {
        o.effects.iter().any(|e| match e {
            Effect::Exec | Effect::Dangerous | Effect::Write | Effect::Delete => true,
            Effect::Network
            | Effect::Recursive
            | Effect::Blocked
            | Effect::Ask
            | Effect::Template
            | Effect::WritesOperands
            | Effect::Code
            | Effect::Last
            | Effect::Filter
            | Effect::ReadsTree
            | Effect::ReadsNamed => false,
        }) || o.value_type == Some(super::registry::ValueType::Command)
    }) || (spec.unknown_options == super::registry::UnknownOptions::Allow
        && spec.risk > Risk::Safe);
    if risky {
        v.add(
            Layer::Policy,
            ReasonId::PolicyUnconfinedExpansion,
            Decision::Ask,
            format!(
                "`{name} {}`: the expansion's result could be read as one of `{name}`'s options, and nothing confines it here",
                w.raw()
            ),
            Some(format!(
                "put the value after `--`, or pass it literally; or {RUN_CONFINED}"
            )),
        );
    }
}

/// A command substitution whose command changes something (`ls $(rm -rf
/// x)`), in an unconfined decision: only read-only substitutions are seen
/// through (`echo "$(git rev-parse HEAD)"`).
pub fn unconfined_substitution(seg: &Segment, risk: Risk, ctx: &PolicyContext, v: &mut Verdict) {
    use crate::parse::Origin;
    if ctx.confined
        || risk == Risk::Safe
        || !matches!(
            seg.origin,
            Origin::Substitution | Origin::ProcessSubstitution
        )
    {
        return;
    }
    v.add(
        Layer::Policy,
        ReasonId::PolicyUnconfinedSubstitution,
        Decision::Ask,
        format!(
            "the substitution runs `{}`, which changes files, and nothing confines it here",
            seg.argv_line(0)
        ),
        Some(format!(
            "run `{}` as a command of its own",
            seg.argv_line(0)
        )),
    );
}

/// An unresolved read path in a confined run (`cat "$(ls -t | head -1)"`):
/// the sandbox keeps secrets unreadable, so it is not asked about.
/// Only command substitutions: other expansions in a path operand
/// (`${HOME:0:1}`, `$X`) stay unknown (contract, first clarifications).
pub fn unresolved_read_ok(ctx: &PolicyContext, w: &Word, t: Access, destructive: bool) -> bool {
    ctx.confined
        && t == Access::Read
        && !destructive
        && w.value.contains("$(")
        && !w.value.contains("${")
        && !w.value.replace("$(", "").contains('$')
}

/// A program or option that reaches other hosts. Confined, the sandbox
/// withholds the network: ask "needs network" (a confirmed run gets the
/// network), never allow-then-fail. Unconfined it is seen through and only
/// warned about.
pub fn needs_network(name: &str, ctx: &PolicyContext, v: &mut Verdict) {
    if !ctx.confined || ctx.profile.doc.sandbox.network == NetworkSetting::Full {
        // The command really reaches other hosts: seed 002's warning.
        v.warn(super::NETWORK_WARNING.into());
        return;
    }
    v.add(
        Layer::Policy,
        ReasonId::NetworkNeeded,
        Decision::Ask,
        format!(
            "{NEEDS_NETWORK}: `{name}` reaches other hosts, and the sandbox runs commands without network (loopback at most)"
        ),
        Some("confirm it to run it with network, or run it yourself outside the agent".into()),
    );
    v.network = Some(NetworkAccess::Full);
}

/// Whether the profile lets confined commands reach loopback, and the
/// kernel layer enforces that they reach nothing else.
pub fn loopback_allowed(ctx: &PolicyContext) -> bool {
    // Confined, the profile allows loopback, and the kernel layer holds it
    // there.
    ctx.confined
        && ctx.profile.doc.sandbox.network >= NetworkSetting::Loopback
        && crate::supervisor::loopback_enforced()
}

/// The host of a URL or `HOST[:PORT][/PATH]` word, without the port.
fn url_host(u: &str) -> Option<String> {
    let lower = u.to_ascii_lowercase();
    let rest = match lower.split_once("://") {
        Some(("http" | "https", rest)) => rest,
        Some(_) => return None,
        None => lower.as_str(),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') || authority.is_empty() {
        return None;
    }
    let host = if let Some(r) = authority.strip_prefix('[') {
        r.split(']').next().unwrap_or("").to_string()
    } else {
        authority.split(':').next().unwrap_or("").to_string()
    };
    Some(host)
}

/// 127.0.0.0/8, ::1 and `localhost` (with or without a trailing dot).
fn is_loopback_host(h: &str) -> bool {
    if matches!(h, "localhost" | "localhost." | "::1") || h.ends_with(".localhost") {
        return true;
    }
    match h.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(a)) => a.is_loopback(),
        Ok(std::net::IpAddr::V6(a)) => a.is_loopback(),
        Err(_) => false,
    }
}

/// curl/wget options that take a value, and what the value is.
fn request_option(program: &str, opt: &str) -> Option<&'static str> {
    let curl = [
        ("-o", "write"),
        ("--output", "write"),
        ("-K", "read"),
        ("--config", "read"),
        ("-T", "read"),
        ("--upload-file", "read"),
        ("-c", "write"),
        ("--cookie-jar", "write"),
        ("-D", "write"),
        ("--dump-header", "write"),
        ("--trace", "write"),
        ("--trace-ascii", "write"),
        ("--output-dir", "write"),
        ("-d", "data"),
        ("--data", "data"),
        ("--data-binary", "data"),
        ("--data-raw", "value"),
        ("--data-urlencode", "data"),
        ("--json", "data"),
        ("-F", "form"),
        ("--form", "form"),
        ("-H", "value"),
        ("--header", "value"),
        ("-X", "value"),
        ("--request", "value"),
        ("-w", "value"),
        ("--write-out", "value"),
        ("-m", "value"),
        ("--max-time", "value"),
        ("--connect-timeout", "value"),
        ("--retry", "value"),
        ("-A", "value"),
        ("--user-agent", "value"),
        ("-u", "value"),
        ("--user", "value"),
        ("-b", "value"),
        ("--cookie", "value"),
        ("-e", "value"),
        ("--referer", "value"),
        ("-r", "value"),
        ("--range", "value"),
        ("-x", "proxy"),
        ("--proxy", "proxy"),
        ("--resolve", "proxy"),
        ("--connect-to", "proxy"),
        ("--unix-socket", "proxy"),
        ("--abstract-unix-socket", "proxy"),
        ("--url", "url"),
    ];
    let wget = [
        ("-O", "write"),
        ("--output-document", "write"),
        ("-P", "write"),
        ("--directory-prefix", "write"),
        ("-o", "write"),
        ("--output-file", "write"),
        ("-a", "write"),
        ("--append-output", "write"),
        ("-i", "read"),
        ("--input-file", "read"),
        ("--post-file", "read"),
        ("--body-file", "read"),
        ("--post-data", "value"),
        ("--body-data", "value"),
        ("--header", "value"),
        ("--method", "value"),
        ("-T", "value"),
        ("--timeout", "value"),
        ("-t", "value"),
        ("--tries", "value"),
        ("-U", "value"),
        ("--user-agent", "value"),
        ("-e", "proxy"),
        ("--execute", "proxy"),
        ("--use-askpass", "proxy"),
    ];
    let table: &[(&str, &str)] = if program == "wget" { &wget } else { &curl };
    table.iter().find(|(o, _)| *o == opt).map(|(_, k)| *k)
}

/// The URLs and file values of a curl/wget command, or `None` when some word
/// cannot be read (an expansion, a proxy or socket option, a non-http URL).
struct Request {
    urls: Vec<String>,
    reads: Vec<Word>,
    writes: Vec<Word>,
}

fn request(seg: &Segment) -> Option<Request> {
    let program = seg.program.as_str();
    let mut out = Request {
        urls: Vec::new(),
        reads: Vec::new(),
        writes: Vec::new(),
    };
    let words = &seg.words[1..];
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if w.unresolved {
            return None;
        }
        let a = w.value.as_str();
        if a.starts_with('-') && a.len() > 1 {
            let (opt, attached) = match a.split_once('=') {
                Some((o, val)) if a.starts_with("--") => (o, Some(val.to_string())),
                _ if !a.starts_with("--")
                    && a.len() > 2
                    && request_option(program, &a[..2]).is_some() =>
                {
                    (&a[..2], Some(a[2..].to_string()))
                }
                _ => (a, None),
            };
            let Some(kind) = request_option(program, opt) else {
                i += 1;
                continue;
            };
            let value = match attached {
                Some(val) => w.with_value(val),
                None => {
                    i += 1;
                    words.get(i)?.clone()
                }
            };
            if value.unresolved {
                return None;
            }
            let file = |s: &str| value.with_value(s.to_string());
            match kind {
                "write" => out.writes.push(value.clone()),
                "read" => out.reads.push(value.clone()),
                "data" => {
                    if let Some(f) = value.value.strip_prefix('@') {
                        out.reads.push(file(f));
                    }
                }
                "form" => {
                    if let Some((_, f)) = value.value.split_once(['@', '<']) {
                        out.reads.push(file(f.split(';').next().unwrap_or(f)));
                    }
                }
                "url" => out.urls.push(value.value.clone()),
                "proxy" => return None,
                _ => {}
            }
        } else {
            out.urls.push(a.to_string());
        }
        i += 1;
    }
    (!out.urls.is_empty()).then_some(out)
}

/// A curl or wget request whose every URL is a loopback address
/// (`curl -s localhost:8000/api`, `wget -qO- http://127.0.0.1:3000`).
pub fn is_loopback_request(seg: &Segment) -> bool {
    // `curl -I URL` is seed 002's form, whatever the host: the form decides.
    let head_form = seg.program == "curl"
        && seg.words[1..]
            .iter()
            .filter(|w| !matches!(w.value.as_str(), "-I" | "--head"))
            .count()
            == 1
        && seg.words[1..]
            .iter()
            .any(|w| matches!(w.value.as_str(), "-I" | "--head"));
    !head_form
        && matches!(seg.program.as_str(), "curl" | "wget")
        && request(seg).is_some_and(|r| {
            r.urls
                .iter()
                .all(|u| url_host(u).is_some_and(|h| is_loopback_host(&h)))
        })
}

/// [`is_loopback_request`] in a decision: where the profile allows loopback
/// and the kernel layer holds it there (confined), `curl -I` to a loopback
/// address is a loopback request too, so it may sit in a pipeline or a
/// list (`curl -I http://localhost:3000 2>&1 | head -5`); seed 002's form
/// still decides it elsewhere, and decides every request to another host.
pub fn is_loopback_request_in(seg: &Segment, ctx: &PolicyContext) -> bool {
    is_loopback_request(seg)
        || (loopback_allowed(ctx)
            && seg.program == "curl"
            && request(seg).is_some_and(|r| {
                r.urls
                    .iter()
                    .all(|u| url_host(u).is_some_and(|h| is_loopback_host(&h)))
            }))
}

/// Decides a loopback request (see [`is_loopback_request`]): its files are
/// checked like any read or write; the connection is allowed where the
/// kernel layer holds it to loopback, and asks otherwise, saying why.
pub fn loopback_request(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let name = seg.program.as_str();
    let Some(r) = request(seg) else { return };
    for w in &r.reads {
        super::path_operand(seg, ctx, v, w, Access::Read, false, name);
    }
    for w in &r.writes {
        // `-o /dev/null` discards the body, like a redirection.
        if !w.unresolved && super::paths::is_device_sink(&ctx.resolve(seg, &w.value)) {
            continue;
        }
        super::path_operand(seg, ctx, v, w, Access::Write, false, name);
        v.risk = v.risk.max(Risk::Write);
    }
    let target = r.urls.join(" ");
    if loopback_allowed(ctx) {
        v.note(
            Layer::Policy,
            format!("{name}: requests `{target}` on loopback; runs confined, the kernel layer allows loopback only"),
        );
        return;
    }
    let why = if !ctx.confined {
        "nothing confines this command here, so its connections (and redirects) cannot be held to loopback".to_string()
    } else if ctx.profile.doc.sandbox.network < NetworkSetting::Loopback {
        "the profile's `[sandbox] network` is `off`, so the sandbox runs it without network"
            .to_string()
    } else {
        "the kernel layer here cannot yet hold a command's connections to loopback addresses, so the sandbox runs it without network".to_string()
    };
    v.add(
        Layer::Policy,
        ReasonId::NetworkLoopback,
        Decision::Ask,
        format!("{NEEDS_NETWORK}: `{name}` requests `{target}` on loopback; {why}"),
        Some("confirm it to run it with network, or run the request from your own terminal".into()),
    );
    v.network = Some(NetworkAccess::Full);
}

/// Docker subcommands that only read from the daemon.
const DOCKER_READ_ONLY: &[&str] = &[
    "docker ps",
    "docker logs",
    "docker images",
    "docker inspect",
    "docker version",
    "docker info",
    "docker stats",
    "docker top",
    "docker port",
    "docker diff",
    "docker history",
    "docker events",
    "docker compose ps",
    "docker compose logs",
    "docker compose config",
    "docker compose images",
    "docker compose top",
    "docker compose version",
];

/// docker talks to `docker.sock`, which is root on the host: it never runs
/// confined, in either mode. Read-only subcommands ask, saying why; the
/// rest asks as dangerous (strong confirmation).
pub fn docker(name: &str, v: &mut Verdict) {
    let engine = ["docker", "docker-compose", "podman"]
        .iter()
        .any(|e| name == *e || name.strip_prefix(e).is_some_and(|r| r.starts_with(' ')));
    if !engine {
        return;
    }
    if DOCKER_READ_ONLY.contains(&name) || name == "docker" || name == "docker compose" {
        v.add(
            Layer::Policy,
            ReasonId::DockerDaemon,
            Decision::Ask,
            format!("`{name}` only reads, but it talks to the Docker daemon, which acts as root on the host: docker never runs confined, so each docker command is confirmed"),
            Some("confirm it, or run it from your own terminal".into()),
        );
    } else {
        v.add(
            Layer::Policy,
            ReasonId::DockerDaemon,
            Decision::Ask,
            format!("`{name}` changes containers, images or the host through the Docker daemon, which acts as root on the host: docker never runs confined"),
            Some("confirm it, or run it from your own terminal".into()),
        );
        v.need(Confirmation::Strong);
    }
}

/// `kill`, `pkill`, `killall`.
pub fn is_signal(seg: &Segment) -> bool {
    matches!(seg.program.as_str(), "kill" | "pkill" | "killall")
}

/// Signals to processes the command did not start: `kill -1` / a negative
/// pid (every process, a process group) is denied; a literal pid, `pkill`
/// and `killall` ask. `kill %1` and `kill $!` (jobs of this command) pass.
pub fn signals(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let name = seg.program.as_str();
    if !matches!(name, "kill" | "pkill" | "killall" | "pgrep") {
        return;
    }
    if name == "pgrep" {
        return;
    }
    if seg.template {
        // `lsof -ti:3000 | xargs kill -9`: the pids arrive at run time.
        v.add(
            Layer::Policy,
            ReasonId::PolicySignalOthers,
            Decision::Ask,
            format!("`{name}` signals processes named at run time (by xargs or find), which may be ones this command did not start"),
            Some("stop the process you started with `kill %1` (or `kill $!`) in the same command".into()),
        );
        return;
    }
    if name != "kill" {
        v.add(
            Layer::Policy,
            ReasonId::PolicySignalOthers,
            Decision::Ask,
            format!("`{name}` signals processes by name or pattern, which may be ones this command did not start"),
            Some("stop the process you started with `kill %1` (or `kill $!`) in the same command".into()),
        );
        return;
    }
    let hint = "stop the process you started with `kill %1` (or `kill $!`) in the same command";
    let args = &seg.words[1..];
    let mut i = 0;
    let mut signal_seen = false;
    let mut options_done = false;
    while i < args.len() {
        let w = &args[i];
        let a = w.value.as_str();
        if !options_done {
            if a == "--" {
                options_done = true;
                i += 1;
                continue;
            }
            if matches!(a, "-l" | "-L" | "--list" | "--table") {
                return;
            }
            if matches!(a, "-s" | "-n" | "--signal") {
                signal_seen = true;
                i += 2;
                continue;
            }
            if a.starts_with('-') && a.len() > 1 && !signal_seen {
                // `-9`, `-TERM`, `-SIGKILL`: the signal.
                signal_seen = true;
                i += 1;
                continue;
            }
            options_done = true;
        }
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if w.unresolved {
            match unresolved_pid(w, ctx) {
                PidWord::Own => {}
                PidWord::Group => {
                    v.add(
                        Layer::Policy,
                        ReasonId::PolicySignalOthers,
                        Decision::Deny,
                        format!("`kill {}` signals a process group (or every process) named at run time, not only processes this command started", w.raw()),
                        Some(hint.into()),
                    );
                    v.risk = Risk::Dangerous;
                    return;
                }
                // Confined, the kernel keeps signals inside the sandbox's
                // own processes (Landlock signal scoping); unconfined
                // nothing does, and the value may be any process, `-1`
                // included.
                PidWord::Unknown if !ctx.confined => {
                    v.add(
                        Layer::Policy,
                        ReasonId::PolicySignalOthers,
                        Decision::Ask,
                        format!("`kill {}`: the process id is known only at run time (a variable or a command substitution), so it may be a process this command did not start, a process group or every process", w.raw()),
                        Some(hint.into()),
                    );
                    return;
                }
                PidWord::Unknown => {}
            }
            i += 1;
            continue;
        }
        if a.strip_prefix('-').is_some_and(digits) {
            v.add(
                Layer::Policy,
                ReasonId::PolicySignalOthers,
                Decision::Deny,
                format!("`kill {a}` signals every process (or a whole process group), not only ones this command started"),
                Some(hint.into()),
            );
            v.risk = Risk::Dangerous;
            return;
        }
        if digits(a) {
            v.add(
                Layer::Policy,
                ReasonId::PolicySignalOthers,
                Decision::Ask,
                format!("`kill {a}` signals a process this command did not start"),
                Some(hint.into()),
            );
            return;
        }
        i += 1;
    }
}

/// What a `kill` operand that is not literal names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PidWord {
    /// This command's own: a job (`%1`), the last background process
    /// (`$!`, or a variable the string sets only to `$!`), or the shell
    /// running the command itself (`$$`, `$BASHPID`).
    Own,
    /// A negative value: a process group, or every process (`-$PPID`,
    /// `-$$`, `$X` after `X=-1`).
    Group,
    /// Anything else (`$PPID`, `$(pgrep node)`, `` `cat pid` ``, `$X`).
    Unknown,
}

/// Classifies an unresolved `kill` operand by its spelling.
fn unresolved_pid(w: &Word, ctx: &PolicyContext) -> PidWord {
    let raw = w.raw().trim_matches('"');
    if raw.starts_with('-') || w.value.starts_with('-') {
        return PidWord::Group;
    }
    // `$NAME` or `${NAME}`, nothing else in the word.
    let name = raw
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| raw.strip_prefix('$'));
    let Some(name) = name.filter(|n| {
        !n.is_empty()
            && (*n == "!" || *n == "$" || n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    }) else {
        return PidWord::Unknown;
    };
    if ctx.negative_vars.iter().any(|n| n == name) {
        return PidWord::Group;
    }
    if matches!(name, "!" | "$" | "BASHPID") || ctx.job_vars.iter().any(|n| n == name) {
        return PidWord::Own;
    }
    PidWord::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(argv: &[&str]) -> Segment {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let ctx = crate::parse::ParseContext::new(
            std::path::Path::new("/p"),
            std::path::Path::new("/home/u"),
        );
        crate::parse::parse_list(&argv, &ctx).segments.remove(0)
    }

    #[test]
    fn loopback_hosts() {
        for h in [
            "localhost",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "app.localhost",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "0.0.0.0",
            "10.0.0.1",
            "example.com",
            "localhost.example.com",
            "128.0.0.1",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
        assert_eq!(
            url_host("http://localhost:8000/x").as_deref(),
            Some("localhost")
        );
        assert_eq!(url_host("https://[::1]:8443/").as_deref(), Some("::1"));
        assert_eq!(url_host("localhost:3000/api").as_deref(), Some("localhost"));
        assert_eq!(url_host("http://127.0.0.1@evil.com/"), None);
        assert_eq!(url_host("ftp://localhost/"), None);
        assert_eq!(url_host("file:///etc/passwd"), None);
    }

    #[test]
    fn loopback_requests() {
        for a in [
            &["curl", "-s", "http://localhost:8000/x"][..],
            &["curl", "-X", "POST", "-d", "{}", "127.0.0.1:5000/api"],
            &["curl", "--url", "http://localhost/"],
            &["wget", "-qO-", "http://127.0.0.1:8080"],
            &["curl", "-o", "out.json", "http://localhost:8000/x"],
        ] {
            assert!(is_loopback_request(&seg(a)), "{a:?}");
        }
        for a in [
            &["curl", "https://example.com"][..],
            &["curl", "-I", "http://127.0.0.1/"],
            &["curl", "http://localhost", "https://example.com"],
            &["curl", "-x", "http://proxy:3128", "http://localhost/"],
            &[
                "curl",
                "--unix-socket",
                "/var/run/docker.sock",
                "http://localhost/",
            ],
            &[
                "curl",
                "--resolve",
                "localhost:80:1.2.3.4",
                "http://localhost/",
            ],
            &["wget", "-e", "use_proxy=on", "http://localhost/"],
            &["curl", "-s"],
            &["nc", "localhost", "80"],
        ] {
            assert!(!is_loopback_request(&seg(a)), "{a:?}");
        }
        let r =
            request(&seg(&["curl", "-d", "@.env", "-o", "o.txt", "localhost"])).expect("request");
        assert_eq!(r.reads[0].value, ".env");
        assert_eq!(r.writes[0].value, "o.txt");
    }
}
