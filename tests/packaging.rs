//! Packaging (issue 7).
//!
//! Fast checks, always run: the container profile and the configuration
//! files under `packaging/` mean what the docs say, with the library's own
//! profile selection (pinning) applied to them.
//!
//! Slow checks, `#[ignore]`d, run with `cargo test --test tests -- --ignored
//! packaging::` (as root, with network on the first run): `packaging/test-deb.sh` builds the release
//! binary and the .deb, runs lintian, installs it into a debootstrap root
//! and checks it and the container layout with chroot; `packaging/lint.sh`
//! runs hadolint on the Dockerfile and kubernetes-validate on the manifests.
//! See docs/packaging.md for what they take.

use std::path::{Path, PathBuf};
use std::process::Command;

use safe_exec::profile::schema::NetworkSetting;
use safe_exec::profile::{self, SelectionInputs};
use safe_exec::sandbox::Enforcement;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn container_profile_is_what_the_issue_asks() {
    let p = profile::load("container").expect("built-in container profile");
    assert_eq!(p.doc.paths.write, ["/workspace", "/tmp"]);
    assert_eq!(p.doc.sandbox.network, NetworkSetting::Off);
    assert_eq!(p.doc.sandbox.enforcement, Enforcement::Required);
    assert!(
        p.chain.iter().any(|n| n.ends_with("default")),
        "{:?}",
        p.chain
    );
    // The file shipped under /usr/share/safe-exec/profiles is the embedded one.
    let shipped = profile::load(repo().join("profiles/container.toml").to_str().unwrap())
        .expect("profiles/container.toml");
    assert_eq!(shipped.doc.paths.write, p.doc.paths.write);
}

fn select_with(system_config: &Path, cli: Option<&str>) -> Result<String, String> {
    let cwd = tempfile::tempdir().unwrap();
    profile::select(&SelectionInputs {
        cli: cli.map(str::to_string),
        env: None,
        user_config: None,
        system_config: system_config.to_path_buf(),
        cwd: cwd.path().to_path_buf(),
        cache_dir: None,
        state_dir: None,
    })
    .map(|s| s.profile.name)
    .map_err(|e| e.to_string())
}

#[test]
fn container_config_pins_the_container_profile() {
    let cfg = repo().join("packaging/container/config.toml");
    assert_eq!(select_with(&cfg, None).unwrap(), "container");
    assert_eq!(select_with(&cfg, Some("container")).unwrap(), "container");
    let err = select_with(&cfg, Some("default")).unwrap_err();
    assert!(err.contains("pins"), "{err}");
}

#[test]
fn debian_config_sets_nothing_and_its_commented_pin_works() {
    let text = read("packaging/debian/config.toml");
    let active: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    assert!(active.is_empty(), "the shipped config pins: {active:?}");
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("config.toml");
    std::fs::write(&empty, &text).unwrap();
    assert_eq!(select_with(&empty, None).unwrap(), "default");
    // Uncommenting the documented example pins the container profile.
    let uncommented = text
        .replace("# profile = \"container\"", "profile = \"container\"")
        .replace("# pin = true\n#\n# A profile", "pin = true\n#\n# A profile");
    assert!(uncommented.contains("\nprofile = \"container\"\npin = true\n"));
    std::fs::write(&empty, uncommented).unwrap();
    assert_eq!(select_with(&empty, None).unwrap(), "container");
    assert!(select_with(&empty, Some("default")).is_err());
}

/// The block scalar `key: |` of a ConfigMap's `data`, without its indentation.
fn configmap_entry(yaml: &str, key: &str) -> String {
    let head = format!("  {key}: |");
    let mut lines = yaml.lines().skip_while(|l| *l != head);
    assert!(lines.next().is_some(), "no `{key}` in the ConfigMap");
    let mut out = String::new();
    for l in lines {
        if l.is_empty() {
            out.push('\n');
        } else if let Some(rest) = l.strip_prefix("    ") {
            out.push_str(rest);
            out.push('\n');
        } else {
            break;
        }
    }
    out
}

#[test]
fn kubernetes_configmap_carries_a_pinned_profile_that_loads() {
    let yaml = read("packaging/kubernetes/configmap.yaml");
    let config = configmap_entry(&yaml, "config.toml");
    let agent = configmap_entry(&yaml, "agent.toml");
    let dir = tempfile::tempdir().unwrap();
    // Lay it out as the pod mounts it, under a temp dir instead of /etc.
    let agent_path = dir.path().join("agent.toml");
    std::fs::write(&agent_path, &agent).unwrap();
    let config = config.replace("/etc/safe-exec/agent.toml", agent_path.to_str().unwrap());
    let config_path = dir.path().join("config.toml");
    std::fs::write(&config_path, &config).unwrap();
    assert!(config.contains("pin = true"), "{config}");
    let p = profile::load(agent_path.to_str().unwrap()).expect("agent.toml loads");
    assert!(p.doc.audit.enabled, "the pod's profile keeps an audit log");
    assert_eq!(p.doc.audit.file, "/var/log/safe-exec/audit.jsonl");
    assert!(
        p.chain.iter().any(|n| n.ends_with("container")),
        "{:?}",
        p.chain
    );
    assert_eq!(p.doc.paths.write, ["/workspace", "/tmp"]);
    assert_eq!(select_with(&config_path, None).unwrap(), "agent");
    assert!(select_with(&config_path, Some("default")).is_err());
}

#[test]
fn kubernetes_pod_uses_safe_exec_and_the_configmap() {
    let pod = read("packaging/kubernetes/pod.yaml");
    for needle in [
        "kind: Pod",
        "value: /usr/bin/safe-exec",
        "mountPath: /etc/safe-exec",
        "name: safe-exec\n",
        "mountPath: /workspace",
        "runAsNonRoot: true",
        "automountServiceAccountToken: false",
        "tail -n +1 -F /var/log/safe-exec/audit.jsonl",
    ] {
        assert!(pod.contains(needle), "pod.yaml lacks {needle:?}");
    }
}

#[test]
fn dockerfile_layout() {
    let d = read("packaging/container/Dockerfile");
    for needle in [
        "AS build",
        "FROM debian:bookworm-slim",
        "COPY packaging/container/config.toml /etc/safe-exec/config.toml",
        "--shell /usr/lib/safe-exec/bin/bash agent",
        "CLAUDE_CODE_SHELL=/usr/lib/safe-exec/bin/bash",
        "SHELL [\"/usr/bin/safe-exec\", \"-c\"]",
        "mkdir -p /workspace",
    ] {
        assert!(d.contains(needle), "Dockerfile lacks {needle:?}");
    }
    // /bin/sh stays the system's: nothing replaces or diverts it.
    assert!(!d.contains("/bin/sh ->") && !d.contains("ln -sf /usr/bin/safe-exec"));
}

fn run_script(script: &str) {
    let status = Command::new("bash")
        .arg(repo().join(script))
        .current_dir(repo())
        .status()
        .unwrap_or_else(|e| panic!("{script}: {e}"));
    assert!(status.success(), "{script} failed: {status}");
}

#[test]
#[ignore = "slow (builds the .deb, debootstraps a root): cargo test -- --ignored deb_installs; see docs/packaging.md"]
fn deb_installs_and_works_in_a_debootstrap_root() {
    run_script("packaging/test-deb.sh");
}

#[test]
#[ignore = "slow (downloads the linters): cargo test -- --ignored dockerfile_and_manifests; see docs/packaging.md"]
fn dockerfile_and_manifests_pass_their_linters() {
    run_script("packaging/lint.sh");
}
