//! Layer 1: the static policy. Reads the command model and the profile and
//! produces a [`Verdict`]: registry (what each program and option can do),
//! shell shape, allowed roots, safety rules, and the profile's mode.

pub mod args;
pub mod awk;
pub mod confined;
mod exec_judge;
pub mod forms;
pub mod git_config;
pub mod history;
pub mod paths;
mod roots;
pub mod sed;
pub mod verdict;

pub use crate::config::{keywords, registry, rules};
pub use crate::sandbox::variables;
pub use exec_judge::exec_judge;

use std::path::{Path, PathBuf};

use crate::config::Profile;
use crate::config::schema::Action;
use crate::parse::{CommandModel, Operator, Origin, Segment, Word};
use args::{ParsedArgs, parse_args};
use paths::{PathProblem, Roots};
use registry::{CommandSpec, Effect, Maturity, Risk, UnknownOptions};
use rules::Severity;
pub use verdict::{Confirmation, Decision, Layer, Reason, Verdict};

/// The warning seed 002 requires for network-touching commands.
pub const NETWORK_WARNING: &str = "This command contacts external hosts and may reveal your IP address, DNS query, target host, or network metadata.";

/// What the policy needs besides the model.
pub struct PolicyContext<'a> {
    /// The loaded profile.
    pub profile: &'a Profile,
    /// Its roots with placeholders resolved.
    pub roots: &'a Roots,
    /// A person typed this at a terminal (critical rules ask instead of deny).
    pub interactive: bool,
    /// The command runs inside the sandbox with the profile's enforcement
    /// achieved: what the kernel contains runs without asking. `false` when
    /// nothing confines it (`hook` without `--rewrite`, `check
    /// --unconfined`): whatever is not fully seen through asks.
    pub confined: bool,
    /// Files written by redirections in this command (filled by
    /// [`evaluate`]): running one of them in the same string cannot be checked.
    pub written: Vec<PathBuf>,
    /// Files written by the segments checked so far (operands, option
    /// values, redirections), in order: unconfined, a later segment that
    /// runs or loads one of them runs what the policy never saw.
    pub writes_seen: std::cell::RefCell<Vec<PathBuf>>,
    /// Symbolic links made earlier in this command (`ln -s TARGET LINK`),
    /// link path to target (filled by [`evaluate`]): later paths through the
    /// link are checked where they really lead.
    pub links: Vec<Link>,
    /// What those redirections write, where the command shows it (a
    /// heredoc, `echo`/`printf` arguments), by file (filled by
    /// [`evaluate`]): a script written and run in one string is checked.
    pub written_text: Vec<(PathBuf, String)>,
}

/// A symbolic link the command makes, and the `ln` that makes it.
#[derive(Debug, Clone)]
pub struct Link {
    /// Where the link is.
    pub path: PathBuf,
    /// Where it points.
    pub target: PathBuf,
    /// The `ln` segment's argv (its own operands are not followed).
    pub made_by: Vec<String>,
}

impl PolicyContext<'_> {
    /// Resolves a path of `seg` like [`paths::resolve`], following links
    /// the same command makes before using them.
    pub fn resolve(&self, seg: &Segment, p: &str) -> PathBuf {
        let mut out = paths::resolve(&seg.cwd, p);
        for _ in 0..8 {
            let Some(l) = self
                .links
                .iter()
                .find(|l| out.starts_with(&l.path) && l.made_by != seg.argv)
            else {
                break;
            };
            let rest = out
                .strip_prefix(&l.path)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            out = paths::resolve(&l.target, &rest.to_string_lossy());
        }
        out
    }
}

/// Symbolic links the command makes, in order: `ln -s` and `cp -s` read
/// with their registry entries, the way their own getopt reads them
/// (`ln --sym`, `ln -s -S SUFFIX T L`, `ln -st DIR T...`, `cp -rs T L`).
fn symlinks(model: &CommandModel, registry: &registry::Registry) -> Vec<Link> {
    let mut out = Vec::new();
    for s in &model.segments {
        if !matches!(s.program.as_str(), "ln" | "cp") || s.words.len() < 2 {
            continue;
        }
        let Some(spec) = registry.get(&s.program) else {
            continue;
        };
        let parsed = parse_args(&spec, &s.words[1..]);
        let symbolic = parsed
            .options
            .iter()
            .any(|o| o.spec.names.iter().any(|n| n == "-s"));
        if !symbolic {
            continue;
        }
        let ops: Vec<&Word> = parsed.operands.iter().map(|(w, _)| w).collect();
        let dir = parsed
            .options
            .iter()
            .find(|o| o.spec.names.iter().any(|n| n == "-t"))
            .and_then(|o| o.value.as_ref());
        let pairs: Vec<(PathBuf, PathBuf)> = match (dir, ops.as_slice()) {
            (Some(d), targets) => targets
                .iter()
                .map(|t| {
                    let file = Path::new(&t.value)
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    (
                        paths::resolve(&s.cwd, &t.value),
                        paths::resolve(&s.cwd, &format!("{}/{file}", d.value)),
                    )
                })
                .collect(),
            (None, [target, link]) => {
                vec![(
                    paths::resolve(&s.cwd, &target.value),
                    paths::resolve(&s.cwd, &link.value),
                )]
            }
            _ => Vec::new(),
        };
        for (target, link) in pairs {
            let base = link
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| s.cwd.clone());
            out.push(Link {
                target: paths::resolve(&base, &target.to_string_lossy()),
                path: link,
                made_by: s.argv.clone(),
            });
        }
    }
    out
}

/// Evaluates the whole command.
pub fn evaluate(model: &CommandModel, ctx: &PolicyContext, raw: Option<&str>) -> Verdict {
    let written = model
        .segments
        .iter()
        .flat_map(|s| {
            s.redirections
                .iter()
                .filter(|r| r.writes)
                .map(|r| paths::resolve(&s.cwd, &r.target))
        })
        .collect();
    let ctx = &PolicyContext {
        profile: ctx.profile,
        roots: ctx.roots,
        interactive: ctx.interactive,
        confined: ctx.confined,
        writes_seen: Default::default(),
        written,
        links: symlinks(model, &ctx.profile.registry),
        written_text: confined::written_text(model),
    };
    let mut v = Verdict::default();
    let policy = &ctx.profile.doc.policy;

    for u in &model.unknown {
        unknown(&mut v, ctx, u);
    }
    shape(model, ctx, &mut v);
    for name in &model.assigned {
        if let Some(what) = is_dangerous_var(name, None)
            && !confined::assigned_code_path_ok(name, model, ctx)
        {
            v.add(
                Layer::Policy,
                "policy.dangerous_assignment",
                Decision::Deny,
                format!("the command sets `{name}`, which {what}"),
                Some("drop the assignment; configure the tool in its own config file".into()),
            );
            v.risk = Risk::Dangerous;
        }
    }

    let form_segments = model
        .segments
        .iter()
        .filter(|s| {
            ctx.profile
                .registry
                .get(&s.program)
                .is_some_and(|sp| sp.form.is_some())
                && !confined::is_loopback_request_in(s, ctx)
        })
        .count();
    if form_segments > 0
        && (model.segments.len() > 1
            || !model.operators.is_empty()
            || model.constructs.substitution
            || model.constructs.redirection)
    {
        v.add(
            Layer::Policy,
            "form.whole_string",
            Decision::Deny,
            "archive and network commands are accepted only on their own: no operators, pipelines, redirections or substitutions in the same string".into(),
            Some("run the archive or network command as a separate command".into()),
        );
    }
    let mut code_views = Vec::new();
    for seg in &model.segments {
        let before = v.risk;
        v.risk = Risk::Safe;
        segment(seg, ctx, &mut v, &mut code_views);
        let seg_risk = v.risk;
        v.risk = v.risk.max(before);
        confined::unconfined_substitution(seg, seg_risk, ctx, &mut v);
    }

    // Safety rules over normalised views.
    let views = rules::views(model, &code_views, raw);
    v.code = code_views
        .iter()
        .filter(|c| !c.starts_with(rules::CANONICAL))
        .cloned()
        .collect();
    let c = ctx.profile.rules.classify_views(&views);
    v.severity = c.severity;
    for (id, label, sev, view) in &c.matches {
        match sev {
            Severity::Critical => {
                let action = if ctx.interactive {
                    Action::Ask
                } else {
                    policy.critical
                };
                let d = decision_of(action);
                v.add(
                    Layer::Policy,
                    id,
                    d,
                    format!("safety rule `{id}` ({label}) matches `{view}`"),
                    None,
                );
                if d == Decision::Ask {
                    v.need(Confirmation::Strong);
                }
                v.risk = Risk::Dangerous;
            }
            Severity::Warning => {
                v.warn(format!("safety rule `{id}`: {label}"));
                if !v.matched_rules.contains(id) {
                    v.matched_rules.push(id.clone());
                }
            }
            Severity::Safe => {}
        }
    }

    // Mode: risk against the profile's ceiling.
    let why: Vec<String> = v.danger.iter().map(|d| d.0.clone()).collect();
    let suggestion = v.danger.iter().find_map(|d| d.1.clone());
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(": {}", why.join("; "))
    };
    if v.risk == Risk::Dangerous && !policy.allow_dangerous {
        v.add(
            Layer::Policy,
            "policy.dangerous_disabled",
            Decision::Deny,
            format!(
                "dangerous commands are disabled by this profile (allow_dangerous = false){why}"
            ),
            suggestion,
        );
    } else if v.risk > policy.mode {
        let d = decision_of(policy.above_mode);
        v.add(
            Layer::Policy,
            "policy.above_mode",
            d,
            format!(
                "risk `{}` is above the profile's mode `{}`{why}",
                v.risk.as_str(),
                policy.mode.as_str()
            ),
            suggestion,
        );
        if v.risk == Risk::Dangerous {
            v.need(Confirmation::Strong);
        }
    }
    if v.decision == Decision::Ask && v.risk == Risk::Dangerous {
        v.need(Confirmation::Strong);
    }
    v.settle();
    v
}

fn decision_of(a: Action) -> Decision {
    match a {
        Action::Allow => Decision::Allow,
        Action::Ask => Decision::Ask,
        Action::Deny => Decision::Deny,
    }
}

fn unknown(v: &mut Verdict, ctx: &PolicyContext, why: &str) {
    unknown_with(
        v,
        ctx,
        why,
        "write the command with literal words (no variables, substitutions or eval in command position)",
    );
}

/// Like [`unknown`], with what to do instead.
fn unknown_with(v: &mut Verdict, ctx: &PolicyContext, why: &str, instead: &str) {
    // Unknown constructs are never allowed, whatever the profile says.
    let d = decision_of(ctx.profile.doc.policy.unknown_constructs).max(Decision::Ask);
    v.add(
        Layer::Parse,
        "parse.unknown",
        d,
        format!("cannot be checked: {why}"),
        Some(instead.into()),
    );
}

/// Shell shape: operators, redirections, substitutions, heredocs, groups.
fn shape(model: &CommandModel, ctx: &PolicyContext, v: &mut Verdict) {
    let shell = &ctx.profile.doc.shell;
    let c = &model.constructs;
    for op in &model.operators {
        if !shell
            .operators
            .iter()
            .any(|o| Operator::from_spelling(o) == Some(*op))
        {
            v.add(
                Layer::Policy,
                "shape.operator",
                Decision::Deny,
                format!(
                    "the operator `{}` is not allowed by this profile",
                    op.as_str()
                ),
                Some("run the commands one at a time".into()),
            );
        }
    }
    let checks: [(bool, bool, &str, &str); 5] = [
        (
            c.substitution,
            shell.substitutions,
            "shape.substitution",
            "command substitution `$(...)` is not allowed by this profile",
        ),
        (
            c.process_substitution,
            shell.process_substitutions,
            "shape.process_substitution",
            "process substitution `<(...)` is not allowed by this profile",
        ),
        (
            c.heredoc,
            shell.heredocs,
            "shape.heredoc",
            "heredocs and here-strings are not allowed by this profile",
        ),
        (
            c.subshell_or_group,
            shell.groups,
            "shape.group",
            "subshells and `{ ...; }` groups are not allowed by this profile",
        ),
        (
            c.control_flow,
            shell.control_flow,
            "shape.control_flow",
            "`if`/`for`/`while`/`case` are not allowed by this profile",
        ),
    ];
    for (present, allowed, id, msg) in checks {
        if present && !allowed {
            let suggestion = (id == "shape.substitution")
                .then(|| "run the inner command first and pass its output literally".to_string());
            v.add(Layer::Policy, id, Decision::Deny, msg.into(), suggestion);
        }
    }
    if c.redirection
        && !shell.redirections
        && model
            .segments
            .iter()
            .any(|s| s.redirections.iter().any(|r| r.writes || r.reads))
    {
        v.add(
            Layer::Policy,
            "shape.redirection",
            Decision::Deny,
            "redirections are not allowed by this profile".into(),
            None,
        );
    }
}

/// Checks one segment against the registry, roots and its own shape.
fn segment(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict, code: &mut Vec<String>) {
    let label = if seg.program.is_empty() {
        "(redirection)".to_string()
    } else {
        seg.program.clone()
    };
    for n in &seg.notes {
        v.note(Layer::Parse, format!("{label}: {n}"));
    }
    if let Some(u) = &seg.unknown
        && !confined::source_inside_roots(seg, ctx, v)
    {
        confined::source_reads(seg, ctx, v);
        unknown(v, ctx, u);
    }
    if let Some(why) = &seg.cwd_uncertain
        && !ctx.confined
    {
        unknown(v, ctx, why);
    }
    // Assignments in front of the command.
    for a in &seg.assignments {
        if let Some(what) = is_dangerous_var(&a.name, Some(&a.value))
            && !confined::code_path_assignment(&a.name, &a.value, seg, ctx, v)
        {
            v.add(
                Layer::Policy,
                "policy.dangerous_assignment",
                Decision::Deny,
                format!("`{}=...` {what}", a.name),
                Some("drop the assignment; configure the tool in its own config file".into()),
            );
            v.risk = Risk::Dangerous;
        }
    }
    if seg.escalated {
        v.add(
            Layer::Policy,
            "policy.privilege_escalation",
            Decision::Deny,
            format!(
                "`{label}` would run with raised privileges ({})",
                seg.wrappers.join(" ")
            ),
            Some(format!(
                "run `{}` without sudo inside the project",
                seg.argv.join(" ")
            )),
        );
        v.risk = Risk::Dangerous;
    }
    redirections(seg, ctx, v);
    for f in &seg.reads {
        let p = ctx.resolve(seg, f);
        if let Err(e) = ctx.roots.check_read(&p) {
            path_reason(v, &p, &e, "a wrapper reads");
        }
    }
    if seg.program.is_empty() || seg.unknown.is_some() {
        return;
    }
    if seg.argv[0].contains('/') {
        written_then_run(seg, ctx, v, &seg.argv[0], &label, code);
        untrusted_program_path(seg, ctx, v);
    }
    if seg.origin == Origin::ExecTemplate {
        v.note(
            Layer::Policy,
            format!("{label}: runs as a template; its arguments are completed at run time"),
        );
    }
    confined::signals(seg, ctx, v);
    if confined::is_loopback_request_in(seg, ctx) {
        confined::loopback_request(seg, ctx, v);
        return;
    }

    // Registry, including subcommands.
    let registry = &ctx.profile.registry;
    let ((name, spec, args), parents) = match lookup(registry, &seg.program, &seg.words[1..]) {
        Ok(found) => found,
        Err(missing) => {
            unregistered(seg, ctx, v, &missing);
            return;
        }
    };
    v.note(
        Layer::Policy,
        format!(
            "{name}: {} (base risk {})",
            spec.summary,
            spec.risk.as_str()
        ),
    );
    if !ctx.confined {
        written_then_loaded(seg, &name, &spec, ctx, v);
    }
    let mut risk = spec.risk;
    match spec.maturity {
        Maturity::Blocked => v.add(
            Layer::Policy,
            "registry.blocked",
            Decision::Deny,
            format!(
                "`{name}` is blocked: {}",
                spec.reason
                    .clone()
                    .unwrap_or_else(|| "no reason given".into())
            ),
            None,
        ),
        Maturity::Experimental => {
            v.add(
                Layer::Policy,
                "registry.experimental",
                Decision::Ask,
                format!(
                    "`{name}` is experimental in the registry{}",
                    spec.reason
                        .as_ref()
                        .map(|r| format!(": {r}"))
                        .unwrap_or_default()
                ),
                None,
            );
            v.need(Confirmation::VeryStrong);
        }
        Maturity::Stable => {}
    }
    confined::docker(&name, v);
    if spec.network_touching {
        if spec.form.is_none() {
            confined::needs_network(&name, ctx, v);
        } else {
            v.warn(NETWORK_WARNING.into());
        }
    }
    if spec.interpreter {
        risk = risk.max(Risk::Write);
        v.note(
            Layer::Policy,
            format!("{name}: runs code the validator cannot fully see; the sandbox contains it"),
        );
    }

    if let Some(form) = &spec.form {
        // Seed 002 forms are judged on the whole string.
        if whole_string_violation(seg) {
            v.add(
                Layer::Policy,
                "form.whole_string",
                Decision::Deny,
                format!("`{name}` is accepted only as a command of its own: no operators, pipelines, redirections or substitutions around it"),
                Some(format!("run `{}` on its own", seg.argv.join(" "))),
            );
            return;
        }
        if let Some(acc) = forms::check(form, seg, ctx, v) {
            risk = risk.max(acc.risk);
            if acc.network.is_some() {
                v.network = acc.network;
            }
            v.note(
                Layer::Policy,
                format!("{name}: matches the structured form `{form}`"),
            );
        }
        v.risk = v.risk.max(risk);
        return;
    }
    if seg.template && spec.subcommands {
        // `echo clean | xargs git`: the subcommand arrives at run time.
        unknown(
            v,
            ctx,
            &format!("`{name}` gets its subcommand from input at run time (xargs or find)"),
        );
        return;
    }
    // `-C DIR` (git, make, cargo, ninja): the operands that follow are
    // relative to DIR, as the program itself will read them.
    let moved;
    let seg = match moved_base(seg, &parents, &spec, args) {
        Ok(Some(s)) => {
            moved = s;
            &moved
        }
        Ok(None) => seg,
        Err(why) => {
            unknown(v, ctx, &why);
            return;
        }
    };
    // Unconfined, a program that runs code or writes works in its working
    // directory: one outside the writable roots (`make -C ~`, `cd ~ &&
    // cargo build`) writes there with nothing to stop it.
    if !ctx.confined
        && (spec.interpreter || spec.risk >= Risk::Write)
        && ctx.roots.check_write(&seg.cwd, false).is_err()
    {
        v.add(
            Layer::Policy,
            "policy.unconfined_cwd",
            Decision::Ask,
            format!(
                "`{name}` runs in `{}`, outside the writable roots, and nothing confines what it writes there",
                seg.cwd.display()
            ),
            Some("run it inside the project directory".into()),
        );
    }
    // Options given to parent commands before the subcommand.
    for (pname, pspec, pargs) in &parents {
        let p = parse_args(pspec, pargs);
        for e in &p.errors {
            v.add(
                Layer::Policy,
                "registry.malformed",
                Decision::Deny,
                format!("`{pname}`: {e}"),
                Some("give the arguments the program expects (see its --help)".into()),
            );
        }
        if !p.unknown_options.is_empty()
            && (pspec.unknown_options != UnknownOptions::Allow || !ctx.confined)
        {
            v.add(
                Layer::Policy,
                "registry.unknown_option",
                if pspec.unknown_options == UnknownOptions::Deny {
                    Decision::Deny
                } else {
                    Decision::Ask
                },
                format!(
                    "`{pname}` option(s) {} are not in the registry",
                    p.unknown_options.join(", ")
                ),
                Some(format!("leave the option out, or add it to the registry entry of `{pname}` (docs/profile-format.md)")),
            );
        }
        risk = risk.max(options(pname, &p, seg, ctx, v, code));
    }
    let mut parsed = parse_args(&spec, args);
    // `find` without a starting point searches `.`.
    if name == "find" && parsed.operands.is_empty() {
        parsed
            .operands
            .push((Word::literal("."), "read_path".to_string()));
    }
    // An interpreter with no inline code and no script file reads its
    // program from standard input (`echo '...' | python3`).
    if spec.interpreter && spec.operands.iter().any(|o| o.starts_with("script")) {
        let inline = parsed.has_effect(Effect::Last)
            || parsed.options.iter().any(|o| o.spec.value_type == "code");
        let script = parsed.operands.iter().find(|(_, t)| t == "script");
        if !inline
            && script.is_none()
            && (seg.pipe_index > 0 || seg.stdin_data.is_some())
            && seg.stdin_data.is_none()
        {
            unknown(
                v,
                ctx,
                &format!("`{name}` reads its program from a pipe; it cannot be checked"),
            );
        }
    }
    for e in &parsed.errors {
        v.add(
            Layer::Policy,
            "registry.malformed",
            Decision::Deny,
            format!("`{name}`: {e}"),
            Some("give the arguments the program expects (see its --help)".into()),
        );
    }
    if !parsed.unknown_options.is_empty() {
        let d = match spec.unknown_options {
            // Unconfined, an option the registry does not know may read,
            // write or run anything: nothing contains it.
            UnknownOptions::Allow if !ctx.confined => Decision::Ask,
            UnknownOptions::Allow => Decision::Allow,
            UnknownOptions::Ask => Decision::Ask,
            UnknownOptions::Deny => Decision::Deny,
        };
        if d != Decision::Allow {
            v.add(
                Layer::Policy,
                "registry.unknown_option",
                d,
                format!(
                    "`{name}` option(s) {} are not in the registry",
                    parsed.unknown_options.join(", ")
                ),
                Some(format!("leave the option out, or add it to the registry entry of `{name}` (docs/profile-format.md)")),
            );
        }
    }
    // The arguments as the program's own parser reads them (`python3 -Im
    // http.server` is `python3 -I -m http.server`): the safety rules see
    // this spelling too, so a cluster cannot hide an option from them.
    let canonical = canonical_view(seg, &name, &parents, &parsed);
    if canonical != rules::render(seg) {
        code.push(format!("{}{canonical}", rules::CANONICAL));
    }
    if name == "git config" {
        git_config_command(&parsed, v);
    }
    risk = risk.max(options(&name, &parsed, seg, ctx, v, code));
    risk = risk.max(operands(&name, &parsed, seg, ctx, v, code));
    if let Some(sub) = network_operands(&spec, &parsed) {
        confined::needs_network(format!("{name} {sub}").trim_end(), ctx, v);
    }
    history::git(&name, &parsed, seg, ctx, v);
    if name == "find" {
        history::find_delete(&parsed, seg, ctx, v);
    }
    confined::unconfined_interpreter(&name, &spec, &parsed, seg, ctx, v);
    confined::unconfined_expanded_operand(&name, &spec, &parsed, ctx, v);
    let risky_options = spec.options.iter().filter_map(|o| o.parse().ok()).any(|o| {
        o.effects.iter().any(|e| {
            matches!(
                e,
                Effect::Exec
                    | Effect::Dangerous
                    | Effect::Write
                    | Effect::WritesOperands
                    | Effect::Delete
            )
        }) || o.value_type == "command"
    }) || (spec.unknown_options == UnknownOptions::Allow
        // Confined, an unlisted option of a read-only program is contained.
        && !(ctx.confined && spec.risk == Risk::Safe));
    if seg.template
        && risk < Risk::Write
        && seg.wrappers.iter().any(|w| w == "xargs")
        && risky_options
    {
        v.add(
            Layer::Policy,
            "policy.template_options",
            Decision::Ask,
            format!("`{name}` gets arguments from input at run time, and some of its options write or run programs"),
            Some(format!("pass the arguments to `{name}` explicitly")),
        );
    }
    // Unconfined, a program that reads the files it is given, getting them
    // at run time (`echo ~/.ssh/id_rsa | xargs head`), reads what the
    // policy never saw.
    let reads_operands = spec.operands.is_empty()
        || spec
            .operands
            .iter()
            .chain(spec.operands_with.values().flatten())
            .any(|o| {
                let t = o.trim_end_matches(['*', '+', '?']);
                matches!(
                    t,
                    "read_path" | "read_tree" | "path" | "dir" | "script" | "archive"
                )
            });
    if seg.template
        && !ctx.confined
        && reads_operands
        && risk < Risk::Write
        && seg.wrappers.iter().any(|w| w == "xargs")
    {
        v.add(
            Layer::Policy,
            "policy.template_read",
            Decision::Ask,
            format!("`{name}` reads files named at run time (by xargs or find), which cannot be checked beforehand"),
            Some(format!("pass the file names to `{name}` explicitly")),
        );
    }
    if seg.template && risk >= Risk::Write && !confined::is_signal(seg) {
        v.add(
            Layer::Policy,
            "policy.template_write",
            Decision::Ask,
            format!("`{name}` changes files named at run time (by xargs or find), which cannot be checked beforehand"),
            Some("list the files explicitly, or use `find ... -delete` inside the project".into()),
        );
    }
    if let Some(data) = &seg.stdin_data
        && spec.interpreter
    {
        code.push(data.clone());
        code_paths(&name, data, seg, ctx, v);
    }
    v.risk = v.risk.max(risk);
}

/// The segment with its working directory moved by every `=chdir` option
/// (`git -C DIR`, `make -C DIR`, `cargo -C DIR`), applied in order as the
/// program does; `Err` when a directory is not literal.
fn moved_base(
    seg: &Segment,
    parents: &[Layered<'_>],
    spec: &CommandSpec,
    args: &[Word],
) -> Result<Option<Segment>, String> {
    let mut cwd = seg.cwd.clone();
    let mut moved = false;
    let layers = parents
        .iter()
        .map(|(n, s, a)| (n.clone(), parse_args(s, a)))
        .chain(std::iter::once((String::new(), parse_args(spec, args))));
    for (name, p) in layers {
        for o in &p.options {
            if o.spec.value_type != "chdir" {
                continue;
            }
            let Some(dir) = &o.value else { continue };
            if dir.unresolved || dir.glob {
                return Err(format!(
                    "`{name} {}` moves to a directory that is not literal",
                    o.written
                ));
            }
            cwd = crate::parse::shell_join(&cwd, &dir.value);
            moved = true;
        }
    }
    Ok(moved.then(|| Segment { cwd, ..seg.clone() }))
}

/// `PROGRAM [SUB] -x VALUE --long VALUE OPERANDS...`, every option on its
/// own with its value, in the order given.
fn canonical_view(
    seg: &Segment,
    name: &str,
    parents: &[Layered<'_>],
    parsed: &ParsedArgs,
) -> String {
    // Words are shown as `rules::render` shows them: quoted data stays
    // quoted, expansions as written.
    let shown = |w: &Word| {
        if !w.literal && !w.glob {
            w.raw.clone()
        } else {
            rules::quote(&w.value)
        }
    };
    let out = std::cell::RefCell::new(vec![seg.program.clone()]);
    let push_word = |w: &str| out.borrow_mut().push(w.to_string());
    let push = |p: &ParsedArgs| {
        for o in &p.options {
            out.borrow_mut().push(o.name.clone());
            if let Some(v) = &o.value {
                out.borrow_mut().push(shown(v));
            }
        }
    };
    let names: Vec<&str> = parents
        .iter()
        .map(|(n, _, _)| n.as_str())
        .chain(std::iter::once(name))
        .collect();
    for (i, (_, spec, args)) in parents.iter().enumerate() {
        push(&parse_args(spec, args));
        // The subcommand word that led to the next layer (`push` in `git push`).
        if let Some(sub) = names.get(i + 1).and_then(|n| n.rsplit(' ').next()) {
            push_word(sub);
        }
    }
    push(parsed);
    let mut out = out.into_inner();
    out.extend(parsed.operands.iter().map(|(w, _)| shown(w)));
    out.join(" ")
}

/// Whether the first operands are one of the entry's `network_when`
/// (`uv pip install`, `bun add`; `(none)`: no operand at all, `yarn`).
fn network_operands(spec: &CommandSpec, p: &ParsedArgs) -> Option<String> {
    let ops: Vec<&str> = p.operands.iter().map(|(w, _)| w.value.as_str()).collect();
    spec.network_when
        .iter()
        .find(|n| {
            if n.as_str() == "(none)" {
                return ops.is_empty();
            }
            let want: Vec<&str> = n.split_whitespace().collect();
            !want.is_empty() && ops.len() >= want.len() && ops[..want.len()] == want[..]
        })
        .map(|n| {
            if n == "(none)" {
                String::new()
            } else {
                n.clone()
            }
        })
}

/// Whether the command around a form segment has anything besides it.
fn whole_string_violation(seg: &Segment) -> bool {
    seg.depth > 0
        || !seg.redirections.is_empty()
        || seg.pipeline != 0
        || !seg.wrappers.is_empty()
        || !seg.assignments.is_empty()
}

/// A registry entry with the arguments that belong to it.
type Layered<'w> = (String, std::sync::Arc<CommandSpec>, &'w [Word]);

/// A program (or subcommand) the registry does not know.
fn unregistered(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict, missing: &str) {
    if !confined::unregistered(ctx, v, missing) {
        let d = decision_of(ctx.profile.doc.policy.unknown_commands);
        let suggestion = if ctx.confined {
            format!(
                "use a registered program, or add `{missing}` to the registry (profiles/registry, docs/profile-format.md)"
            )
        } else {
            format!(
                "{}; or add `{missing}` to the registry",
                "run it inside the sandbox: install the hook with `--rewrite` (or use `safe-exec -c`)"
            )
        };
        v.add(
            Layer::Policy,
            "registry.unknown_command",
            d,
            format!("`{missing}` is not in the command registry"),
            Some(suggestion),
        );
    }
    // Still check its operands as paths it might read.
    for w in &seg.words[1..] {
        if !w.value.starts_with('-') {
            path_operand(seg, ctx, v, w, "read_path", false, &seg.program);
        }
    }
}

/// Finds the registry entry, descending into subcommands. Returns the
/// entry with its own arguments, and each parent entry with the options
/// given before the subcommand (`git -c x=y push`: `-c x=y` belongs to `git`).
fn lookup<'w>(
    registry: &registry::Registry,
    program: &str,
    args: &'w [Word],
) -> Result<(Layered<'w>, Vec<Layered<'w>>), String> {
    let mut name = program.to_string();
    let mut spec = registry.get(&name).ok_or_else(|| name.clone())?;
    let mut rest = args;
    let mut parents = Vec::new();
    while spec.subcommands {
        let Some(idx) = first_operand(&spec, rest) else {
            break;
        };
        let sub = format!("{name} {}", rest[idx].value);
        match registry.get(&sub) {
            Some(s) => {
                parents.push((name.clone(), spec.clone(), &rest[..idx]));
                name = sub;
                spec = s;
                rest = &rest[idx + 1..];
            }
            None => return Err(sub),
        }
    }
    Ok(((name, spec, rest), parents))
}

/// Index of the first operand (the subcommand), skipping global options.
fn first_operand(spec: &CommandSpec, args: &[Word]) -> Option<usize> {
    let opts: Vec<registry::OptionSpec> =
        spec.options.iter().filter_map(|o| o.parse().ok()).collect();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].value.as_str();
        if !a.starts_with('-') || a == "-" {
            return Some(i);
        }
        let takes_value = opts
            .iter()
            .any(|o| o.value == registry::ValueKind::Required && o.names.iter().any(|n| n == a));
        i += if takes_value { 2 } else { 1 };
    }
    None
}

/// Why setting `name` (to `value`, when known) is refused: the shared list
/// of variables that load code (`profiles/env/variables.toml`) and bash's
/// own tables.
fn is_dangerous_var(name: &str, value: Option<&str>) -> Option<&'static str> {
    variables::dangerous(name, value)
}

fn redirections(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    for r in &seg.redirections {
        if !r.writes && !r.reads {
            continue;
        }
        if paths::is_network_path(&r.target) {
            v.add(
                Layer::Policy,
                "policy.network_redirection",
                Decision::Deny,
                format!("redirection to `{}` opens a network connection", r.target),
                None,
            );
            v.risk = Risk::Dangerous;
            continue;
        }
        if !r.literal {
            unknown(
                v,
                ctx,
                &format!("the redirection target `{}` is not literal", r.target),
            );
            continue;
        }
        let p = ctx.resolve(seg, &r.target);
        if r.writes && !paths::is_device_sink(&p) {
            ctx.writes_seen.borrow_mut().push(p.clone());
        }
        let res = if r.writes {
            ctx.roots.check_redirect(&p)
        } else {
            ctx.roots.check_read(&p)
        };
        if r.writes && res.is_ok() && !paths::is_device_sink(&p) {
            v.risk = v.risk.max(Risk::Write);
        }
        if let Err(e) = res {
            path_reason(
                v,
                &p,
                &e,
                if r.writes {
                    "redirection writes"
                } else {
                    "redirection reads"
                },
            );
        }
    }
}

fn path_reason(v: &mut Verdict, p: &Path, e: &PathProblem, what: &str) {
    let shown = p.display();
    match e {
        PathProblem::NotReadable => v.add(
            Layer::Policy,
            "roots.not_readable",
            Decision::Deny,
            format!("{what} `{shown}`, outside the readable roots"),
            Some("read inside the project, or ask the user for what you need".into()),
        ),
        PathProblem::NotWritable => v.add(
            Layer::Policy,
            "roots.not_writable",
            Decision::Deny,
            format!("{what} `{shown}`, outside the writable roots"),
            Some("write inside the project directory or $TMPDIR".into()),
        ),
        PathProblem::Secret(d) if d == p => v.add(
            Layer::Policy,
            "roots.secret",
            Decision::Deny,
            format!("{what} `{shown}`, a secret file (its name is in [paths] secret_names)"),
            Some("leave secrets alone: read the non-secret template (e.g. .env.example) or ask the user for the value you need".into()),
        ),
        PathProblem::Secret(d) => v.add(
            Layer::Policy,
            "roots.secret",
            Decision::Deny,
            format!(
                "{what} `{shown}`, inside the protected path `{}`",
                d.display()
            ),
            Some("leave secrets alone: work with the project's own files, or ask the user for the value you need".into()),
        ),
        PathProblem::Protected(d) => {
            v.add(
                Layer::Policy,
                "roots.protected",
                Decision::Deny,
                format!(
                    "{what} `{shown}`, which changes `{}`: a protected file ([paths] protected) that runs later outside any sandbox",
                    d.display()
                ),
                Some("leave it unchanged and ask the user to make this change".into()),
            );
            v.risk = Risk::Dangerous;
        }
        PathProblem::Broad => {
            v.add(
                Layer::Policy,
                "roots.broad_target",
                Decision::Deny,
                format!("{what} `{shown}` recursively; that target is too broad"),
                Some("name the specific directory inside the project, e.g. ./build".into()),
            );
            v.risk = Risk::Dangerous;
        }
    }
}

/// Option effects and typed option values.
fn options(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
) -> Risk {
    let mut risk = Risk::Safe;
    let destructive = p.has_effect(Effect::Recursive)
        || (p.has_effect(Effect::Delete) && !p.has_effect(Effect::Filter));
    for o in &p.options {
        let why = o.spec.reason.clone();
        for e in &o.spec.effects {
            match e {
                Effect::Write | Effect::WritesOperands | Effect::Delete => {
                    risk = risk.max(Risk::Write)
                }
                Effect::Dangerous => {
                    risk = Risk::Dangerous;
                    v.danger.push((
                        format!(
                            "`{name} {}` is dangerous{}",
                            o.written,
                            why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                        ),
                        o.spec.suggest.clone(),
                    ));
                    if !v
                        .matched_rules
                        .iter()
                        .any(|r| r == "registry.dangerous_option")
                    {
                        v.matched_rules.push("registry.dangerous_option".into());
                    }
                }
                Effect::Exec => {
                    risk = Risk::Dangerous;
                    v.add(
                        Layer::Policy,
                        "registry.exec_option",
                        Decision::Deny,
                        format!(
                            "`{name} {}` makes it run another program{}",
                            o.written,
                            why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                        ),
                        Some("run the other program as a command of its own".into()),
                    );
                }
                Effect::Network => confined::needs_network(name, ctx, v),
                Effect::Blocked => v.add(
                    Layer::Policy,
                    "registry.blocked_option",
                    Decision::Deny,
                    format!(
                        "`{name} {}` is not allowed{}",
                        o.written,
                        why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                    ),
                    None,
                ),
                Effect::Ask => v.add(
                    Layer::Policy,
                    "registry.ask_option",
                    Decision::Ask,
                    format!(
                        "`{name} {}` needs confirmation{}",
                        o.written,
                        why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                    ),
                    None,
                ),
                Effect::Code => risk = risk.max(Risk::Write),
                Effect::Recursive
                | Effect::Template
                | Effect::Last
                | Effect::Filter
                | Effect::ReadsTree => {}
            }
        }
        if let Some(val) = &o.value {
            risk = risk.max(typed_value(
                name,
                &o.spec.value_type,
                val,
                seg,
                ctx,
                v,
                code,
                destructive,
                &o.written,
            ));
        }
    }
    risk
}

/// Operands by their registry type.
fn operands(
    name: &str,
    p: &ParsedArgs,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
) -> Risk {
    let mut risk = Risk::Safe;
    let destructive = p.has_effect(Effect::Recursive)
        || (p.has_effect(Effect::Delete) && !p.has_effect(Effect::Filter));
    let writes_all = p.has_effect(Effect::Delete) || p.has_effect(Effect::WritesOperands);
    let tree = p.has_effect(Effect::ReadsTree);
    for (w, t) in &p.operands {
        let t = if writes_all && matches!(t.as_str(), "read_path" | "path" | "dir") {
            "write_path"
        } else if tree && matches!(t.as_str(), "read_path" | "path" | "dir") {
            "read_tree"
        } else if tree && t == "sync_src" {
            "sync_src_tree"
        } else {
            t.as_str()
        };
        risk = risk.max(typed_value(
            name,
            t,
            w,
            seg,
            ctx,
            v,
            code,
            destructive,
            "operand",
        ));
    }
    risk
}

#[allow(clippy::too_many_arguments)]
fn typed_value(
    name: &str,
    t: &str,
    w: &Word,
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
    destructive: bool,
    what: &str,
) -> Risk {
    match t {
        "read_path" | "path" | "dir" | "archive" | "chdir" => {
            path_operand(seg, ctx, v, w, "read_path", false, name);
            Risk::Safe
        }
        "read_tree" => {
            // A recursive read (`cp -r ~ x`, `grep -r key ~`) of a tree that
            // holds a protected path reads the secret too.
            path_operand(seg, ctx, v, w, "read_path", true, name);
            Risk::Safe
        }
        "script" => {
            if crate::parse::unwrap::is_stdin_path(&w.value) {
                // `awk -f -`, `python3 -`: the program comes from standard input.
                stdin_program(seg, ctx, v, code, name);
                return Risk::Write;
            }
            path_operand(seg, ctx, v, w, "read_path", false, name);
            written_then_run(seg, ctx, v, &w.value, name, code);
            Risk::Safe
        }
        "sync_src" | "sync_src_tree" | "sync_dest" => {
            // `HOST:PATH` and `rsync://` reach another machine.
            let v2 = w.value.as_str();
            let remote = v2.contains("://")
                || v2
                    .split_once(':')
                    .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
            if remote {
                v.add(
                    Layer::Policy,
                    "network.remote_path",
                    Decision::Deny,
                    format!("`{name} {v2}` names another host; only local copies are accepted"),
                    Some(format!("{name} -a SRC/ DEST/ with local paths")),
                );
                return Risk::Dangerous;
            }
            let kind = if t == "sync_dest" {
                "write_path"
            } else {
                "read_path"
            };
            let tree = t == "sync_src_tree" || (destructive && t == "sync_dest");
            path_operand(seg, ctx, v, w, kind, tree, name);
            if t == "sync_dest" {
                Risk::Write
            } else {
                Risk::Safe
            }
        }
        "hardlink_target" => {
            // A hard link shares the inode: writes through it change the
            // original, so the original must be writable too.
            path_operand(seg, ctx, v, w, "write_path", false, name);
            Risk::Write
        }
        "link_target" => {
            path_operand(seg, ctx, v, w, "read_path", false, name);
            let p = ctx.resolve(seg, &w.value);
            let sensitive = ctx.roots.is_broad(&p) && ctx.roots.check_write(&p, false).is_err()
                || ctx.roots.deny_read.iter().any(|d| p.starts_with(d));
            if !w.unresolved && sensitive {
                v.add(
                    Layer::Policy,
                    "policy.link_outside",
                    Decision::Ask,
                    format!("`{name}` makes a link to `{}`; later commands writing through it would reach there", p.display()),
                    Some("link to a path inside the project".into()),
                );
            }
            Risk::Write
        }
        "write_path" => {
            path_operand(seg, ctx, v, w, "write_path", destructive, name);
            Risk::Write
        }
        "destroy_path" => {
            // Discards changes under the path (`git checkout -- .`): a broad
            // target throws away everything.
            path_operand(seg, ctx, v, w, "write_path", true, name);
            Risk::Write
        }
        "refspec" => {
            if w.value.starts_with('+') {
                v.danger.push((
                    format!("`{name} {}`: a leading `+` forces the update", w.value),
                    Some(format!("{name} --force-with-lease")),
                ));
                return Risk::Dangerous;
            }
            if w.value.starts_with(':') {
                v.danger
                    .push((format!("`{name} {}` deletes the remote ref", w.value), None));
                return Risk::Dangerous;
            }
            Risk::Safe
        }
        "env_assignment" => {
            if let Some((n, val)) = w.value.split_once('=')
                && let Some(what) = is_dangerous_var(n, (!w.unresolved).then_some(val))
                && !confined::code_path_assignment(n, val, seg, ctx, v)
            {
                v.add(
                    Layer::Policy,
                    "policy.dangerous_assignment",
                    Decision::Deny,
                    format!("`{name} {n}=...` {what}"),
                    Some("drop the assignment; configure the tool in its own config file".into()),
                );
                return Risk::Dangerous;
            }
            Risk::Safe
        }
        "code" => {
            code.push(w.value.clone());
            code_paths(name, &w.value, seg, ctx, v);
            Risk::Write
        }
        "command" => {
            v.add(
                Layer::Policy,
                "registry.exec_value",
                Decision::Deny,
                format!("`{name} {what}` runs the program `{}`", w.value),
                Some("run the other program as a command of its own".into()),
            );
            Risk::Dangerous
        }
        "count" => {
            if w.value.parse::<u64>().is_err() && !w.unresolved {
                v.add(
                    Layer::Policy,
                    "registry.bad_count",
                    Decision::Deny,
                    format!("`{name}`: `{}` is not a count", w.value),
                    None,
                );
            }
            Risk::Safe
        }
        "url" => {
            let lower = w.value.to_ascii_lowercase();
            if lower.starts_with("ext::") || lower.starts_with("fd::") {
                v.add(
                    Layer::Policy,
                    "registry.exec_url",
                    Decision::Deny,
                    format!("`{name}`: an `ext::` URL runs a program"),
                    None,
                );
                return Risk::Dangerous;
            }
            if lower.starts_with("file:") {
                v.add(
                    Layer::Policy,
                    "network.file_url",
                    Decision::Deny,
                    format!("`{name}`: `file:` URLs read local files"),
                    None,
                );
            }
            // Confined, the sandbox has no network: the program's own entry
            // asks "needs network" where it reaches other hosts.
            if !ctx.confined {
                v.warn(NETWORK_WARNING.into());
            }
            Risk::Safe
        }
        "host" | "domain" => {
            if !ctx.confined {
                v.warn(NETWORK_WARNING.into());
            }
            Risk::Safe
        }
        // Unconfined, nothing keeps a signal inside the command's own
        // processes: only job specs (`%1`) and `$!` (the last process this
        // string started) are the command's own.
        "pid" | "process_pattern" if !ctx.confined => {
            let own =
                t == "pid" && (w.value.starts_with('%') || w.raw == "$!" || w.raw == "\"$!\"");
            if !own {
                v.add(
                    Layer::Policy,
                    "policy.signal_other_process",
                    Decision::Deny,
                    format!(
                        "`{name} {}` signals processes this command did not start, and nothing confines it",
                        w.raw
                    ),
                    Some("stop only processes this command started (`kill %1`, `kill $!`)".into()),
                );
                return Risk::Dangerous;
            }
            Risk::Write
        }
        "rustc_codegen" => {
            // `-C KEY[=VALUE]`: an allowlist; `linker=`, `link-arg=`,
            // `link-args=`, `llvm-args=` and keys added later may run or
            // load other programs.
            const HARMLESS: &[&str] = &[
                "opt-level",
                "debuginfo",
                "debug-assertions",
                "overflow-checks",
                "codegen-units",
                "incremental",
                "lto",
                "panic",
                "strip",
                "target-cpu",
                "target-feature",
                "relocation-model",
                "code-model",
                "embed-bitcode",
                "force-frame-pointers",
                "force-unwind-tables",
                "metadata",
                "extra-filename",
                "prefer-dynamic",
                "split-debuginfo",
                "symbol-mangling-version",
                "instrument-coverage",
                "rpath",
                "no-redzone",
                "soft-float",
                "inline-threshold",
                "link-dead-code",
                "linker-plugin-lto",
            ];
            let key = w.value.split('=').next().unwrap_or("");
            if w.unresolved || !HARMLESS.contains(&key) {
                v.add(
                    Layer::Policy,
                    "registry.exec_value",
                    Decision::Deny,
                    format!("`{name} -C {key}` is not a codegen option known to be harmless; some run or load other programs"),
                    None,
                );
                return Risk::Dangerous;
            }
            Risk::Safe
        }
        "git_config" => git_config(name, w, v),
        // Checked on the whole command line (`git_config_command`).
        "git_config_key" => Risk::Safe,
        "npm_config_action" => {
            if !matches!(w.value.as_str(), "get" | "list" | "ls") {
                v.add(
                    Layer::Policy,
                    "registry.npm_config_write",
                    Decision::Ask,
                    format!(
                        "`{name} {}` changes npm's configuration, which can name programs npm runs",
                        w.value
                    ),
                    None,
                );
                return Risk::Write;
            }
            Risk::Safe
        }
        "dd_operand" => {
            // `if=FILE` reads, `of=FILE` writes; other operands are values.
            match w.value.split_once('=') {
                Some(("if", f)) => {
                    let word = Word {
                        value: f.to_string(),
                        ..w.clone()
                    };
                    path_operand(seg, ctx, v, &word, "read_path", false, name);
                    Risk::Safe
                }
                Some(("of", f)) => {
                    let word = Word {
                        value: f.to_string(),
                        ..w.clone()
                    };
                    path_operand(seg, ctx, v, &word, "write_path", false, name);
                    Risk::Write
                }
                _ => Risk::Safe,
            }
        }
        "sed_script" => sed_script(name, w, seg, ctx, v),
        "awk_program" => {
            code.push(w.value.clone());
            let e = awk::effects(&w.value);
            if e.exec {
                v.add(
                    Layer::Policy,
                    "registry.awk_exec",
                    Decision::Deny,
                    format!("the `{name}` program runs shell commands"),
                    Some("do the work with separate commands".into()),
                );
                return Risk::Dangerous;
            }
            if let Some(why) = &e.unknown {
                unknown(v, ctx, why);
            }
            for f in &e.reads {
                let p = ctx.resolve(seg, f);
                if let Err(err) = ctx.roots.check_read(&p) {
                    path_reason(v, &p, &err, &format!("the `{name}` program reads"));
                }
            }
            let mut risk = Risk::Safe;
            for f in &e.writes {
                let p = ctx.resolve(seg, f);
                if !paths::is_device_sink(&p) {
                    risk = Risk::Write;
                    ctx.writes_seen.borrow_mut().push(p.clone());
                }
                if let Err(err) = ctx.roots.check_redirect(&p) {
                    path_reason(v, &p, &err, &format!("the `{name}` program writes"));
                }
            }
            risk
        }
        _ => Risk::Safe,
    }
}

fn path_operand(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    w: &Word,
    t: &str,
    destructive: bool,
    name: &str,
) {
    if w.unresolved {
        if confined::unresolved_read_ok(ctx, w, t, destructive) {
            v.note(
                Layer::Policy,
                format!(
                    "{name}: reads `{}`, known only at run time; runs confined",
                    w.raw
                ),
            );
            return;
        }
        unknown_with(
            v,
            ctx,
            &format!(
                "`{name}` path `{}` contains an expansion the policy cannot resolve",
                w.raw
            ),
            "run the inner command first and pass the path it prints literally",
        );
        return;
    }
    // Git pathspec magic (`:/` is the top of the repository, `:(top)`,
    // `:!x`, `:(glob)...`): the path is not what it looks like.
    if name.starts_with("git") && w.value.starts_with(':') {
        unknown(
            v,
            ctx,
            &format!(
                "`{name}` pathspec `{}` uses pathspec magic (`:/` is the whole repository)",
                w.raw
            ),
        );
        return;
    }
    let mut value = w.value.clone();
    if w.glob && paths::glob_then_parent(&w.value) {
        unknown(
            v,
            ctx,
            &format!(
                "`{name}` path `{}` has `..` after a glob: where it leads depends on what the glob matches",
                w.raw
            ),
        );
        return;
    }
    if w.glob {
        if t == "write_path" && !w.value.contains('/') && w.value.starts_with(['*', '?', '[']) {
            v.add(
                Layer::Policy,
                "policy.glob_option_injection",
                Decision::Ask,
                format!(
                    "`{name} {}`: a file name matched by the glob could be read as an option",
                    w.raw
                ),
                Some(format!("{name} ./{}", w.raw)),
            );
        }
        // Check the fixed directory part of the glob.
        let cut = value.find(['*', '?', '[']).unwrap_or(value.len());
        value = match value[..cut].rfind('/') {
            Some(0) => "/".to_string(),
            Some(i) => value[..i].to_string(),
            None => ".".to_string(),
        };
        // `rm -rf *` empties the directory: checked as the directory itself,
        // so in a writable root it is as broad as `rm -rf .`.
    }
    let p: PathBuf = ctx.resolve(seg, &value);
    // `mkdir` and `touch` create nothing a program could run or load.
    if t == "write_path" && !matches!(seg.program.as_str(), "mkdir" | "touch") {
        ctx.writes_seen
            .borrow_mut()
            .push(ctx.resolve(seg, &w.value));
    }
    let mut res = if t == "write_path" {
        ctx.roots.check_write(&p, destructive)
    } else if destructive {
        ctx.roots.check_read_tree(&p)
    } else {
        ctx.roots.check_read(&p)
    };
    if res.is_ok() && w.glob {
        // The glob's fixed prefix is fine; could the pattern itself reach a
        // protected path (`cat ~/.ss?/id_rsa`)?
        let pattern = ctx.resolve(seg, &w.value);
        if let Some(d) = ctx
            .roots
            .deny_read
            .iter()
            .find(|d| paths::glob_may_reach(&pattern, d, destructive))
        {
            res = Err(PathProblem::Secret(d.clone()));
        }
    }
    if let Err(e) = res {
        let what = if t == "write_path" {
            format!("`{name}` writes")
        } else {
            format!("`{name}` reads")
        };
        path_reason(v, &p, &e, &what);
    }
}

/// Directories whose programs are the system's own; a program run by path
/// from anywhere else (`./rm`, `/tmp/cat`) is not the registry's program.
const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// `./rm -rf x` is checked as `rm` (so `./rm -rf ~` is still refused), but
/// the file is whatever the working tree holds: never allowed on the name alone.
fn untrusted_program_path(seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    let written = &seg.argv[0];
    let p = paths::resolve(&seg.cwd, written);
    let dir = Path::new(written)
        .parent()
        .map(|d| paths::resolve(&seg.cwd, &d.to_string_lossy()));
    let trusted = SYSTEM_BIN_DIRS.iter().any(|d| {
        let d = Path::new(d);
        p.parent() == Some(d)
            || dir.as_deref() == Some(d)
            || std::fs::canonicalize(d).ok().as_deref() == p.parent()
    });
    // Such a program is an unknown command, whatever its name: the sandbox
    // contains it when confined.
    let d = decision_of(ctx.profile.doc.policy.unknown_commands);
    if !trusted && d != Decision::Allow {
        let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
        if d == Decision::Deny {
            v.add(
                Layer::Policy,
                "registry.untrusted_path",
                d,
                format!("`{written}` is a program from `{}`, not a system program, and this profile refuses programs it does not know", dir.display()),
                Some("use a registered program, or a profile that allows unknown programs".into()),
            );
        } else {
            confined::project_program(seg, ctx, v, &dir);
        }
    }
}

/// A program read from standard input: a literal heredoc is inspected as
/// code; anything else (a pipe, a file redirected in) cannot be checked.
fn stdin_program(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    code: &mut Vec<String>,
    name: &str,
) {
    match &seg.stdin_data {
        Some(data) => {
            code.push(data.clone());
            code_paths(name, data, seg, ctx, v);
        }
        None => unknown(
            v,
            ctx,
            &format!("`{name}` reads its program from standard input; it cannot be checked"),
        ),
    }
}

/// Unconfined: a program that runs code from files (an interpreter, a
/// build tool, a program run by path) after an earlier segment of the same
/// string wrote a file it may run or load: a script it is given, or any
/// file in the tree it works in (`tee x.sh; bash x.sh`, `cp a Makefile &&
/// make`, `echo ... > conftest.py; pytest`, `sed -i ... build.rs && cargo
/// build`). What it runs is not what the policy saw.
fn written_then_loaded(
    seg: &Segment,
    name: &str,
    spec: &CommandSpec,
    ctx: &PolicyContext,
    v: &mut Verdict,
) {
    let runs_code = spec.interpreter || seg.argv[0].contains('/');
    if !runs_code {
        return;
    }
    let scripts: Vec<PathBuf> = seg.words[1..]
        .iter()
        .filter(|w| !w.value.starts_with('-'))
        .map(|w| ctx.resolve(seg, &w.value))
        .collect();
    let program = ctx.resolve(seg, &seg.argv[0]);
    let hit = ctx
        .writes_seen
        .borrow()
        .iter()
        .find(|p| p.starts_with(&seg.cwd) || scripts.contains(p) || **p == program)
        .cloned();
    if let Some(p) = hit {
        unknown(
            v,
            ctx,
            &format!(
                "`{name}` runs or loads code from its working tree, where an earlier command in this string writes `{}`; nothing confines what it runs",
                p.display()
            ),
        );
    }
}

/// Running a file that a redirection in the same string wrote
/// (`printf ... > x.sh && sh x.sh`): its content is not known when checking.
fn written_then_run(
    seg: &Segment,
    ctx: &PolicyContext,
    v: &mut Verdict,
    file: &str,
    name: &str,
    code: &mut Vec<String>,
) {
    let p = ctx.resolve(seg, file);
    if ctx.written.contains(&p) {
        confined::written_then_run(seg, ctx, v, &p, file, name, code);
    }
}

/// Visible destruction in inline code: a deleting call with a literal path
/// (`shutil.rmtree("/x")`, `unlink "/etc/passwd"`, `fs.rmSync("/")`) is
/// checked like the same path given to `rm`.
fn code_paths(name: &str, code: &str, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) {
    static CALL: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(re) = CALL
        .get_or_init(|| {
            regex::Regex::new(
                r#"\b(rmtree|rmSync|rmdirSync|unlinkSync|rm_rf|rm_r|rm_f|remove_dir_all|remove_file|removedirs|rmdir|unlink|remove|rimraf|truncate)\b\s*\(?\s*(glob\s*\(\s*)?["']([^"']+)["']"#,
            )
            .ok()
        })
        .as_ref()
    else {
        return;
    };
    for c in re.captures_iter(code) {
        let func = c.get(1).map_or("", |m| m.as_str());
        let globbed = c.get(2).is_some();
        let Some(raw) = c.get(3).map(|m| m.as_str()) else {
            continue;
        };
        let mut path = match raw.strip_prefix('~') {
            Some(rest) => format!("{}{rest}", ctx.roots.home.display()),
            None => raw.to_string(),
        };
        let has_glob = globbed || path.contains(['*', '?', '[']);
        if has_glob {
            let cut = path.find(['*', '?', '[']).unwrap_or(path.len());
            path = match path[..cut].rfind('/') {
                Some(0) => "/".into(),
                Some(i) => path[..i].to_string(),
                None => ".".into(),
            };
        }
        let recursive = matches!(
            func,
            "rmtree" | "rmSync" | "rm_rf" | "rm_r" | "remove_dir_all" | "removedirs" | "rimraf"
        );
        let p = ctx.resolve(seg, &path);
        if let Err(e) = ctx.roots.check_write(&p, recursive || has_glob) {
            path_reason(v, &p, &e, &format!("`{name}` code calls `{func}` on"));
        }
    }
}

/// `git -c key=value`: only keys on the allowlist of harmless keys
/// (`git_config.rs`); any other key may name a program git runs.
fn git_config(name: &str, w: &Word, v: &mut Verdict) -> Risk {
    let (key, value) = match w.value.split_once('=') {
        Some((k, val)) => (k, Some(val)),
        None => (w.value.as_str(), Some("true")),
    };
    if key.eq_ignore_ascii_case("clean.requireForce") {
        v.add(
            Layer::Policy,
            "history.destroy",
            Decision::Deny,
            format!("`{name} -c clean.requireForce=...` lets `git clean` delete untracked files without `-f`; the sandbox cannot protect work inside the project"),
            Some("list what would go with `git clean -n`".into()),
        );
        return Risk::Dangerous;
    }
    if w.unresolved || !git_config::harmless(key, value) {
        v.add(
            Layer::Policy,
            "registry.git_config_exec",
            Decision::Deny,
            format!("`{name} -c {key}=...` is not a setting known to be harmless; git settings can make it run other programs"),
            Some("drop the -c setting".into()),
        );
        return Risk::Dangerous;
    }
    Risk::Safe
}

/// `git config KEY VALUE`, `git config set KEY VALUE`: the key must be on
/// the allowlist of harmless keys.
fn git_config_command(parsed: &ParsedArgs, v: &mut Verdict) {
    let options: Vec<String> = parsed.options.iter().map(|o| o.name.clone()).collect();
    let operands: Vec<String> = parsed
        .operands
        .iter()
        .map(|(w, _)| w.value.clone())
        .collect();
    for (key, value) in git_config::keys_set(&options, &operands) {
        if !git_config::harmless(&key, value.as_deref()) {
            v.add(
                Layer::Policy,
                "registry.git_config_exec",
                Decision::Deny,
                format!("`git config` sets `{key}`, which is not a setting known to be harmless; git settings can make it run other programs"),
                None,
            );
            v.risk = Risk::Dangerous;
        }
    }
}

/// A sed script, read with sed's grammar (`sed.rs`): `e` and `s///e` run
/// commands, `r`/`R` read files and `w`/`W`/`s///w` write them.
fn sed_script(name: &str, w: &Word, seg: &Segment, ctx: &PolicyContext, v: &mut Verdict) -> Risk {
    let effects = match sed::effects(&w.value) {
        Ok(e) => e,
        Err(why) => {
            unknown(
                v,
                ctx,
                &format!("the `{name}` script cannot be read: {why}"),
            );
            return Risk::Safe;
        }
    };
    if effects.exec {
        v.add(
            Layer::Policy,
            "registry.sed_exec",
            Decision::Deny,
            format!("the `{name}` script uses the `e` command, which runs shell commands"),
            Some("drop the `e` command or flag and run the command separately".into()),
        );
        return Risk::Dangerous;
    }
    for f in &effects.reads {
        let p = ctx.resolve(seg, f);
        if let Err(e) = ctx.roots.check_read(&p) {
            path_reason(v, &p, &e, &format!("the `{name}` script reads"));
        }
    }
    let mut risk = Risk::Safe;
    for f in &effects.writes {
        let p = ctx.resolve(seg, f);
        if !paths::is_device_sink(&p) {
            risk = Risk::Write;
            ctx.writes_seen.borrow_mut().push(p.clone());
        }
        if let Err(e) = ctx.roots.check_redirect(&p) {
            path_reason(v, &p, &e, &format!("the `{name}` script writes"));
        }
    }
    risk
}
