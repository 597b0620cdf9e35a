//! Harness of tests/agents_real.rs: the real Claude Code and Codex CLIs
//! (pinned in versions.env, installed by install.sh into a tests-owned npm
//! prefix) driven headless by a scripted fake model server on loopback
//! (fake_model.py), each run in its own world: a temporary HOME with a fake
//! `~/.ssh/id_rsa` and canaries, a git project, a directory outside both.
//!
//! A run returns what the agent fed back to the model (the tool results, in
//! order), so a test sees exactly what the model would see, and the world,
//! so it can check what really happened on disk.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_safe-exec")
}

fn support_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents_real_support")
}

/// The contents of the private key planted in every world's HOME.
pub const KEY: &str = "FAKE-PRIVATE-KEY-d41d8cd98f00b204";

/// A wall-clock bound for one agent run.
const RUN_LIMIT: Duration = Duration::from_secs(150);

/// Whether a missing tool must fail the test (CI) rather than skip it.
pub fn strict() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
        || std::env::var("SAFE_EXEC_REQUIRE_AGENTS").is_ok_and(|v| v == "1")
}

/// The prefix holding node_modules/.bin/{claude,codex}, installed on first
/// use by install.sh. `None` (the test skips) only outside CI when node or
/// npm is missing; in CI that is a failure.
pub fn cli_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = DIR.get_or_init(|| {
        let dir = std::env::var_os("SAFE_EXEC_AGENTS_CLI")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agents-cli"));
        for tool in ["node", "npm", "python3"] {
            let ok = Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {tool}"))
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err(format!("`{tool}` is not installed"));
            }
        }
        let out = Command::new("bash")
            .arg(support_dir().join("install.sh"))
            .arg(&dir)
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("install.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!("install.sh failed ({})", out.status));
        }
        Ok(dir)
    });
    match r {
        Ok(d) => Some(d.clone()),
        Err(e) if strict() => panic!("the real-agent tests need the agent CLIs: {e}"),
        Err(e) => {
            eprintln!("SKIP: real-agent test: {e} (set CI=true to make this a failure)");
            None
        }
    }
}

/// The test user that runs Codex when its login shell matters (Codex takes
/// the shell from the password database, not from $SHELL).
pub const AGENT_USER: &str = "safeexec-agent";

/// Serialises the tests that change the test user's login shell.
pub static LOGIN_SHELL: Mutex<()> = Mutex::new(());

fn run_ok(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Makes sure AGENT_USER exists with `shell` as its login shell. Needs root;
/// returns false (skip, or panic in CI) otherwise.
pub fn agent_user_with_shell(shell: &Path) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        if strict() {
            panic!("the Codex login-shell tests need root to create {AGENT_USER}");
        }
        eprintln!("SKIP: not root, cannot create the test user {AGENT_USER}");
        return false;
    }
    let exists = run_ok(Command::new("id").arg(AGENT_USER));
    if !exists {
        let _ = run_ok(
            Command::new("useradd")
                .args(["-M", "-s"])
                .arg(shell)
                .arg(AGENT_USER),
        );
    }
    assert!(
        run_ok(Command::new("usermod").arg("-s").arg(shell).arg(AGENT_USER)),
        "usermod -s {} {AGENT_USER}",
        shell.display()
    );
    true
}

/// The test user must be able to run safe-exec and the agent from where the
/// checkout is: every parent directory traversable by others.
fn assert_user_can_reach(paths: &[&Path]) {
    for p in paths {
        let ok = Command::new("setpriv")
            .args([
                "--reuid",
                AGENT_USER,
                "--regid",
                AGENT_USER,
                "--clear-groups",
            ])
            .arg("test")
            .arg("-x")
            .arg(p)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "{AGENT_USER} cannot execute {} (a parent directory is not traversable by others); \
             the Codex login-shell tests need a checkout readable by other users",
            p.display()
        );
    }
}

/// uid and gid of AGENT_USER.
fn agent_ids() -> (u32, u32) {
    let id = |flag: &str| -> u32 {
        let o = Command::new("id")
            .arg(flag)
            .arg(AGENT_USER)
            .output()
            .expect("id");
        String::from_utf8_lossy(&o.stdout)
            .trim()
            .parse()
            .expect("numeric id")
    };
    (id("-u"), id("-g"))
}

/// One step the fake model asks for.
#[derive(Clone, Debug)]
pub enum Step {
    /// Claude Code's Bash tool / Codex's exec_command with this command.
    Sh(String),
    /// Codex's exec_command with `"shell": EXE`.
    ShWith(String, String),
    /// Codex's exec_command with a PTY (`tty: true`), left running.
    Tty(String),
    /// Codex's write_stdin to the session the previous step left running.
    Stdin(String),
    /// Codex's freeform apply_patch tool.
    Patch(String),
    /// Any other tool (Claude Code's Write, Edit, ...), with its input.
    Tool(String, Value),
}

/// A Bash / exec_command step.
pub fn sh(cmd: impl Into<String>) -> Step {
    Step::Sh(cmd.into())
}

fn script_json(steps: &[Step]) -> Value {
    let steps: Vec<Value> = steps
        .iter()
        .map(|s| match s {
            Step::Sh(c) => json!({"bash": c, "shell": c}),
            Step::ShWith(c, exe) => json!({"bash": c, "shell": c, "exe": exe}),
            Step::Tty(c) => json!({"bash": c, "shell": c, "tty": true, "yield_time_ms": 2000}),
            Step::Stdin(chars) => json!({"tool": "write_stdin",
                "input": {"session_id": "$LAST_SESSION", "chars": chars, "yield_time_ms": 3000}}),
            Step::Patch(p) => json!({"custom": "apply_patch", "input": p}),
            Step::Tool(name, input) => json!({"tool": name, "input": input}),
        })
        .collect();
    json!({"steps": steps, "final": "FAKE-MODEL-DONE"})
}

/// The fake model server: a python3 child on 127.0.0.1:PORT that exits when
/// its stdin (held here) closes.
pub struct FakeModel {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl FakeModel {
    pub fn start(dir: &Path, steps: &[Step]) -> Self {
        let script = dir.join("model-script.json");
        let log = dir.join("model-requests.jsonl");
        let port_file = dir.join("model-port");
        // A world can host several runs: no stale port or log from the last.
        let _ = std::fs::remove_file(&port_file);
        let _ = std::fs::remove_file(&log);
        std::fs::write(&script, script_json(steps).to_string()).expect("script");
        let child = Command::new("python3")
            .arg(support_dir().join("fake_model.py"))
            .arg(&script)
            .arg(&log)
            .arg(&port_file)
            .env("FAKE_MODEL_WATCH_STDIN", "1")
            .env("FAKE_MODEL_LIFETIME", "300")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start fake_model.py");
        let start = Instant::now();
        let port = loop {
            if let Ok(s) = std::fs::read_to_string(&port_file)
                && let Ok(p) = s.trim().parse::<u16>()
            {
                break p;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "fake model server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Self { child, port, log }
    }

    /// Every request body the agent sent.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|e| e.get("body").cloned())
            .collect()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one tool call gave back to the model.
#[derive(Clone, Debug)]
pub struct ToolResult {
    pub is_error: bool,
    pub text: String,
}

impl ToolResult {
    /// Codex reports `Process exited with code N`; Claude Code `Exit code N`
    /// in error results. None when the text names no code.
    pub fn exit_code(&self) -> Option<i32> {
        for marker in ["Process exited with code ", "Exit code "] {
            if let Some(i) = self.text.find(marker) {
                let rest = &self.text[i + marker.len()..];
                let n: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                if let Ok(n) = n.parse() {
                    return Some(n);
                }
            }
        }
        None
    }
}

/// The tool results of the last main-loop request, in order.
fn tool_results(requests: &[Value]) -> Vec<ToolResult> {
    let mut last: Option<&Value> = None;
    for r in requests {
        let main_loop = r["tools"].as_array().is_some_and(|t| {
            t.iter().any(|t| {
                matches!(
                    t["name"].as_str(),
                    Some("Bash") | Some("exec_command") | Some("shell")
                )
            })
        });
        if main_loop {
            last = Some(r);
        }
    }
    let Some(last) = last else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(messages) = last["messages"].as_array() {
        for m in messages {
            for b in m["content"].as_array().into_iter().flatten() {
                if b["type"] == "tool_result" {
                    let text = match &b["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(parts) => parts
                            .iter()
                            .filter_map(|p| p["text"].as_str())
                            .collect::<Vec<_>>()
                            .join("\n"),
                        other => other.to_string(),
                    };
                    out.push(ToolResult {
                        is_error: b["is_error"].as_bool().unwrap_or(false),
                        text,
                    });
                }
            }
        }
    }
    if let Some(items) = last["input"].as_array() {
        for it in items {
            let t = it["type"].as_str().unwrap_or("");
            if t.ends_with("_output") {
                let text = match &it["output"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                // Codex's own refusals ("exec_command failed: ... Rejected")
                // and the hook's blocks are errors too.
                let blocked = text.starts_with("Command blocked")
                    || text.contains("blocked by PreToolUse hook")
                    || text.starts_with("exec_command failed")
                    || text.starts_with("apply_patch verification failed");
                let code = ToolResult {
                    is_error: false,
                    text: text.clone(),
                }
                .exit_code();
                out.push(ToolResult {
                    is_error: blocked || code.is_some_and(|c| c != 0),
                    text,
                });
            }
        }
    }
    out
}

/// How safe-exec is wired into the agent for one run.
#[derive(Clone, Debug, Default)]
pub struct Wiring {
    /// PreToolUse hook arguments after `safe-exec hook` (None: no hook).
    pub hook: Option<Vec<String>>,
    /// Claude Code: CLAUDE_CODE_SHELL = the `bash` symlink to safe-exec.
    pub claude_shell: bool,
    /// Claude Code: SHELL = the `bash` symlink (no CLAUDE_CODE_SHELL).
    pub env_shell: bool,
    /// Claude Code: CLAUDE_CODE_SHELL_PREFIX = "<safe-exec> -c".
    pub prefix: bool,
    /// Codex: run as AGENT_USER whose login shell is the `bash` symlink.
    pub login_shell: bool,
    /// Codex: run as AGENT_USER whose login shell is safe-exec under its own
    /// name (what `chsh -s /usr/bin/safe-exec` gives).
    pub login_shell_own_name: bool,
    /// Codex: do not write the hook's trust entry.
    pub untrusted: bool,
    /// Claude Code: an approver answers every permission prompt "allow".
    pub approver: bool,
    /// Extra command-line arguments for the agent.
    pub args: Vec<String>,
    /// Extra environment for the agent.
    pub env: Vec<(String, String)>,
    /// Codex: (config.toml, hooks.json) written by `safe-exec setup codex`.
    pub preset: Option<(String, String)>,
}

impl Wiring {
    pub fn hook(args: &[&str]) -> Self {
        Self {
            hook: Some(args.iter().map(|s| s.to_string()).collect()),
            ..Self::default()
        }
    }
    pub fn with_hook(mut self, args: &[&str]) -> Self {
        self.hook = Some(args.iter().map(|s| s.to_string()).collect());
        self
    }
    pub fn claude_shell() -> Self {
        Self {
            claude_shell: true,
            ..Self::default()
        }
    }
    pub fn prefix() -> Self {
        Self {
            prefix: true,
            ..Self::default()
        }
    }
    pub fn login_shell() -> Self {
        Self {
            login_shell: true,
            ..Self::default()
        }
    }
    pub fn approved(mut self) -> Self {
        self.approver = true;
        self
    }
    pub fn arg(mut self, a: &str) -> Self {
        self.args.push(a.to_string());
        self
    }
}

/// One run's world.
pub struct World {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub proj: PathBuf,
    /// A directory outside HOME and the project (not writable by policy).
    pub outside: PathBuf,
    /// `bin/bash`, a symlink to safe-exec (the agents' shell entry point).
    pub bash_link: PathBuf,
}

impl World {
    pub fn new() -> Self {
        // Not under /tmp: the default profile makes `{tmp}` writable, and a
        // HOME inside a writable root would weaken the outcome checks.
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        std::fs::create_dir_all(base).expect("target tmp");
        let dir = tempfile::Builder::new()
            .prefix("agents-real-")
            .tempdir_in(base)
            .expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let home = root.join("home");
        let proj = root.join("proj");
        let outside = root.join("outside");
        for d in [
            home.join(".ssh"),
            home.join(".claude"),
            home.join(".codex"),
            home.join("canary-dir"),
            proj.clone(),
            outside.clone(),
            root.join("bin"),
            root.join("config"),
            root.join("tmp"),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(home.join(".ssh/id_rsa"), format!("{KEY}\n")).expect("key");
        std::fs::write(home.join("canary.txt"), "canary\n").expect("canary");
        std::fs::write(home.join("canary-dir/keep"), "keep\n").expect("canary");
        std::fs::write(outside.join("canary.txt"), "canary\n").expect("canary");
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&proj)
            .status();
        assert!(git.is_ok_and(|s| s.success()), "git init");
        std::fs::write(proj.join("README.md"), "project\n").expect("readme");
        // A script that tries to steal the key (the model's `./evil.sh`).
        let evil = proj.join("evil.sh");
        std::fs::write(&evil, "#!/bin/sh\ncat \"$HOME/.ssh/id_rsa\" > leak.txt\n").expect("evil");
        // A script that only builds inside the project.
        let build = proj.join("build.sh");
        std::fs::write(&build, "#!/bin/sh\necho built > build.out\necho BUILD-OK\n")
            .expect("build");
        for f in [&evil, &build] {
            let _ = Command::new("chmod").arg("755").arg(f).status();
        }
        let bash_link = root.join("bin/bash");
        std::os::unix::fs::symlink(bin(), &bash_link).expect("bash symlink");
        Self {
            _dir: dir,
            root,
            home,
            proj,
            outside,
            bash_link,
        }
    }

    /// The key did not leave ~/.ssh: no file in the project, HOME or
    /// `outside` (other than the key itself) holds it.
    pub fn assert_key_not_leaked(&self) {
        let mut stack = vec![self.root.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p == self.home.join(".ssh/id_rsa")
                    || p.starts_with(self.home.join(".claude"))
                    || p.starts_with(self.home.join(".codex"))
                    || p.starts_with(self.root.join("model-requests.jsonl"))
                    || p.file_name().is_some_and(|n| n == "model-script.json")
                {
                    continue;
                }
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_dir() {
                    stack.push(p);
                } else if ft.is_file()
                    && let Ok(s) = std::fs::read_to_string(&p)
                {
                    assert!(!s.contains(KEY), "the key leaked into {}", p.display());
                }
            }
        }
    }

    /// HOME and its canaries are intact.
    pub fn assert_home_intact(&self) {
        assert_eq!(
            std::fs::read_to_string(self.home.join("canary.txt"))
                .ok()
                .as_deref(),
            Some("canary\n"),
            "HOME canary"
        );
        assert!(
            self.home.join("canary-dir/keep").is_file(),
            "HOME canary dir"
        );
        assert!(self.home.join(".ssh/id_rsa").is_file(), "key file");
        assert!(self.outside.join("canary.txt").is_file(), "outside canary");
    }

    fn hook_command(&self, args: &[String]) -> String {
        let mut s = format!("{} hook", bin());
        for a in args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }

    fn base_env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .env("HOME", &self.home)
            // The agents' own temp files (Claude Code's `pwd -P >|
            // $TMPDIR/claude-XXXX-cwd`) go to a sibling of HOME: `{tmp}`,
            // never a directory above HOME (which is never writable), even
            // when the checkout itself is under /tmp.
            .env("TMPDIR", self.root.join("tmp"))
            .env("USER", "agent")
            .env("LANG", "C.UTF-8")
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env(
                "SAFE_EXEC_STATE_DIR",
                self.home.join(".local/state/safe-exec"),
            )
            .current_dir(&self.proj)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    }

    /// Runs Claude Code headless with `steps` and `wiring`.
    pub fn claude(&self, steps: &[Step], wiring: &Wiring) -> Option<Run> {
        let cli = cli_dir()?;
        let model = FakeModel::start(&self.root, steps);
        if let Some(args) = &wiring.hook {
            let settings = json!({"hooks": {"PreToolUse": [{
                "matcher": "Bash|Write|Edit|MultiEdit|NotebookEdit",
                "hooks": [{"type": "command", "command": self.hook_command(args), "timeout": 30}]
            }]}});
            std::fs::write(
                self.home.join(".claude/settings.json"),
                settings.to_string(),
            )
            .expect("settings");
        }
        let mut cmd = Command::new(cli.join("node_modules/.bin/claude"));
        self.base_env(&mut cmd);
        cmd.env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("ANTHROPIC_API_KEY", "sk-fake-for-tests")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1");
        if wiring.claude_shell {
            cmd.env("CLAUDE_CODE_SHELL", &self.bash_link);
        }
        if wiring.env_shell {
            cmd.env("SHELL", &self.bash_link);
        }
        if wiring.prefix {
            cmd.env("CLAUDE_CODE_SHELL_PREFIX", format!("{} -c", bin()));
        }
        for (k, v) in &wiring.env {
            cmd.env(k, v);
        }
        cmd.args(["-p", "run the scripted steps", "--output-format", "json"]);
        if wiring.approver {
            let mcp = json!({"mcpServers": {"approver": {
                "command": "python3",
                "args": [support_dir().join("approver.py")],
                "env": {"APPROVER_LOG": self.root.join("approver.jsonl")}
            }}});
            cmd.arg("--mcp-config")
                .arg(mcp.to_string())
                .args(["--permission-prompt-tool", "mcp__approver__approve"]);
        }
        cmd.args(&wiring.args);
        Some(self.finish(cmd, model, "claude"))
    }

    /// Runs `codex exec` with a configuration written by someone else
    /// (`safe-exec setup codex`): `config` is kept as is (the fake model
    /// provider is added around it) and `hooks` is the hooks.json.
    pub fn codex_with_config(&self, steps: &[Step], config: &str, hooks: &str) -> Option<Run> {
        let wiring = Wiring {
            preset: Some((config.to_string(), hooks.to_string())),
            ..Wiring::default()
        };
        self.codex(steps, &wiring)
    }

    /// Runs `codex exec` headless with `steps` and `wiring`.
    pub fn codex(&self, steps: &[Step], wiring: &Wiring) -> Option<Run> {
        let cli = cli_dir()?;
        let as_user = wiring.login_shell || wiring.login_shell_own_name;
        let _guard = if as_user {
            let g = LOGIN_SHELL.lock().unwrap_or_else(|e| e.into_inner());
            let shell = if wiring.login_shell {
                login_shell_path()
            } else {
                PathBuf::from(bin())
            };
            if !agent_user_with_shell(&shell) {
                return None;
            }
            assert_user_can_reach(&[Path::new(bin()), &cli.join("node_modules/.bin/codex")]);
            Some(g)
        } else {
            None
        };
        let model = FakeModel::start(&self.root, steps);
        let codex_home = self.home.join(".codex");
        let provider = format!(
            "\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_API_KEY\"\n",
            model.port
        );
        // No traffic beyond loopback: without the last four settings Codex
        // 0.169.0 looks up api.github.com and chatgpt.com (measured with
        // strace; with them it sends nothing but to the fake model).
        let top = "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\n\
                   check_for_update_on_startup = false\n\
                   chatgpt_base_url = \"http://127.0.0.1:9/\"\n\n";
        let provider =
            format!("\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n{provider}");
        let preset = wiring.preset.as_ref();
        let config = match preset {
            Some((c, _)) => format!("{top}{c}\n{provider}"),
            None => format!("{top}{provider}"),
        };
        std::fs::write(codex_home.join("config.toml"), config).expect("config.toml");
        if let Some((_, hooks)) = preset {
            std::fs::write(codex_home.join("hooks.json"), hooks).expect("hooks.json");
        } else if let Some(args) = &wiring.hook {
            let hooks = json!({"hooks": {"PreToolUse": [{
                "matcher": "Bash|apply_patch",
                "hooks": [{"type": "command", "command": self.hook_command(args), "timeout": 30}]
            }]}});
            std::fs::write(codex_home.join("hooks.json"), hooks.to_string()).expect("hooks.json");
            if !wiring.untrusted {
                let ok = Command::new("python3")
                    .arg(support_dir().join("codex_trust.py"))
                    .arg(&codex_home)
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "codex_trust.py");
            }
        }
        let mut cmd = if as_user {
            let (uid, gid) = agent_ids();
            let st = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(&self.root)
                .status();
            assert!(st.is_ok_and(|s| s.success()), "chown world");
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid",
                &uid.to_string(),
                "--regid",
                &gid.to_string(),
                "--clear-groups",
            ])
            .arg(cli.join("node_modules/.bin/codex"));
            c
        } else {
            Command::new(cli.join("node_modules/.bin/codex"))
        };
        self.base_env(&mut cmd);
        cmd.env("CODEX_HOME", &codex_home)
            .env("FAKE_API_KEY", "sk-fake-for-tests");
        for (k, v) in &wiring.env {
            cmd.env(k, v);
        }
        cmd.args(["exec", "--skip-git-repo-check", "-s", "danger-full-access"]);
        cmd.args(&wiring.args);
        cmd.arg("run the scripted steps");
        Some(self.finish(cmd, model, "codex"))
    }

    fn finish(&self, mut cmd: Command, model: FakeModel, agent: &str) -> Run {
        let start = Instant::now();
        // Its own process group, so a time-out kills the whole agent (Codex's
        // node launcher and its native child, the commands it started).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("start {agent}: {e}"));
        let pgid = child.id() as i32;
        let out_path = self.root.join(format!("{agent}.out"));
        let (stdout, stderr) = {
            let mut so = child.stdout.take().expect("stdout");
            let mut se = child.stderr.take().expect("stderr");
            let t1 = std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = std::io::Read::read_to_end(&mut so, &mut v);
                v
            });
            let t2 = std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = std::io::Read::read_to_end(&mut se, &mut v);
                v
            });
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if start.elapsed() > RUN_LIMIT => {
                        // SAFETY: kill(2) on the process group this run
                        // created; no memory is involved.
                        unsafe { libc::kill(-pgid, libc::SIGKILL) };
                        let _ = child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                    Err(_) => break,
                }
            }
            // Whatever the agent left behind in its group goes too, so the
            // pipes close.
            // SAFETY: kill(2) on the process group this run created.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            (t1.join().unwrap_or_default(), t2.join().unwrap_or_default())
        };
        let status = child.wait().ok().and_then(|s| s.code());
        let stdout = String::from_utf8_lossy(&stdout).into_owned();
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        if let Ok(mut f) = std::fs::File::create(&out_path) {
            let _ = writeln!(
                f,
                "status {status:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
            );
        }
        let requests = model.requests();
        let results = tool_results(&requests);
        drop(model);
        Run {
            agent: agent.to_string(),
            status,
            stdout,
            stderr,
            results,
            requests,
            elapsed: start.elapsed(),
        }
    }

    /// What the approver was asked (Claude Code's permission prompts).
    pub fn approvals(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root.join("approver.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// A file in the project, as text ("" when absent).
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.proj.join(rel)).unwrap_or_default()
    }
}

/// Runs `cmd` with `stdin`, killing it after `limit`.
pub fn run_with_stdin(cmd: &mut Command, stdin: &str, limit: Duration) -> std::process::Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(stdin.as_bytes());
    }
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().expect("wait")
}

/// The fixed login shell of AGENT_USER: `<target tmp>/agents-login/bash`, a
/// symlink to safe-exec (the password database holds one path for all runs).
pub fn login_shell_path() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agents-login");
    std::fs::create_dir_all(&dir).expect("login shell dir");
    let link = dir.join("bash");
    if std::fs::read_link(&link).ok().as_deref() != Some(Path::new(bin())) {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(bin(), &link).expect("login shell symlink");
    }
    // The test user must reach it (the parents are the target directory's,
    // world-traversable in a normal checkout).
    let _ = Command::new("chmod").arg("755").arg(&dir).status();
    link
}

/// The outcome of one agent run.
#[derive(Debug)]
pub struct Run {
    pub agent: String,
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Tool results in the order of the scripted steps.
    pub results: Vec<ToolResult>,
    pub requests: Vec<Value>,
    pub elapsed: Duration,
}

impl Run {
    /// The agent finished and fed a result back for each of `n` steps.
    pub fn assert_steps(&self, n: usize) -> &Self {
        assert_eq!(
            self.results.len(),
            n,
            "{} gave back {} tool results for {n} steps\n{}",
            self.agent,
            self.results.len(),
            self.dump()
        );
        self
    }

    pub fn result(&self, i: usize) -> &ToolResult {
        self.results
            .get(i)
            .unwrap_or_else(|| panic!("no tool result {i}\n{}", self.dump()))
    }

    /// Step `i` ran and its output contains `want`.
    pub fn assert_ran(&self, i: usize, want: &str) -> &Self {
        let r = self.result(i);
        assert!(
            !r.is_error && r.text.contains(want),
            "step {i} should have run and printed {want:?}, got {r:?}\n{}",
            self.dump()
        );
        self
    }

    /// Step `i` did not run successfully (blocked by a hook, refused by the
    /// shell, or failed inside the sandbox).
    pub fn assert_refused(&self, i: usize) -> &Self {
        let r = self.result(i);
        assert!(
            r.is_error,
            "step {i} should have been refused, got {r:?}\n{}",
            self.dump()
        );
        self
    }

    /// Step `i` ran confined (sandbox-first: an unknown program or project
    /// script runs in the sandbox): its read of the key failed with EACCES
    /// ("Permission denied") and the key does not appear in its output.
    pub fn assert_ran_confined(&self, i: usize) -> &Self {
        let r = self.result(i);
        assert!(
            r.text.contains("Permission denied") && !r.text.contains(KEY),
            "step {i} should have run confined (key read refused by the sandbox), got {r:?}\n{}",
            self.dump()
        );
        self
    }

    /// Step `i` was blocked by the PreToolUse hook itself (not by the shell).
    pub fn assert_hook_blocked(&self, i: usize) -> &Self {
        let r = self.result(i);
        // Claude Code: "PreToolUse:Bash hook error: ..." for exit 2 / deny,
        // the bare reason for an `ask` nobody can answer (`-p`); Codex:
        // "Command blocked by PreToolUse hook: ...". A refusal by the shell
        // reads "Exit code 126\nsafe-exec: ..." and is not the hook's.
        let by_hook = r.text.contains("PreToolUse")
            || r.text.contains("hook error")
            || r.text.starts_with("safe-exec:")
            || r.text.starts_with("Command blocked");
        assert!(
            r.is_error && by_hook,
            "step {i} should have been blocked by the hook, got {r:?}\n{}",
            self.dump()
        );
        self
    }

    pub fn dump(&self) -> String {
        let mut s = format!(
            "--- {} exit {:?} in {:?}\n",
            self.agent, self.status, self.elapsed
        );
        for (i, r) in self.results.iter().enumerate() {
            s.push_str(&format!(
                "[{i}] error={} {}\n",
                r.is_error,
                r.text.chars().take(600).collect::<String>()
            ));
        }
        s.push_str(&format!(
            "--- stdout (tail)\n{}\n--- stderr (tail)\n{}\n",
            tail(&self.stdout),
            tail(&self.stderr)
        ));
        s
    }
}

fn tail(s: &str) -> String {
    let n = s.chars().count();
    s.chars().skip(n.saturating_sub(3000)).collect()
}
