//! Every row of the tldr corpus (`/work/shared/corpus/tldr-common-linux.tsv`,
//! columns platform, page, description, command; override the path with
//! `SAFE_EXEC_CORPUS`) goes through the library's deciding layers under the
//! default profile: no panic, bounded total time, and the counts per
//! decision are printed (`cargo test --test tests -- --ignored corpus::replay --nocapture`).
//!
//! Every row is parsed and decided (about 15 s in a debug build on two
//! cores); `SAFE_EXEC_CORPUS_SAMPLE=N` decides a deterministic 1/N sample.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use safe_exec::decide::{CommandInput, decide, example_situation, parse_input};
use safe_exec::policy::Decision;

const DEFAULT_CORPUS: &str = "/work/shared/corpus/tldr-common-linux.tsv";

/// Deterministic 64-bit hash (FNV-1a) for sampling.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Replaces tldr `{{placeholder}}` markers by their content.
fn instantiate(cmd: &str) -> String {
    cmd.replace("{{", "").replace("}}", "")
}

/// The corpus text. The corpus lives outside the repository, so the tests
/// that read it are `#[ignore]`d (skipped, and counted as such, by a plain
/// `cargo test`); run them with `--ignored`, where a missing file fails.
fn corpus_text() -> (String, String) {
    let path = std::env::var("SAFE_EXEC_CORPUS").unwrap_or_else(|_| DEFAULT_CORPUS.to_string());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("corpus {path} not readable ({e}); set SAFE_EXEC_CORPUS"));
    (path, text)
}

#[test]
#[ignore = "needs the tldr corpus outside the repository (SAFE_EXEC_CORPUS); run with --ignored"]
fn tldr_corpus_decides_without_panic_in_bounded_time() {
    let (path, text) = corpus_text();
    let rows: Vec<(&str, String)> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("platform\tpage\t"))
        .filter_map(|l| {
            let mut f = l.splitn(4, '\t');
            let (_platform, page, _desc, cmd) = (f.next()?, f.next()?, f.next()?, f.next()?);
            Some((page, instantiate(cmd)))
        })
        .collect();
    assert!(
        rows.len() > 1000,
        "corpus {path} has only {} rows",
        rows.len()
    );

    let profile = safe_exec::profile::load("default").expect("default profile");
    let sit = example_situation();
    let debug = cfg!(debug_assertions);
    // All rows are decided; with SAFE_EXEC_CORPUS_SAMPLE=N only every Nth
    // (by hash, deterministic) is decided and the rest are only parsed.
    let every: u64 = std::env::var("SAFE_EXEC_CORPUS_SAMPLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    let sampled = |cmd: &str| fnv(cmd).is_multiple_of(every);

    let start = Instant::now();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut panics = Vec::new();
    let mut slowest = (Duration::ZERO, String::new());
    let mut parsed = 0usize;
    for (page, cmd) in &rows {
        let input = CommandInput::String {
            text: cmd.clone(),
            positional: vec!["sh".into()],
        };
        let t = Instant::now();
        let r = catch_unwind(AssertUnwindSafe(|| {
            if sampled(cmd) {
                Some(decide(&input, &profile, &sit).verdict.decision)
            } else {
                let _ = parse_input(&input, &profile, &sit);
                None
            }
        }));
        let took = t.elapsed();
        if took > slowest.0 {
            slowest = (took, cmd.clone());
        }
        parsed += 1;
        match r {
            Ok(Some(d)) => {
                let k = match d {
                    Decision::Allow => "allow",
                    Decision::Ask => "ask",
                    Decision::Deny => "deny",
                };
                *counts.entry(k).or_default() += 1;
            }
            Ok(None) => *counts.entry("parsed only").or_default() += 1,
            Err(_) => panics.push(format!("{page}: {cmd}")),
        }
    }
    let total = start.elapsed();
    eprintln!(
        "corpus: {} rows ({} parsed) in {total:?}; decisions {counts:?}; slowest {:?}: {:?}",
        rows.len(),
        parsed,
        slowest.0,
        slowest.1
    );
    assert!(
        panics.is_empty(),
        "{} rows panicked:\n{}",
        panics.len(),
        panics.join("\n")
    );
    assert_eq!(parsed, rows.len());
    assert!(
        total < Duration::from_secs(if debug { 90 } else { 30 }),
        "corpus took {total:?}"
    );
    assert!(
        slowest.0 < Duration::from_secs(2),
        "one row took {:?}: {:?}",
        slowest.0,
        slowest.1
    );
    let decided: usize = counts
        .iter()
        .filter(|(k, _)| **k != "parsed only")
        .map(|(_, v)| v)
        .sum();
    assert!(decided * 5 >= rows.len(), "too few rows decided: {decided}");
}

/// Rows of the corpus that a known-dangerous page must never allow.
#[test]
#[ignore = "needs the tldr corpus outside the repository (SAFE_EXEC_CORPUS); run with --ignored"]
fn tldr_dangerous_pages_never_allowed() {
    let (_path, text) = corpus_text();
    let profile = safe_exec::profile::load("default").expect("default profile");
    let sit = example_situation();
    let dangerous = [
        "mkfs", "wipefs", "shutdown", "reboot", "nc", "ncat", "socat", "nmap", "ssh", "scp",
        "telnet", "wget", "sftp", "rsync",
    ];
    // rsync is accepted for local copies; its remote forms never are.
    let local_rsync = |cmd: &str| {
        !cmd.contains(':')
            && !cmd.contains(" -e")
            && !cmd.contains("--rsh")
            && !cmd.contains("--rsync-path")
    };
    let mut allowed = Vec::new();
    for line in text.lines() {
        let mut f = line.splitn(4, '\t');
        let (Some(_), Some(page), Some(_), Some(cmd)) = (f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        // Only rows that invoke the page's program (some pages list the
        // interactive commands of the tool, e.g. `ls` inside sftp).
        if !dangerous.contains(&page) || !cmd.starts_with(&format!("{page} ")) {
            continue;
        }
        if page == "rsync" && local_rsync(cmd) {
            continue;
        }
        let cmd = instantiate(cmd);
        let d = decide(
            &CommandInput::String {
                text: cmd.clone(),
                positional: vec!["sh".into()],
            },
            &profile,
            &sit,
        );
        if d.verdict.decision == Decision::Allow {
            allowed.push(format!("{page}: {cmd}"));
        }
    }
    assert!(
        allowed.is_empty(),
        "dangerous pages allowed:\n{}",
        allowed.join("\n")
    );
}
