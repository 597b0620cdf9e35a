//! The system configuration's `state_dir` wins over `SAFE_EXEC_STATE_DIR`:
//! the agent cannot move the audit log or reset the guard's session state.

use std::process::Command;

#[test]
fn system_state_dir_beats_the_environment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for d in ["home", "work", "agent-state", "system-state", "etc"] {
        std::fs::create_dir_all(root.join(d)).expect("mkdir");
    }
    let profile = root.join("etc/audited.toml");
    std::fs::write(
        &profile,
        "extends = \"default\"\n[audit]\nenabled = true\nfile = \"{state}/audit.jsonl\"\n",
    )
    .expect("profile");
    let system = root.join("etc/config.toml");
    std::fs::write(
        &system,
        format!(
            "profile = \"{}\"\nstate_dir = \"{}\"\n",
            profile.display(),
            root.join("system-state").display()
        ),
    )
    .expect("config");
    let out = Command::new(env!("CARGO_BIN_EXE_safe-exec"))
        .args(["--", "true"])
        .current_dir(root.join("work"))
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("home/.config"))
        .env("SAFE_EXEC_STATE_DIR", root.join("agent-state"))
        .env("SAFE_EXEC_SYSTEM_CONFIG", &system)
        .env_remove("SAFE_EXEC_PROFILE")
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        root.join("system-state/audit.jsonl").exists(),
        "the audit log follows the system state_dir"
    );
    assert!(
        !root.join("agent-state/audit.jsonl").exists(),
        "the environment did not move it"
    );
    // Positive control: with no system state_dir the environment decides.
    let out = Command::new(env!("CARGO_BIN_EXE_safe-exec"))
        .args(["--profile", profile.to_str().expect("utf8"), "--", "true"])
        .current_dir(root.join("work"))
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("home/.config"))
        .env("SAFE_EXEC_STATE_DIR", root.join("agent-state"))
        .env("SAFE_EXEC_SYSTEM_CONFIG", root.join("etc/none.toml"))
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(root.join("agent-state/audit.jsonl").exists());
}
