//! Where safe-exec's start-up time goes, phase by phase, measured in process
//! through the library (nothing is executed). Used for docs/performance.md:
//! `cargo run --release --example phase_timing`. Run it in the directory
//! and with the HOME/TMPDIR you want to model.

// A measuring tool: a panic is the report.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Instant;

use safe_exec::decide::{CommandInput, Situation, decide};
use safe_exec::profile::{Placeholders, SelectionInputs, select};

/// Prints the first (cold: what one CLI invocation pays) and the mean warm
/// time of `f`.
fn time<T>(name: &str, n: u32, mut f: impl FnMut() -> T) {
    let t = Instant::now();
    std::hint::black_box(f());
    let cold = t.elapsed();
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(f());
    }
    println!(
        "{name:<42} first {:>8.1} µs   warm {:>8.1} µs",
        cold.as_secs_f64() * 1e6,
        t.elapsed().as_secs_f64() * 1e6 / f64::from(n)
    );
}

fn main() {
    let n = 200;
    let t0 = Instant::now();
    let cwd = std::env::current_dir().expect("cwd");
    let home = std::path::PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/".into()));
    let tmp = std::path::PathBuf::from(std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into()));
    let sit = Situation {
        places: Placeholders {
            cwd: cwd.clone(),
            home: home.clone(),
            tmp,
            git_root: None,
            state: home.join(".local/state/safe-exec"),
            walked: None,
        },
        tmpdir_env: std::env::var("TMPDIR").ok(),
        interactive: false,
        confined: true,
    };
    time("profile::select (built-in default)", n, || {
        select(&SelectionInputs::from_env(None, cwd.clone())).map(|s| s.profile.doc.name.len())
    });
    time("profile::load(\"default\")", n, || {
        safe_exec::profile::load("default").map(|p| p.doc.name.len())
    });
    // What every start pays for the profile's paths, on a fresh profile
    // (nothing resolved yet): the decision's roots and trusted steps, then
    // the sandbox spec a run or `check --json` asks for. Load included
    // (subtract the line above).
    time("load + decide(-- /bin/true) + sandbox_spec", n, || {
        let p = safe_exec::profile::load("default").expect("default");
        let d = decide(&CommandInput::List(vec!["/bin/true".into()]), &p, &sit);
        (
            d.verdict.decision,
            p.sandbox_spec(&sit.places, None).read.len(),
        )
    });
    let profile = safe_exec::profile::load("default").expect("default");
    let list = CommandInput::List(vec!["/bin/true".into()]);
    time("decide(-- /bin/true)", n, || {
        decide(&list, &profile, &sit).verdict.decision
    });
    let s = CommandInput::String {
        text: "git status && cargo test".into(),
        positional: vec!["sh".into()],
    };
    time("decide(-c 'git status && cargo test')", n, || {
        decide(&s, &profile, &sit).verdict.decision
    });
    time("env::scrub", n, || {
        safe_exec::sandbox::env::scrub(std::env::vars_os(), &profile.doc.env)
            .kept
            .len()
    });
    let spec = profile.sandbox_spec(&sit.places, None);
    time("landlock::plan (carving)", n, || {
        safe_exec::sandbox::landlock::plan(&spec)
            .map(|p| p.rules.len())
            .ok()
    });
    time("sandbox::prepare (plan+ruleset+seccomp)", n, || {
        safe_exec::sandbox::prepare(&spec).is_ok()
    });
    let roots: Vec<std::path::PathBuf> = spec
        .write
        .iter()
        .map(|r| safe_exec::sys::path::canonicalize(r).unwrap_or_else(|_| r.clone()))
        .collect();
    let protected = &profile.doc.paths.protected;
    time("protect::Snapshot::take", n, || {
        safe_exec::supervisor::protect::Snapshot::take(&roots, protected)
            .refused
            .len()
    });
    let snap = safe_exec::supervisor::protect::Snapshot::take(&roots, protected);
    time("protect::Snapshot::restore (nothing changed)", n, || {
        snap.restore(&roots, protected).len()
    });
    // The submodule part of the snapshot (before and after the run), per
    // root: a failed lstat of `.gitmodules` and a stat of the index where
    // there is none.
    let git = |r: &std::path::PathBuf| safe_exec::supervisor::protect::gitlinks::Before::take(r);
    time("protect::gitlinks::Before::take (all roots)", n, || {
        roots.iter().map(|r| git(r).protect.len()).sum::<usize>()
    });
    let befores: Vec<_> = roots.iter().map(git).collect();
    time("protect::gitlinks::Before::after (unchanged)", n, || {
        roots
            .iter()
            .zip(&befores)
            .map(|(r, b)| b.after(r).len())
            .sum::<usize>()
    });
    time(
        "sandbox::kernel::landlock_abi",
        n,
        safe_exec::sandbox::kernel::landlock_abi,
    );
    println!("total in main (incl. warm loops): {:?}", t0.elapsed());
}
