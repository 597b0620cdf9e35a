//! Environment hygiene: research catalogue §10 item 19.
use crate::common::sandbox as common;
use common::*;
use serde_json::json;

fn env_of(w: &World, extra: &[(&str, &str)]) -> Vec<String> {
    let mut cmd = w.command(&[probe().to_str().unwrap(), "print-env"]);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stdout(&out).lines().map(str::to_string).collect()
}

const SECRETS: &[(&str, &str)] = &[
    ("GITHUB_TOKEN", "ghp_x"),
    ("OPENAI_API_KEY", "sk-x"),
    ("AWS_SECRET_ACCESS_KEY", "x"),
    ("DB_PASSWORD", "x"),
    ("BASH_ENV", "/tmp/evil"),
    ("ENV", "/tmp/evil"),
    ("PROMPT_COMMAND", "evil"),
    ("NODE_OPTIONS", "--require /tmp/evil.js"),
    ("BASH_FUNC_ls%%", "() { evil; }"),
    ("GIT_SSH_COMMAND", "evil"),
    ("LD_LIBRARY_PATH", "/tmp/evil"),
];

#[test]
fn secrets_and_injection_variables_are_removed() {
    let Some(w) = landlock_world() else {
        return;
    };
    let env = env_of(&w, SECRETS);
    for (k, _) in SECRETS {
        assert!(
            !env.iter().any(|l| l.starts_with(&format!("{k}="))),
            "{k} leaked"
        );
    }
    for keep in ["PATH=", "HOME=", "TMPDIR=", "SAFE_EXEC_SANDBOX=1"] {
        assert!(env.iter().any(|l| l.starts_with(keep)), "{keep} missing");
    }
    // control: the same variables reach an unsandboxed child
    let out = std::process::Command::new(probe())
        .arg("print-env")
        .envs(SECRETS.iter().copied())
        .output()
        .unwrap();
    assert!(stdout(&out).contains("GITHUB_TOKEN=ghp_x"));
}

#[test]
fn allowlist_mode_keeps_only_listed_names_then_set() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    w.set_env("mode", json!("allowlist"));
    w.set_env("allow", json!(["PATH", "HOME", "KEEP_*"]));
    w.set_env("set", json!({"FOO": "bar"}));
    let env = env_of(&w, &[("KEEP_ME", "1"), ("DROP_ME", "1"), ("GH_TOKEN", "x")]);
    let mut names: Vec<&str> = env.iter().filter_map(|l| l.split('=').next()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "FOO",
            "HOME",
            "KEEP_ME",
            "PATH",
            "SAFE_EXEC_NETWORK_DISABLED",
            "SAFE_EXEC_SANDBOX"
        ]
    );
    assert!(env.contains(&"FOO=bar".to_string()));
}

#[test]
fn profile_remove_globs_apply() {
    let Some(mut w) = landlock_world() else {
        return;
    };
    w.set_env("remove", json!(["MY_*"]));
    let env = env_of(&w, &[("MY_VAR", "1"), ("OTHER_VAR", "1")]);
    assert!(!env.iter().any(|l| l.starts_with("MY_VAR=")));
    assert!(env.iter().any(|l| l == "OTHER_VAR=1"), "control");
}

#[test]
fn bash_env_injection_does_not_run() {
    if !require_landlock() {
        return;
    }
    need_tool("bash", "bash");
    let w = World::new();
    let evil = w.work.join("evil.sh");
    let marker = w.work.join("pwned");
    std::fs::write(&evil, format!("echo pwned > {}\n", marker.display())).unwrap();
    let out = w
        .command(&["bash", "-c", "true"])
        .env("BASH_ENV", &evil)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0);
    assert!(!marker.exists(), "BASH_ENV ran inside the sandbox");
    let st = std::process::Command::new("bash")
        .args(["-c", "true"])
        .env("BASH_ENV", &evil)
        .current_dir(&w.work)
        .status()
        .unwrap();
    assert!(
        st.success() && marker.exists(),
        "control: bash honours BASH_ENV"
    );
}

#[test]
fn path_loses_only_the_directories_whose_bash_is_safe_exec() {
    // A directory whose `bash` is a symlink to safe-exec (what the Debian
    // package installs as /usr/lib/safe-exec/bin) goes; one whose `bash`
    // is another program stays (control), as does one without `bash` and
    // one whose `bash` is a symlink to a symlink to safe-exec... goes.
    let w = World::new();
    let linked = w.home.join("se-bin");
    let chained = w.home.join("se-chain");
    let other = w.home.join("other-bin");
    let plain = w.home.join("plain-bin");
    for d in [&linked, &chained, &other, &plain] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(bin(), linked.join("bash")).unwrap();
    std::os::unix::fs::symlink(linked.join("bash"), chained.join("bash")).unwrap();
    std::os::unix::fs::symlink("/bin/bash", other.join("bash")).unwrap();
    let path = format!(
        "{}:{}:{}:{}:/usr/bin:/bin",
        linked.display(),
        other.display(),
        chained.display(),
        plain.display()
    );
    let env = env_of(&w, &[("PATH", &path)]);
    let got = env
        .iter()
        .find_map(|l| l.strip_prefix("PATH="))
        .expect("PATH in the command's environment");
    assert_eq!(
        got,
        format!("{}:{}:/usr/bin:/bin", other.display(), plain.display())
    );
}
