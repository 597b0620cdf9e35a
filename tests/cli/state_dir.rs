//! The system configuration's `state_dir` wins over `SAFE_EXEC_STATE_DIR`:
//! the agent cannot move the audit log or reset the guard's session state.

use crate::common::world::{Dirs, hermetic};

#[test]
fn system_state_dir_beats_the_environment() {
    let (_dir, root) = crate::common::world::tempdir("safe-exec-state-");
    let root = root.as_path();
    let mut dirs = Dirs::under(root);
    dirs.state = root.join("agent-state");
    dirs.create();
    for d in ["agent-state", "system-state", "etc"] {
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
    let out = hermetic(env!("CARGO_BIN_EXE_safe-exec"), &dirs)
        .args(["--", "true"])
        .env("SAFE_EXEC_SYSTEM_CONFIG", &system)
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
    let out = hermetic(env!("CARGO_BIN_EXE_safe-exec"), &dirs)
        .args(["--profile", profile.to_str().expect("utf8"), "--", "true"])
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
