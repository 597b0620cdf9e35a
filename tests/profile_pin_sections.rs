//! Pinning covers every profile section (issue 13): a `--profile FILE`
//! under a pinned system profile cannot set code-loading variables in
//! `[env] set`, drop protected paths, or change any setting the pin check
//! does not judge; a profile that only tightens still loads.
use crate::common::policy as common;
use common::*;

fn run_pinned(w: &World, profile_text: &str) -> std::process::Output {
    let sys = w.write_etc("sys/config.toml", "profile = \"strict\"\npin = true\n");
    let p = w.write_etc("candidate.toml", profile_text);
    let mut c = w.cmd();
    c.env("SAFE_EXEC_SYSTEM_CONFIG", &sys).args([
        "check",
        "--profile",
        p.to_str().unwrap(),
        "-c",
        "ls",
    ]);
    c.output().unwrap()
}

#[test]
fn env_set_of_code_loading_variables_breaks_the_pin() {
    for set in [
        "LD_PRELOAD = \"/tmp/x.so\"",
        "BASH_ENV = \"/tmp/x.sh\"",
        "GCONV_PATH = \".\"",
        "NODE_OPTIONS = \"--require ./x.js\"",
        "PATH = \"./bin:/usr/bin\"",
        "GIT_SSH_COMMAND = \"./x\"",
    ] {
        let w = World::new();
        let out = run_pinned(&w, &format!("extends = \"strict\"\n\n[env.set]\n{set}\n"));
        assert_eq!(code(&out), 125, "{set}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("[env] set"),
            "{set}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn other_sections_are_covered_too() {
    let w = World::new();
    // Dropping the protected files of the pinned profile.
    let out = run_pinned(&w, "extends = \"strict\"\n\n[paths]\nprotected = []\n");
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    let out = run_pinned(&w, "extends = \"strict\"\n\n[paths]\nsecret_names = []\n");
    assert_eq!(code(&out), 125, "{}", stderr(&out));
}

#[test]
fn tightening_or_harmless_env_still_passes() {
    let w = World::new();
    // Positive controls: the same profile file with harmless settings loads.
    let out = run_pinned(&w, "extends = \"strict\"\n");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = run_pinned(
        &w,
        "extends = \"strict\"\n\n[env.set]\nRUST_LOG = \"info\"\n",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
