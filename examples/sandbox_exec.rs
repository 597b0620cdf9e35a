//! Drives the sandbox library end to end without the CLI: the integration
//! tests (and anyone debugging a profile) run commands through it.
//!
//! ```text
//! sandbox_exec --spec SPEC.json [--supervise] [--no-supervisor] [--repeat N] [--cwd DIR] [--report FILE] -- PROGRAM [ARG...]
//! sandbox_exec --doctor
//! sandbox_exec --spec SPEC.json --describe
//! ```
//!
//! SPEC.json: `{"sandbox": <SandboxSpec>, "env": <EnvPolicy, optional>}`;
//! `sandbox.timeout` is `{"secs": N, "nanos": 0}` or null. The environment is
//! this process's, scrubbed with the policy. Exit codes follow the contract.
//! `--no-supervisor` runs without the seccomp-notification supervisor (to
//! measure its cost, docs/performance.md; the CLI has no such switch).
//! `--repeat N` runs the command N times in this process as a library
//! caller that goes on after each run would (`ends_process: false`); the
//! report then also gives `threads`, this process's threads after the
//! last run.

// A test driver: a panic is the report.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use safe_exec::run::{ExecPlan, execute};
use safe_exec::sandbox::env::{EnvPolicy, scrub};
use safe_exec::sandbox::{SandboxSpec, describe, probe_kernel};
use serde::Deserialize;

#[derive(Deserialize)]
struct SpecFile {
    sandbox: SandboxSpec,
    #[serde(default)]
    env: EnvPolicy,
}

fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("safe-exec: error: {msg}");
    ExitCode::from(code)
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let mut spec_path = None;
    let mut supervise = false;
    let mut cwd = None;
    let mut report = None;
    let mut describe_only = false;
    let mut no_supervisor = false;
    let mut repeat: Option<u32> = None;
    let mut argv: Vec<OsString> = Vec::new();
    while let Some(a) = args.next() {
        match a.to_str() {
            Some("--spec") => spec_path = args.next().map(PathBuf::from),
            Some("--supervise") => supervise = true,
            Some("--no-supervisor") => no_supervisor = true,
            Some("--repeat") => repeat = args.next().and_then(|n| n.to_str()?.parse().ok()),
            Some("--cwd") => cwd = args.next().map(PathBuf::from),
            Some("--report") => report = args.next().map(PathBuf::from),
            Some("--describe") => describe_only = true,
            Some("--doctor") => {
                let k = probe_kernel();
                println!("{}", serde_json::to_string_pretty(&k).unwrap_or_default());
                return ExitCode::SUCCESS;
            }
            Some("--") => {
                argv.extend(args.by_ref());
            }
            _ => return fail(125, format!("unexpected argument {}", a.to_string_lossy())),
        }
    }
    let Some(spec_path) = spec_path else {
        return fail(125, "--spec FILE is required");
    };
    let text = match std::fs::read_to_string(&spec_path) {
        Ok(t) => t,
        Err(e) => return fail(125, format!("{}: {e}", spec_path.display())),
    };
    let spec: SpecFile = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(e) => return fail(125, format!("{}: {e}", spec_path.display())),
    };
    if describe_only {
        println!(
            "{}",
            serde_json::to_string_pretty(&describe(&spec.sandbox)).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    let cwd = match cwd.map_or_else(std::env::current_dir, Ok) {
        Ok(c) => c,
        Err(e) => return fail(125, format!("current directory: {e}")),
    };
    let env = scrub(std::env::vars_os(), &spec.env).kept;
    // The supervisor with metadata checks and (network "loopback") address
    // checks; no protected files and no exec-time rules in this driver.
    let supervisor = safe_exec::supervisor::SupervisorSpec {
        write_roots: spec.sandbox.write.clone(),
        loopback: spec.sandbox.network == safe_exec::sandbox::NetworkAccess::Loopback,
        ..Default::default()
    };
    let plan = ExecPlan {
        argv,
        env,
        cwd,
        sandbox: spec.sandbox,
        supervise,
        supervisor: (!no_supervisor).then_some(supervisor),
        ends_process: repeat.is_none(),
    };
    let mut result = execute(plan.clone());
    for _ in 1..repeat.unwrap_or(1) {
        if result.as_ref().is_ok_and(|o| o.exit_code == 0) {
            result = execute(plan.clone());
        }
    }
    let threads = std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count);
    match result {
        Ok(outcome) => {
            if let Some(path) = report {
                let v = serde_json::json!({
                    "exit_code": outcome.exit_code,
                    "signal": outcome.signal,
                    "timed_out": outcome.timed_out,
                    "enforcement": outcome.enforcement,
                    "threads": threads,
                });
                if let Err(e) = std::fs::write(&path, v.to_string()) {
                    return fail(125, format!("{}: {e}", path.display()));
                }
            }
            ExitCode::from(u8::try_from(outcome.exit_code).unwrap_or(125))
        }
        Err(e) => {
            let code = e.exit_code();
            fail(u8::try_from(code).unwrap_or(125), e)
        }
    }
}
