//! Generator of the "Classifier" section of `docs/corpus-report.md`: runs
//! the built-in safety rules (default profile, the same views `check` uses)
//! over every row of the tldr corpus and writes the severity counts and the
//! full list of critical rows with the judgement of whether each one is
//! really destructive.
//!
//! Slow (29,496 rows), so ignored by default. Regenerate with
//! `cargo test --release --test tests -- --ignored corpus::report`
//! (set `SAFE_EXEC_CORPUS` to read another copy of the corpus).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use safe_exec::cli::classify_string;
use safe_exec::decide::example_situation;
use safe_exec::policy::rules::Severity;

/// Critical rows judged NOT destructive (false positives), by exact command,
/// with the reason. Every other critical row was read and judged destructive
/// or a real privilege/remote-code risk.
const FALSE_POSITIVES: &[(&str, &str)] = &[
    (
        "echo \"echo 'bash is executed'\" | bash",
        "pipe-decode-to-shell: the piped script is a visible literal `echo`; nothing is decoded or downloaded",
    ),
    (
        "echo \"echo 'dash is executed'\" | dash",
        "pipe-decode-to-shell: visible literal script",
    ),
    (
        "echo echo Hello world | zsh",
        "pipe-decode-to-shell: visible literal script",
    ),
    (
        "kill -1 process_id",
        "sys-kill-all: `kill -1 PID` sends SIGHUP to one process; only `kill -SIG -1` targets every process",
    ),
    (
        "sgdisk -L",
        "disk-wipefs: lists partition type codes, touches no disk",
    ),
    ("parted -h", "disk-wipefs: prints help"),
    ("sfdisk -h", "disk-wipefs: prints help"),
    (
        "mkfs.erofs image.erofs root/",
        "disk-mkfs: builds an image in a regular file from a directory; no device is written",
    ),
    (
        "mkfs.erofs -U uuid image.erofs root/",
        "disk-mkfs: image file, no device",
    ),
    (
        "mkfs.erofs -zlz4hc image.erofs root/",
        "disk-mkfs: image file, no device",
    ),
    (
        "mkfs.erofs --all-root image.erofs root/",
        "disk-mkfs: image file, no device",
    ),
    ("shutdown -c", "sys-shutdown: cancels a pending shutdown"),
    (
        "systemctl halt --when cancel",
        "sys-shutdown: cancels a scheduled halt",
    ),
    (
        "halt -w",
        "sys-shutdown: `-w` only writes the wtmp record, the machine keeps running",
    ),
    (
        "poweroff -w",
        "sys-shutdown: `-w` only writes the wtmp record",
    ),
    (
        "reboot -w",
        "sys-shutdown: `-w` only writes the wtmp record",
    ),
    ("su -h", "priv-su: prints help, raises nothing"),
    ("su -V", "priv-su: prints the version"),
    (
        "linode-cli linodes boot|reboot|shutdown linode_id",
        "sys-shutdown: `shutdown` is an argument of another program (a remote VM action), not the local shutdown command",
    ),
    (
        "pct start|stop|reboot 100",
        "sys-shutdown: `reboot` is an argument of Proxmox's `pct` (a container), not the local reboot",
    ),
];

/// What a critical match of each rule means, for rows not in
/// `FALSE_POSITIVES` (each was read; see the module docs).
fn judgement_of(rules: &str) -> &'static str {
    let first = |id: &str| rules.split(", ").any(|r| r == id);
    if first("disk-mkfs") || first("disk-wipefs") {
        "destructive: formats or repartitions a disk (or needs root for it)"
    } else if first("git-reset-hard") || first("git-clean-force") || first("git-filter-branch") {
        "destructive: discards uncommitted work, untracked files or rewrites history"
    } else if first("crontab-remove") || first("sys-crontab-remove") {
        "destructive: deletes the user's crontab"
    } else if first("sys-shutdown") {
        "disruptive: stops, reboots or suspends the machine"
    } else if first("pipe-remote-to-shell") {
        "remote code execution: runs a downloaded script"
    } else if first("fs-truncate-redirect-system") {
        "persistence or system change: writes a shell start-up file, known_hosts or /etc"
    } else if first("sys-history-tamper") {
        "tampering: clears or rewrites the shell history"
    } else if first("net-dev-tcp") {
        "network: opens a raw TCP connection from the shell"
    } else if first("priv-sudo") || first("priv-su") {
        "privilege escalation (seed 004 category); the command under it ranges from harmless to destructive"
    } else {
        "critical"
    }
}

fn corpus() -> PathBuf {
    std::env::var_os("SAFE_EXEC_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/tldr-common-linux.tsv")
        })
}

#[test]
#[ignore = "slow generator; see the module docs"]
fn write_classifier_report() {
    let path = corpus();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("corpus not readable at {}: {e}", path.display()));
    let profile = safe_exec::profile::load("default").expect("default profile");
    let sit = example_situation();
    let (mut safe, mut warning, mut critical) = (0usize, 0usize, 0usize);
    let mut crit_rows = Vec::new();
    let mut warn_rules: std::collections::BTreeMap<String, usize> = Default::default();
    let mut crit_rules: std::collections::BTreeMap<String, usize> = Default::default();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        let [_, page, _desc, command] = cols[..] else {
            continue;
        };
        let c = classify_string(&profile, command, &sit);
        match c.severity {
            Severity::Critical => {
                critical += 1;
                for r in &c.matched_rules {
                    *crit_rules.entry(r.clone()).or_default() += 1;
                }
                crit_rows.push((
                    page.to_string(),
                    command.to_string(),
                    c.matched_rules.join(", "),
                ));
            }
            Severity::Warning => {
                warning += 1;
                for r in &c.matched_rules {
                    *warn_rules.entry(r.clone()).or_default() += 1;
                }
            }
            Severity::Safe => safe += 1,
        }
    }
    let total = safe + warning + critical;
    let mut out = String::new();
    writeln!(out, "## Classifier\n").ok();
    writeln!(
        out,
        "Generated by `cargo test --release --test tests -- --ignored corpus::report` from\n`../shared/corpus/tldr-common-linux.tsv` with the built-in rules of the default\nprofile (the views `check` uses). Do not edit by hand; the judgements of\ncritical rows live in `FALSE_POSITIVES` in `tests/corpus_report.rs`.\n"
    )
    .ok();
    writeln!(out, "| severity | rows | share |\n|---|---:|---:|").ok();
    for (name, n) in [("critical", critical), ("warning", warning), ("safe", safe)] {
        writeln!(
            out,
            "| {name} | {n} | {:.2}% |",
            100.0 * n as f64 / total.max(1) as f64
        )
        .ok();
    }
    writeln!(out, "| total | {total} | |\n").ok();
    let fp = crit_rows
        .iter()
        .filter(|(_, c, _)| FALSE_POSITIVES.iter().any(|(f, _)| f == c))
        .count();
    writeln!(
        out,
        "Judged a real risk (destructive, disruptive, privilege escalation, persistence\nor remote code): {} of {critical}; false positives: {fp}, marked in the table\nwith the reason. The {} critical rows matched by a rule other than `priv-sudo`\nalone were read one by one; the other rows match only `priv-sudo`, privilege\nescalation by seed 004's definition whatever runs under it (`sudo apt update`\nis critical by design).\n\nRule precision: after the first report, `disk-wipefs` was narrowed to\ndevice-writing forms (no `fdisk -l`, `parted -l`, `sgdisk -L`), `disk-mkfs`\nto `/dev/` targets, `sys-shutdown` excludes `shutdown -c` and `-w`,\n`sys-kill-all` only matches `-1` as the last argument, and\n`pipe-decode-to-shell` no longer includes `echo`/`printf`.\n",
        critical - fp,
        crit_rows.iter().filter(|(_, _, r)| r != "priv-sudo").count()
    )
    .ok();
    writeln!(
        out,
        "Rules matched in critical rows: {}\n",
        fmt_counts(&crit_rules)
    )
    .ok();
    writeln!(
        out,
        "Rules matched in warning rows: {}\n",
        fmt_counts(&warn_rules)
    )
    .ok();
    writeln!(
        out,
        "### Every critical row\n\n| page | command | rules | judgement |\n|---|---|---|---|"
    )
    .ok();
    for (page, command, rules) in &crit_rows {
        let judgement = FALSE_POSITIVES
            .iter()
            .find(|(f, _)| f == command)
            .map_or(judgement_of(rules).to_string(), |(_, why)| {
                format!("**false positive**: {why}")
            });
        writeln!(
            out,
            "| {} | `{}` | {} | {judgement} |",
            cell(page),
            cell(command),
            rules
        )
        .ok();
    }
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/corpus-report.md");
    let old = std::fs::read_to_string(&doc).unwrap_or_else(|_| "# Corpus report\n\n".into());
    let new = replace_section(&old, &out);
    std::fs::write(&doc, new).expect("write docs/corpus-report.md");
    eprintln!("critical {critical}, warning {warning}, safe {safe}");
}

fn fmt_counts(m: &std::collections::BTreeMap<String, usize>) -> String {
    let mut v: Vec<_> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(k, n)| format!("`{k}` {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('`', "ˋ")
}

/// Replaces the `## Classifier` section (up to the next `## ` heading), or
/// appends it, leaving other sections (written by others) alone.
fn replace_section(doc: &str, section: &str) -> String {
    let Some(start) = doc.find("## Classifier\n") else {
        return format!(
            "{}\n{section}",
            doc.trim_end_matches('\n').to_string() + "\n"
        );
    };
    let rest = &doc[start + 3..];
    let end = rest.find("\n## ").map_or(doc.len(), |i| start + 3 + i + 1);
    format!("{}{section}{}", &doc[..start], &doc[end..])
}
