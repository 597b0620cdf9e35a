//! The agent-command corpus (`tests/data/agent-commands.tsv`: shell commands
//! that real agents ran, taken from public trajectories and session logs; see
//! `tests/data/README.md`) goes through the real decision of `check` as run
//! mode makes it: the library's `decide_full` (what `safe-exec check` calls),
//! confined, with the built-in `default` profile, from an ordinary
//! Python/Node project the test creates in a temp dir, with a temp HOME.
//!
//! `agent_corpus_data_is_well_formed` checks the data file;
//! `agent_corpus_decides_every_command` decides every row (no panic, bounded
//! time) and prints the allow rate per source and agent kind;
//! `agent_corpus_meets_allow_targets` asserts issue 10's targets (it fails
//! until the confined decisions and loopback land; the figures it prints say
//! how far off). The situation is `example_situation()` moved to the test
//! project, so it decides confined exactly when that function says so.
//! `write_agent_commands_report` (ignored) writes the agent-command section
//! of `docs/corpus-report.md` and, with `SAFE_EXEC_REFUSALS_OUT=FILE`, the
//! refusals grouped by cause:
//! `cargo test --release --test tests -- --ignored --nocapture corpus::agents`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use safe_exec::decide::{CommandInput, Decided, LayerOptions, Situation, decide_full};
use safe_exec::policy::Decision;
use safe_exec::profile::{self, Profile};

/// Issue 10: at least this share of all commands is allowed.
const TARGET_OVERALL: f64 = 0.97;
/// Issue 10: at least this share of the commands of interactive agents.
const TARGET_INTERACTIVE: f64 = 0.90;
/// What the test asserts. Issue 10's 97% overall is not reachable with the
/// right decisions on this corpus: the refusals that are right by the
/// issue and the contract (network asks 472, docker 225, signals to other
/// processes 171, package runners 149, blocked network tools 113, writes
/// outside the roots 107, external network forms, secrets, sudo) are more
/// than the 3% the target leaves (793 of 26,449). The floor is the share
/// measured with the right behaviour (24,578 of 26,449 = 92.9%, release
/// build, 2026-11-22 20:22 UTC), rounded down, so a regression fails; the
/// interactive target (90%) is met and asserted as is. The report keeps
/// printing the targets beside the measured figures. Red team 9
/// (2026-11-27) added hook managers' hooks and configuration to the
/// protected list: 10 more right refusals (the agent writing
/// `.husky/pre-commit`, `chmod +x .husky/pre-commit`, `rm -rf .husky`,
/// `pre-commit migrate-config` rewriting `.pre-commit-config.yaml`, ...:
/// hooks that run at the user's next commit), 24,568 = 92.89%, rounded
/// down.
const FLOOR_OVERALL: f64 = 0.928;
/// See [`FLOOR_OVERALL`]: the interactive target itself.
const FLOOR_INTERACTIVE: f64 = TARGET_INTERACTIVE;
/// The interactive agents of issue 10's target ("Claude Code, Cursor"). The
/// other kinds are reported on their own: mini-swe-agent ran unattended on
/// SWE-bench; Codex and Gemini CLI rows come from one source each.
const INTERACTIVE: &[&str] = &["claude-code", "cursor"];
/// Marker the extraction put where the log had the agent's project
/// directory (SWE-bench's `/testbed`, a Claude Code session's `cwd`).
const PROJECT_MARKER: &str = "{{project}}";

const DATA: &str = "tests/data/agent-commands.tsv";
const REPORT: &str = "docs/corpus-report.md";
const BEGIN: &str = "<!-- agent-commands:begin -->";
const END: &str = "<!-- agent-commands:end -->";

/// One row of the corpus.
struct Row {
    source: String,
    agent: String,
    command: String,
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn load_rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DATA);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the corpus is part of the repository)",
            path.display()
        )
    });
    text.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            let (Some(source), Some(agent), Some(cmd)) = (f.next(), f.next(), f.next()) else {
                panic!("malformed row: {l:?}");
            };
            Row {
                source: source.to_string(),
                agent: agent.to_string(),
                command: unescape(cmd),
            }
        })
        .collect()
}

/// `.venv/bin` of the test project: the interpreter and the usual Python
/// dev dependencies.
const VENV_TOOLS: &[&str] = &[
    "python", "python3", "pip", "pytest", "ruff", "black", "mypy", "flake8", "isort", "coverage",
    "uvicorn", "alembic",
];
/// `node_modules/.bin` of the test project: the usual JavaScript and
/// TypeScript dev dependencies.
const NODE_TOOLS: &[&str] = &[
    "tsc",
    "eslint",
    "prettier",
    "jest",
    "vitest",
    "playwright",
    "tsx",
    "ts-node",
    "vite",
    "next",
    "webpack",
    "prisma",
    "drizzle-kit",
    "biome",
    "turbo",
    "nodemon",
    "concurrently",
];

/// An ordinary Python/Node project (git, pyproject, package.json, sources,
/// tests, a venv and node_modules/.bin) at `HOME/src/app`, in a temp dir.
/// The temp directory of the situation stays `/tmp` with no `$TMPDIR`, as
/// for an agent on an ordinary machine (agents write `/tmp/x.py` often);
/// nothing is written anywhere, the test only decides.
struct World {
    _dir: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

fn world() -> World {
    // Not under /tmp: the situation's temp dir is /tmp, which is writable,
    // and HOME must not be (the policy drops a writable root that contains
    // HOME). Cargo's target tmp dir, unless the target dir is under /tmp.
    let base = [env!("CARGO_TARGET_TMPDIR"), "/var/tmp"]
        .into_iter()
        .map(PathBuf::from)
        .find(|b| !b.starts_with("/tmp") && b.is_dir())
        .expect("a temp dir outside /tmp (target/tmp or /var/tmp)");
    let dir = tempfile::Builder::new()
        .prefix("agent-corpus")
        .tempdir_in(base)
        .expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
    let home = root.join("home");
    let project = home.join("src/app");
    let files: &[(&str, &str)] = &[
        (".git/HEAD", "ref: refs/heads/main\n"),
        (".git/config", "[core]\n\trepositoryformatversion = 0\n"),
        (".gitignore", ".venv/\nnode_modules/\n"),
        (
            "pyproject.toml",
            "[project]\nname = \"app\"\nversion = \"0.1.0\"\n",
        ),
        ("setup.py", "from setuptools import setup\nsetup()\n"),
        (
            "package.json",
            "{\"name\": \"app\", \"scripts\": {\"test\": \"jest\", \"build\": \"tsc\"}}\n",
        ),
        ("README.md", "# app\n"),
        ("src/app/__init__.py", ""),
        ("src/app/main.py", "print('hi')\n"),
        ("src/index.ts", "export {};\n"),
        ("tests/test_main.py", "def test_x():\n    assert True\n"),
    ];
    for (p, body) in files {
        let f = project.join(p);
        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
        std::fs::write(&f, body).expect("write");
    }
    // The executables an ordinary project's dev dependencies install.
    for (dir, tools) in [(".venv/bin", VENV_TOOLS), ("node_modules/.bin", NODE_TOOLS)] {
        for t in tools {
            let f = project.join(dir).join(t);
            std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
            std::fs::write(&f, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .expect("chmod");
        }
    }
    std::fs::create_dir_all(home.join(".local/state")).expect("home");
    World {
        _dir: dir,
        project,
        home,
    }
}

/// Creates, inside the test project, the relative directories the commands
/// `cd` into (`cd reproduce_issue/testproject && ...`): they existed in the
/// agent's project when it ran the command (it made them in an earlier
/// step), and a `cd` into a missing directory leaves the working directory
/// unknown to the decision.
fn make_cd_targets(rows: &[Row], w: &World) {
    for r in rows {
        let text = r
            .command
            .replace(PROJECT_MARKER, &w.project.display().to_string());
        let mut words = text.split(|c: char| c.is_whitespace() || ";&|()".contains(c));
        while let Some(word) = words.next() {
            if word != "cd" {
                continue;
            }
            let Some(target) = words.find(|x| !x.is_empty()) else {
                break;
            };
            let target = target.trim_matches(|c| c == '"' || c == '\'');
            let literal = !target.is_empty()
                && !target.starts_with(['-', '~', '$'])
                && !target.contains(['$', '`', '*', '?', '{', '\\'])
                && !target.split('/').any(|c| c == "..");
            let dir = if target.starts_with('/') {
                // Only absolute paths inside the test project.
                Path::new(target)
                    .starts_with(&w.project)
                    .then(|| PathBuf::from(target))
            } else {
                Some(w.project.join(target))
            };
            if let (true, Some(dir)) = (literal, dir) {
                let _ = std::fs::create_dir_all(dir);
            }
        }
    }
}

/// The situation `check` builds from that cwd and HOME (run mode: the
/// decision is made for the confined run).
fn situation(w: &World) -> Situation {
    let mut sit = safe_exec::decide::example_situation();
    sit.places.cwd = w.project.clone();
    sit.places.git_root = Some(w.project.clone());
    sit.places.home = w.home.clone();
    sit.places.tmp = PathBuf::from("/tmp");
    sit.places.state = w.home.join(".local/state/safe-exec");
    sit.tmpdir_env = None;
    sit.interactive = false;
    sit
}

fn decide_row(cmd: &str, w: &World, profile: &Profile, sit: &Situation) -> Decided {
    let text = cmd.replace(PROJECT_MARKER, &w.project.display().to_string());
    let input = CommandInput::String {
        text,
        positional: vec!["bash".into()],
    };
    let lo = LayerOptions {
        record: false,
        opts: serde_json::json!({"profile": "default", "dry_run": true}),
        ..LayerOptions::default()
    };
    decide_full(&input, profile, sit, &lo).0
}

#[derive(Default, Clone, Copy)]
struct Counts {
    allow: usize,
    ask: usize,
    deny: usize,
}

impl Counts {
    fn add(&mut self, d: Decision) {
        match d {
            Decision::Allow => self.allow += 1,
            Decision::Ask => self.ask += 1,
            Decision::Deny => self.deny += 1,
        }
    }
    fn total(&self) -> usize {
        self.allow + self.ask + self.deny
    }
    fn rate(&self) -> f64 {
        self.allow as f64 / self.total().max(1) as f64
    }
}

/// A refused command with its first refusing reason.
struct Refusal {
    source: String,
    agent: String,
    command: String,
    decision: Decision,
    rule: String,
    program: String,
    message: String,
}

struct Outcome {
    total: Counts,
    interactive: Counts,
    per_source: BTreeMap<(String, String), Counts>,
    per_agent: BTreeMap<String, Counts>,
    refusals: Vec<Refusal>,
    took: Duration,
    slowest: (Duration, String),
}

/// What the decision said about one row.
struct Judged {
    decision: Decision,
    rule: String,
    program: String,
    message: String,
    took: Duration,
}

fn judge(cmd: &str, w: &World, profile: &Profile, sit: &Situation) -> Judged {
    let t = Instant::now();
    let d = decide_row(cmd, w, profile, sit);
    let took = t.elapsed();
    let decision = d.verdict.decision;
    let reason = d.verdict.reasons.iter().find(|x| x.decision == decision);
    // The program the refusing reason names, else the first one.
    let program = d
        .model
        .segments
        .iter()
        .map(|s| s.program.clone())
        .find(|p| reason.is_some_and(|x| x.message.contains(p.as_str())))
        .or_else(|| d.model.segments.first().map(|s| s.program.clone()))
        .unwrap_or_default();
    Judged {
        decision,
        rule: reason.map(|x| x.rule.clone()).unwrap_or_default(),
        program,
        message: reason.map(|x| x.message.clone()).unwrap_or_default(),
        took,
    }
}

/// The corpus decided once per test process (both tests and the report
/// share it), on every available core.
fn outcome() -> &'static Outcome {
    static OUTCOME: OnceLock<Outcome> = OnceLock::new();
    OUTCOME.get_or_init(run_corpus)
}

fn run_corpus() -> Outcome {
    let rows = load_rows();
    assert!(rows.len() >= 5000, "only {} rows", rows.len());
    let w = world();
    make_cd_targets(&rows, &w);
    let profile = profile::load("default").expect("default profile");
    let sit = situation(&w);
    let start = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = rows.len().div_ceil(threads);
    let judged: Vec<Judged> = std::thread::scope(|scope| {
        let handles: Vec<_> = rows
            .chunks(chunk)
            .map(|part| {
                let (w, profile, sit) = (&w, &profile, &sit);
                scope.spawn(move || {
                    part.iter()
                        .map(|r| judge(&r.command, w, profile, sit))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("decider thread"))
            .collect()
    });
    let mut out = Outcome {
        total: Counts::default(),
        interactive: Counts::default(),
        per_source: BTreeMap::new(),
        per_agent: BTreeMap::new(),
        refusals: Vec::new(),
        took: start.elapsed(),
        slowest: (Duration::ZERO, String::new()),
    };
    for (r, j) in rows.iter().zip(judged) {
        if j.took > out.slowest.0 {
            out.slowest = (j.took, r.command.clone());
        }
        out.total.add(j.decision);
        if INTERACTIVE.contains(&r.agent.as_str()) {
            out.interactive.add(j.decision);
        }
        out.per_source
            .entry((r.source.clone(), r.agent.clone()))
            .or_default()
            .add(j.decision);
        out.per_agent
            .entry(r.agent.clone())
            .or_default()
            .add(j.decision);
        if j.decision != Decision::Allow {
            out.refusals.push(Refusal {
                source: r.source.clone(),
                agent: r.agent.clone(),
                command: r.command.clone(),
                decision: j.decision,
                rule: j.rule,
                program: j.program,
                message: j.message,
            });
        }
    }
    out
}

fn pct(c: &Counts) -> String {
    format!("{:.1}%", 100.0 * c.rate())
}

fn summary(o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "agent corpus: {} commands in {:?} (slowest {:?}); allow {} ({}), ask {}, deny {}; interactive agents: {} of {} allowed ({})",
        o.total.total(),
        o.took,
        o.slowest.0,
        o.total.allow,
        pct(&o.total),
        o.total.ask,
        o.total.deny,
        o.interactive.allow,
        o.interactive.total(),
        pct(&o.interactive)
    );
    for (agent, c) in &o.per_agent {
        let _ = writeln!(
            s,
            "  {agent}: {} of {} allowed ({})",
            c.allow,
            c.total(),
            pct(c)
        );
    }
    for ((src, agent), c) in &o.per_source {
        let _ = writeln!(
            s,
            "  {src} [{agent}]: {} of {} allowed ({})",
            c.allow,
            c.total(),
            pct(c)
        );
    }
    s
}

#[test]
fn agent_corpus_decides_every_command() {
    let o = outcome();
    eprint!("{}", summary(o));
    // About 30 s of CPU in a debug build (25,000 commands); the bound is
    // wide because the machine may be shared, and is there to catch a
    // pathological slowdown, not to measure.
    let budget = if cfg!(debug_assertions) { 600 } else { 120 };
    assert!(
        o.took < Duration::from_secs(budget),
        "corpus took {:?}",
        o.took
    );
    assert!(
        // Typically under 0.4 s (a long heredoc script); 1.4 s seen on a
        // machine with a load of 16 on 2 cores.
        o.slowest.0 < Duration::from_secs(5),
        "one command took {:?}: {:?}",
        o.slowest.0,
        o.slowest.1
    );
    // Every source contributes, and interactive agents are represented.
    assert!(o.per_source.values().all(|c| c.total() > 0));
    assert!(
        o.interactive.total() >= 500,
        "{} interactive rows",
        o.interactive.total()
    );
}

#[test]
fn agent_corpus_meets_allow_targets() {
    let o = outcome();
    let s = summary(o);
    assert!(
        o.total.rate() >= FLOOR_OVERALL && o.interactive.rate() >= FLOOR_INTERACTIVE,
        "floors: {:.1}% overall (issue target {:.0}%), {:.0}% interactive; measured:\n{s}",
        100.0 * FLOOR_OVERALL,
        100.0 * TARGET_OVERALL,
        100.0 * FLOOR_INTERACTIVE
    );
}

/// (decision, rule, program) of a group of refusals.
type Cause = (String, String, String);

/// Refusals grouped by (decision, rule, program), largest first.
fn groups(o: &Outcome) -> Vec<(Cause, Vec<&Refusal>)> {
    let mut g: BTreeMap<Cause, Vec<&Refusal>> = BTreeMap::new();
    for r in &o.refusals {
        g.entry((
            r.decision.as_str().to_string(),
            r.rule.clone(),
            r.program.clone(),
        ))
        .or_default()
        .push(r);
    }
    let mut v: Vec<_> = g.into_iter().collect();
    v.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    v
}

fn one_line(s: &str, max: usize) -> String {
    let flat = s.replace('\n', "⏎").replace('|', "\\|").replace('`', "'");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

fn refusals_markdown(o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Agent-command corpus: refusals grouped by cause\n");
    let _ = writeln!(
        s,
        "Generated by `cargo test --release --test tests -- --ignored corpus::agents` (team corpus). The decision is `decide_full` as `check` runs it, confined (run mode), default profile, cwd an ordinary Python/Node project in a temp dir, temp HOME.\n"
    );
    s.push_str(&summary(o).replace("\n  ", "\n- "));
    let _ = writeln!(
        s,
        "\n| count | decision | rule | program | reason (first example) |\n|---:|---|---|---|---|"
    );
    let gs = groups(o);
    for ((d, rule, prog), v) in &gs {
        let _ = writeln!(
            s,
            "| {} | {d} | `{rule}` | `{}` | {} |",
            v.len(),
            one_line(prog, 40),
            one_line(&v[0].message, 160)
        );
    }
    let _ = writeln!(s, "\n## Examples (3 per cause)\n");
    for ((d, rule, prog), v) in &gs {
        let _ = writeln!(
            s,
            "### {d} `{rule}` `{}` ({})\n",
            one_line(prog, 40),
            v.len()
        );
        let _ = writeln!(s, "Reason: {}\n", one_line(&v[0].message, 400));
        for r in v.iter().take(3) {
            let _ = writeln!(
                s,
                "- [{} / {}] `{}`",
                r.agent,
                r.source,
                one_line(&r.command, 300)
            );
        }
        s.push('\n');
    }
    s
}

#[test]
#[ignore = "writes docs/corpus-report.md (and SAFE_EXEC_REFUSALS_OUT); run on demand"]
fn write_agent_commands_report() {
    let o = outcome();
    eprint!("{}", summary(o));
    if let Ok(path) = std::env::var("SAFE_EXEC_REFUSALS_OUT") {
        std::fs::write(&path, refusals_markdown(o)).expect("write refusals");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = String::new();
    let _ = writeln!(out, "{BEGIN}");
    let _ = writeln!(out, "## Agent commands (issue 10)\n");
    let _ = writeln!(
        out,
        "Every one of the {} distinct commands of `tests/data/agent-commands.tsv` (shell commands real agents ran, from public trajectories and session logs; sources in `tests/data/README.md`) decided as `safe-exec check` decides it in run mode (confined), with the built-in `default` profile, from an ordinary Python/Node project in a temp dir with a temp HOME. Generated by `cargo test --release --test tests -- --ignored corpus::agents`; {:.0} s for the whole corpus in that run.\n",
        o.total.total(),
        o.took.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| | commands | allow | ask | deny | allow rate | target |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let _ = writeln!(
        out,
        "| all | {} | {} | {} | {} | {} | {:.0}% |",
        o.total.total(),
        o.total.allow,
        o.total.ask,
        o.total.deny,
        pct(&o.total),
        100.0 * TARGET_OVERALL
    );
    let _ = writeln!(
        out,
        "| interactive agents ({}) | {} | {} | {} | {} | {} | {:.0}% |",
        INTERACTIVE.join(", "),
        o.interactive.total(),
        o.interactive.allow,
        o.interactive.ask,
        o.interactive.deny,
        pct(&o.interactive),
        100.0 * TARGET_INTERACTIVE
    );
    let _ = writeln!(
        out,
        "\n### Per agent kind\n\n| agent | commands | allow | ask | deny | allow rate |\n|---|---:|---:|---:|---:|---:|"
    );
    for (a, c) in &o.per_agent {
        let _ = writeln!(
            out,
            "| {a} | {} | {} | {} | {} | {} |",
            c.total(),
            c.allow,
            c.ask,
            c.deny,
            pct(c)
        );
    }
    let _ = writeln!(
        out,
        "\n### Per source\n\n| source | agent | commands | allow | ask | deny | allow rate |\n|---|---|---:|---:|---:|---:|---:|"
    );
    for ((src, a), c) in &o.per_source {
        let _ = writeln!(
            out,
            "| {src} | {a} | {} | {} | {} | {} | {} |",
            c.total(),
            c.allow,
            c.ask,
            c.deny,
            pct(c)
        );
    }
    let _ = writeln!(out, "\n### Remaining refusals by cause\n");
    let _ = writeln!(
        out,
        "Grouped by the first refusing reason's rule and the program it names; the explanation of each class is in `CLASSES` in `tests/corpus_agents.rs`.\n"
    );
    let _ = writeln!(
        out,
        "| rule | refusals | ask | deny | explanation | example |\n|---|---:|---:|---:|---|---|"
    );
    let mut by_rule: BTreeMap<&str, Vec<&Refusal>> = BTreeMap::new();
    for r in &o.refusals {
        by_rule.entry(r.rule.as_str()).or_default().push(r);
    }
    let mut rules: Vec<_> = by_rule.into_iter().collect();
    rules.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    for (rule, v) in &rules {
        let ask = v.iter().filter(|r| r.decision == Decision::Ask).count();
        let _ = writeln!(
            out,
            "| `{rule}` | {} | {ask} | {} | {} | `{}` |",
            v.len(),
            v.len() - ask,
            explain_class(rule),
            one_line(&v[0].command, 100)
        );
    }
    let _ = writeln!(
        out,
        "\n### Largest refusal groups (rule, program)\n\n| refusals | decision | rule | program | example |\n|---:|---|---|---|---|"
    );
    for ((d, rule, prog), v) in groups(o).iter().take(40) {
        let _ = writeln!(
            out,
            "| {} | {d} | `{rule}` | `{}` | `{}` |",
            v.len(),
            one_line(prog, 30),
            one_line(&v[0].command, 100)
        );
    }
    let _ = writeln!(out, "{END}");
    let path = root.join(REPORT);
    let existing = std::fs::read_to_string(&path).unwrap_or_else(|_| "# Corpus report\n\n".into());
    let updated = match (existing.find(BEGIN), existing.find(END)) {
        (Some(a), Some(b)) if b > a => format!(
            "{}{}{}",
            &existing[..a],
            out.trim_end(),
            &existing[b + END.len()..]
        ),
        _ => format!("{}\n\n{}", existing.trim_end(), out),
    };
    std::fs::write(&path, updated).expect("write report");
}

/// What each class of remaining refusal is, whether it is right, and what
/// would change it. Keyed by the rule id of the first refusing reason; a
/// rule that shows up without an entry is reported "(not yet explained)".
const CLASSES: &[(&str, &str)] = &[
    (
        "exec-package-runner",
        "`pnpm dlx`, `npm exec`, `bunx` download a package and run it (issue 13's class, a safety rule): refused. Confined it would at best ask \"needs network\" (dlx always fetches), so it stays a refusal either way",
    ),
    (
        "registry.experimental",
        "`npx`/`npm exec` (and `bunx`) may download and run any package: asks by design while npx has no confined form; most rows run a tool already in `node_modules` (`npx tsc`, `npx playwright test`), a false refusal where the package is installed locally",
    ),
    (
        "registry.unknown_command",
        "program not in the registry: unknown programs ask when unconfined; confined they run in the sandbox (issue 10). The largest are dev tools (uv, bun, lsof, sphinx-build, pylint, jest) and project CLIs (`minsky`); sysadmin tools of the Gemini CLI source (pacman, flatpak, dconf) stay refused",
    ),
    (
        "form.whole_string",
        "seed 002: a network command (curl to another host, ping, dig, unzip/tar) in a string with operators, pipes or redirections is denied whatever it does (the contract's Clarifications): right. Loopback requests (`curl -s localhost:PORT/... | jq`, `curl -I http://localhost:3000 | head`) are no longer here: the supervisor holds them to loopback and they run confined",
    ),
    (
        "form.curl_flags",
        "seed 002's curl form accepts only `curl -I URL`; the remaining rows are GET/POST requests to external APIs or LAN hosts (`192.168.x.y`), not loopback: right by seed 002 (loopback requests run confined)",
    ),
    ("form.roots", "a network form with a path outside the roots"),
    (
        "parse.unknown",
        "the decision cannot see what runs: a script written and run in the same string (`cat > t.py <<EOF ... EOF && python t.py`), `source` of a file, an unparseable string (truncated heredocs in the logs), `cd $(cmd)` (a directory not known before the run); `cd -` after a `cd` of the same string and `cd DIR || true && X` are now tracked; confined a script written in the string still asks where its content is not checked, unconfined they ask by design",
    ),
    (
        "registry.untrusted_path",
        "a project-local executable (`./tests/runtests.py`, `bin/test`, `.venv/bin/python`, `node_modules/.bin/jest`) is not the registry's program of that name; confined it runs in the sandbox, unconfined it asks by design",
    ),
    (
        "policy.dangerous_disabled",
        "dangerous-risk programs are off in the default profile: `docker`/`docker compose` (docker.sock is root on the host: right to refuse, but the read-only subcommands should ask with a reason, issue 10), `gh` (network), `pnpm -g`",
    ),
    (
        "registry.blocked",
        "blocked network tools (`ssh`, `scp`, `nc`, `wget`): right, seed 002 (a `nc -z localhost PORT` port probe is the only harmless use seen)",
    ),
    (
        "shape.substitution",
        "`$(...)` in argument position was denied outright; issue 10: confined it runs, unconfined an allowed read-only inner command is seen through (Claude Code's `git commit -m \"$(cat <<'EOF' ... EOF)\"`)",
    ),
    (
        "roots.not_writable",
        "a visible write outside the writable roots (another project, `~/.local/state/...`, `/opt`): right (a clear refusal beats a silent EACCES); rows writing into the agent's own session or worktree directories of another tool are the remainder",
    ),
    (
        "policy.privilege_escalation",
        "`sudo`: right, never runs under safe-exec (almost all from the Gemini CLI sysadmin source)",
    ),
    (
        "policy.dangerous_assignment",
        "`PYTHONPATH=.`, `NODE_OPTIONS=...` in front of a command: code-loading variables; issue 10: pointing inside the roots is fine confined (false refusals until then)",
    ),
    (
        "policy.template_options",
        "`xargs`/`find -exec` hands run-time input to a program whose options could write or run programs: asks by design unconfined",
    ),
    (
        "policy.template_write",
        "`xargs rm` and the like change files named at run time: asks by design",
    ),
    (
        "registry.unknown_option",
        "an option the registry entry does not list (`npm list --depth=0`, `git show-ref --verify`, `git ls-tree --name-only`): registry gaps, false refusals",
    ),
    (
        "registry.malformed",
        "arguments that do not fit the entry (`docker logs NAME --tail N`, `xargs -n1 basename`): parser or registry gaps, false refusals",
    ),
    (
        "roots.secret",
        "reads of secret paths (`~/.ssh`, `~/.claude`, `~/.codex`, `/proc/PID/environ`, the project's `.env`): right (listing `~/.codex/superpowers/skills` is refused with the whole of `~/.codex`)",
    ),
    (
        "roots.protected",
        "changes to protected files inside the roots (`.git/hooks`, `.claude/`, `.vscode/`, `.envrc`, ...): right, they run later outside any sandbox",
    ),
    (
        "roots.broad_target",
        "recursive delete or change of a broad target: right",
    ),
    (
        "roots.not_readable",
        "a read outside what the profile lets the command read: right",
    ),
    (
        "registry.sed_exec",
        "a sed script read as using the `e` command (runs shell commands): right when it does; a false refusal when an escaped `\\/` is misread",
    ),
    (
        "registry.git_config_exec",
        "`git -c` or `git config` with a key that names a program: right when it sets one; a false refusal for a read (`git config --get core.hooksPath`)",
    ),
    (
        "registry.npm_config_write",
        "`npm config set` writes npm's configuration outside the project: right",
    ),
    (
        "registry.ask_option",
        "an option marked ask in the registry (runs programs, writes outside): by design",
    ),
    (
        "registry.blocked_option",
        "an option that is refused in the registry: right",
    ),
    (
        "registry.exec_value",
        "an option value that names a program to run: right",
    ),
    (
        "network.needed",
        "needs network the sandbox withholds (`pip install`, `npm install`, `git push/pull`, `curl https://...`): asks with the reason \"needs network\" (issue 10), right",
    ),
    (
        "network.loopback",
        "loopback connection (the project's own dev server) where the kernel layer does not yet enforce the address: asks until the supervisor enforces loopback-only connect",
    ),
    (
        "policy.signal_others",
        "signals to processes the command did not start (`pkill -f PATTERN`, `kill -9 -1`, `killall node`): right by issue 10; agents use `pkill -f uvicorn` to restart their own dev server, which the decision cannot tell apart",
    ),
    (
        "policy.unconfined_substitution",
        "unconfined: a substitution whose inner command is not itself allowed",
    ),
    (
        "policy.unconfined_expansion",
        "unconfined: an expansion the policy cannot resolve",
    ),
    (
        "policy.unconfined_code",
        "unconfined: interpreter code or a script the policy cannot see through",
    ),
    (
        "policy.unconfined_named",
        "unconfined: a compiler, response file, `--files0-from` list or `man -l` page names what is read",
    ),
    (
        "policy.code_path",
        "interpreter code names a path the policy refuses",
    ),
    (
        "policy.glob_option_injection",
        "a glob that could expand to an option: by design",
    ),
    (
        "shape.process_substitution",
        "`<(...)`/`>(...)`: refused by the shell shape checks",
    ),
    (
        "git-reset-hard",
        "`git reset --hard` destroys uncommitted work inside the roots, which the sandbox cannot prevent: right (issue 10)",
    ),
    (
        "docker.daemon",
        "docker talks to the Docker daemon, which acts as root on the host: docker never runs confined and each docker command asks, read-only ones (`docker ps`, `docker compose logs`) with a reason that says so (issue 10): by design",
    ),
    (
        "history.destroy",
        "destroys the project's history or uncommitted work inside the roots (`git reset --hard`, `git clean -fdx`, `git checkout -- .`), which the sandbox cannot prevent: right (issue 10)",
    ),
    ("git-force-push", "force push: right"),
    ("sys-shutdown", "shutdown/reboot: right"),
    (
        "sys-history-tamper",
        "the rule also matches reading the history (`tail -n 50 ~/.bash_history`): a false positive of the rule; clearing it is refused rightly",
    ),
    (
        "priv-sudo",
        "sudo/pkexec: right; `pkexec --version` is a harmless false positive",
    ),
];

fn explain_class(rule: &str) -> String {
    CLASSES
        .iter()
        .find(|(r, _)| *r == rule)
        .map(|(_, e)| e.to_string())
        .unwrap_or_else(|| "(not yet explained)".into())
}

/// The data file itself: enough distinct commands, every row well formed,
/// no duplicates, every source documented, no credential left in clear,
/// every agent kind known.
#[test]
fn agent_corpus_data_is_well_formed() {
    let rows = load_rows();
    assert!(rows.len() >= 5000, "only {} rows", rows.len());
    let mut seen = std::collections::HashSet::new();
    for r in &rows {
        assert!(
            seen.insert(r.command.as_str()),
            "duplicate command: {:?}",
            r.command
        );
        assert!(
            !r.command.trim().is_empty(),
            "empty command from {}",
            r.source
        );
        assert!(
            r.command.len() <= 2500,
            "over-long command from {}",
            r.source
        );
    }
    let kinds = [
        "claude-code",
        "cursor",
        "codex",
        "gemini-cli",
        "mini-swe-agent",
        "swe-agent",
        "aider",
        "openhands",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("tests/data/README.md")).expect("README");
    for r in &rows {
        assert!(
            kinds.contains(&r.agent.as_str()),
            "unknown agent kind {}",
            r.agent
        );
        assert!(
            readme.contains(&format!("[{}](https://github.com/{})", r.source, r.source)),
            "source {} is not documented in tests/data/README.md",
            r.source
        );
    }
    // Shapes of real credentials (the extraction replaces them by REDACTED).
    let secret_shapes = [
        "AIza",
        "ghp_",
        "gho_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "AKIA",
        "sk-proj-",
        "sk-ant-",
        "sb_secret_",
        "sb_publishable_",
        "-----BEGIN",
    ];
    for r in &rows {
        for shape in secret_shapes {
            if let Some(i) = r.command.find(shape) {
                let tail: String = r.command[i + shape.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                    .collect();
                assert!(
                    tail.len() < 16,
                    "a credential-shaped string ({shape}...) in a command from {}",
                    r.source
                );
            }
        }
    }
    // The project marker is only ever the whole marker.
    for r in &rows {
        let stray = r.command.replace(PROJECT_MARKER, "");
        assert!(
            !stray.contains("{{project") && !stray.contains("project}}"),
            "broken project marker in {:?}",
            r.command
        );
    }
}
