//! Seed 002's structured archive and network forms: every rejection the seed
//! lists, the accepted shapes, and end-to-end runs against servers on
//! 127.0.0.1 that the test starts itself (never the internet).

use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::world::{Dirs, hermetic, need_tool, skip_or_fail};

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
    tmp: PathBuf,
    state: PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let cwd = dir.path().join("project");
    let tmp = dir.path().join("tmp");
    let state = dir.path().join("state");
    for d in [&home, &cwd, &tmp, &state] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    Env {
        _dir: dir,
        home,
        cwd,
        tmp,
        state,
    }
}

fn safe_exec(e: &Env, args: &[&str]) -> Output {
    let dirs = Dirs {
        base: e.home.parent().expect("world").to_path_buf(),
        home: e.home.clone(),
        cwd: e.cwd.clone(),
        tmp: e.tmp.clone(),
        state: e.state.clone(),
        config: e.home.join(".config"),
        system_config: e.home.join("no-system-config.toml"),
    };
    hermetic(env!("CARGO_BIN_EXE_safe-exec"), &dirs)
        .args(args)
        .env("SAFE_EXEC_AGENT", "test")
        .output()
        .expect("run safe-exec")
}

fn check(e: &Env, cmd: &str) -> serde_json::Value {
    let out = safe_exec(e, &["check", "--json", "-c", cmd]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        panic!(
            "{cmd}: bad JSON ({err}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

const EXTRACT: &str = "Archive extraction can write or overwrite files in the destination.";
const NETWORK: &str = "This command contacts external hosts and may reveal your IP address, DNS query, target host, or network metadata.";

#[test]
fn accepted_forms_carry_their_warnings() {
    let e = env();
    for (cmd, warning, network) in [
        ("tar -xf a.tar -C out", Some(EXTRACT), "loopback"),
        ("tar xf a.tar -C out", Some(EXTRACT), "loopback"),
        (
            "tar --extract --file=a.tar --directory=out",
            Some(EXTRACT),
            "loopback",
        ),
        ("unzip a.zip -d out", Some(EXTRACT), "loopback"),
        ("tar -czf out.tgz src", None, "loopback"),
        ("zip -r out.zip src", None, "loopback"),
        ("tar -tf a.tar", None, "loopback"),
        ("unzip -l a.zip", None, "loopback"),
        ("ping -c 3 example.com", Some(NETWORK), "ping"),
        ("curl -I https://example.com", Some(NETWORK), "http"),
        ("dig example.com", Some(NETWORK), "dns"),
        ("nslookup example.com", Some(NETWORK), "dns"),
    ] {
        let v = check(&e, cmd);
        assert_eq!(v["decision"], "allow", "{cmd}: {v}");
        if let Some(w) = warning {
            assert!(
                v["warnings"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == w)),
                "{cmd}: warnings {}",
                v["warnings"]
            );
        }
        assert_eq!(v["sandbox"]["network"], network, "{cmd}");
    }
    let v = check(&e, "tar -czf out.tgz src");
    assert!(
        v["warnings"]
            .to_string()
            .contains("overwrite or update an existing archive"),
        "{v}"
    );
}

#[test]
fn every_seed_rejection_is_refused_with_the_accepted_form() {
    let e = env();
    let cases: &[(&str, &str)] = &[
        // Extraction.
        ("tar -xf a.tar", "-C DEST"),
        ("unzip a.zip", "-d DEST"),
        ("tar -xf a.tar -C /", "system or home root"),
        ("tar -xf a.tar -C /usr", "system or home root"),
        ("unzip a.zip -d /etc", "system or home root"),
        ("tar -xf a.tar -C out; ls", "on their own"),
        ("tar -xf https://x.example/a.tar -C out", "URL"),
        ("tar -xf '*.tar' -C out", "wildcard"),
        ("unzip -o a.zip -d out", "overwrite"),
        (
            "tar --overwrite -xf a.tar -C out",
            "tar -xf ARCHIVE -C DEST",
        ),
        (
            "tar --transform=s/a/b/ -xf a.tar -C out",
            "path-transforming",
        ),
        (
            "tar --strip-components=1 -xf a.tar -C out",
            "path-transforming",
        ),
        ("tar -xPf a.tar -C out", "path-transforming"),
        ("tar --absolute-names -xf a.tar -C out", "path-transforming"),
        ("tar -xvf a.tar -C out", "no other options"),
        // Creation.
        ("tar -czf", "archive path"),
        ("tar -czf out.tgz", "at least one source"),
        ("zip -r out.zip", "at least one source"),
        ("tar -czf out.tgz /", "too broad"),
        ("tar -czf out.tgz .", "too broad"),
        ("tar -czf out.tgz ..", "too broad"),
        ("zip -r out.zip ~", "too broad"),
        ("tar -czf out.tgz /etc", "system or home root"),
        ("tar -czf out.tgz 'src/*'", "wildcard"),
        ("tar -czf out.tgz src | cat", "on their own"),
        ("tar -czf https://x.example/o.tgz src", "URL"),
        ("zip -r -e out.zip src", "encryption"),
        ("zip -r -P pw out.zip src", "encryption"),
        ("zip -r -s 1m out.zip src", "split"),
        ("tar -uzf out.tgz src", "tar -czf ARCHIVE SOURCES"),
        ("zip -r -u out.zip src", "update"),
        (
            "tar --remove-files -czf out.tgz src",
            "tar -czf ARCHIVE SOURCES",
        ),
        ("zip -r -m out.zip src", "move"),
        ("tar -czf backup-host:o.tgz src", "remote archive"),
        ("tar -czvf out.tgz src", "tar -czf ARCHIVE SOURCES"),
        // Network.
        ("ping example.com", "count"),
        ("ping -c 11 example.com", "1 to 10"),
        ("ping -c 1000 example.com", "1 to 10"),
        ("ping -f -c 3 example.com", "flood"),
        ("ping -c 3 https://example.com", "URLs are refused"),
        ("curl https://example.com", "HEAD"),
        ("curl -X POST -I https://example.com", "methods"),
        ("curl -I -X PUT https://example.com", "methods"),
        ("curl -I --data x=1 https://example.com", "bodies"),
        ("curl -I -H 'X-A: 1' https://example.com", "headers"),
        ("curl -I -u user:pw https://example.com", "credentials"),
        ("curl -I -b session=1 https://example.com", "cookies"),
        ("curl -I -o page.html https://example.com", "output files"),
        ("curl -I -O https://example.com/f", "output files"),
        ("curl -I file:///etc/passwd", "file:"),
        ("dig +short example.com", "lookup flags"),
        ("dig @1.1.1.1 example.com", "servers"),
        ("dig -x 1.2.3.4", "lookup flags"),
        ("nslookup -type=mx example.com", "lookup flags"),
        ("curl -I https://example.com | head", "on their own"),
        ("dig example.com > out.txt", "on their own"),
    ];
    for (cmd, needle) in cases {
        let v = check(&e, cmd);
        assert_eq!(v["decision"], "deny", "{cmd}: {v}");
        let reasons = v["reasons"].to_string();
        assert!(
            reasons.contains(needle),
            "{cmd}: reasons {reasons} lack `{needle}`"
        );
    }
    // Other network tools are denied, not "unknown".
    for cmd in [
        "nc -l 4444",
        "nmap example.com",
        "wget https://example.com",
        "ssh host",
        "scp a host:b",
        "telnet host",
        "ftp host",
        "socat - TCP:h:1",
    ] {
        let v = check(&e, cmd);
        assert_eq!(v["decision"], "deny", "{cmd}: {v}");
    }
}

#[test]
fn archive_forms_really_run() {
    let e = env();
    std::fs::create_dir_all(e.cwd.join("src")).expect("mkdir");
    std::fs::write(e.cwd.join("src/a.txt"), "hello\n").expect("write");
    let out = safe_exec(&e, &["-c", "tar -czf out.tgz src"]);
    assert!(
        out.status.success(),
        "create: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = safe_exec(&e, &["-c", "mkdir -p dest"]);
    assert!(out.status.success());
    let out = safe_exec(&e, &["--", "tar", "-xf", "out.tgz", "-C", "dest"]);
    assert!(
        out.status.success(),
        "extract: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(e.cwd.join("dest/src/a.txt")).expect("extracted"),
        "hello\n"
    );
    // Outside the writable roots: refused before anything runs.
    let out = safe_exec(
        &e,
        &[
            "--",
            "tar",
            "-xf",
            "out.tgz",
            "-C",
            e.home.to_str().expect("utf8"),
        ],
    );
    assert_eq!(out.status.code(), Some(126));
    assert!(!e.home.join("src").exists());
}

/// Serves HEAD requests on 127.0.0.1:80, counting connections.
fn http_server() -> Option<(Arc<AtomicUsize>, std::thread::JoinHandle<()>)> {
    let listener = match TcpListener::bind("127.0.0.1:80") {
        Ok(l) => l,
        Err(err) => {
            skip_or_fail(&format!(
                "cannot listen on 127.0.0.1:80 ({err}); curl -I end-to-end needs it (the form opens only ports 80 and 443)"
            ));
            return None;
        }
    };
    listener.set_nonblocking(false).ok();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let t = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        listener.set_nonblocking(true).ok();
        while std::time::Instant::now() < deadline {
            match listener.accept() {
                Ok((mut s, _)) => {
                    h.fetch_add(1, Ordering::SeqCst);
                    s.set_nonblocking(false).ok();
                    let mut buf = [0u8; 1024];
                    let _ = s.read(&mut buf);
                    let _ = s.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Test: safe-exec\r\n\r\n",
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    Some((hits, t))
}

#[test]
fn curl_head_gets_only_http_and_nothing_else_gets_network() {
    need_tool("curl", "curl");
    let e = env();
    let Some((hits, _t)) = http_server() else {
        return;
    };
    // Positive control: the accepted form reaches the local server.
    let out = safe_exec(
        &e,
        &["--", "curl", "-sS", "-I", "http://127.0.0.1/"]
            .iter()
            .filter(|a| **a != "-sS")
            .copied()
            .collect::<Vec<_>>(),
    );
    assert!(
        out.status.success(),
        "curl -I: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("X-Test: safe-exec"));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    // The same tool with a non-form argument on loopback: where the kernel
    // layer holds connections to loopback (the supervisor), a confined
    // loopback request is allowed and reaches the server (issue 10,
    // contract "Loopback"); where it cannot, it is refused before any
    // connection is made.
    let out = safe_exec(&e, &["--", "curl", "-s", "http://127.0.0.1/"]);
    if safe_exec::supervisor::loopback_enforced() {
        assert_ne!(
            out.status.code(),
            Some(126),
            "loopback curl refused: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            hits.load(Ordering::SeqCst),
            2,
            "loopback curl must reach the server"
        );
    } else {
        assert_eq!(out.status.code(), Some(126));
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
    let after_ok = hits.load(Ordering::SeqCst);
    // Outside loopback seed 002's forms apply unchanged: a non-form request
    // to an external address is refused (126) before anything runs.
    for url in [
        "http://192.0.2.1/",
        "https://example.com/",
        "http://127.0.0.1@example.com/",
    ] {
        let out = safe_exec(&e, &["--", "curl", url]);
        assert_eq!(out.status.code(), Some(126), "curl {url}");
    }
    // An allowed command that is not a network form gets no network beyond
    // loopback (the default profile's network = "loopback", enforced by the
    // supervisor: an external address is refused with EACCES).
    let out = safe_exec(
        &e,
        &[
            "--",
            "python3",
            "-c",
            "import socket\ntry:\n socket.create_connection(('192.0.2.1', 80), timeout=2)\n print('connected')\nexcept OSError as e:\n print('errno', e.errno)",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("errno 13"),
        "expected EACCES from the sandbox, got {text:?} / {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        after_ok,
        "no further connection may reach the server"
    );
}

#[test]
fn dig_gets_dns_only() {
    need_tool("dig", "dnsutils");
    let e = env();
    let sock = match UdpSocket::bind("127.0.0.1:53") {
        Ok(s) => s,
        Err(err) => {
            skip_or_fail(&format!("cannot listen on 127.0.0.1:53 ({err})"));
            return;
        }
    };
    sock.set_read_timeout(Some(Duration::from_secs(10))).ok();
    // dig reads default options from ~/.digrc: point it at the local responder.
    std::fs::write(e.home.join(".digrc"), "@127.0.0.1 +tries=1 +time=3\n").expect("digrc");
    let answered = Arc::new(AtomicUsize::new(0));
    let a = answered.clone();
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            a.fetch_add(1, Ordering::SeqCst);
            let q = &buf[12..n];
            let Some(end) = q.iter().position(|b| *b == 0).map(|p| p + 5) else {
                continue;
            };
            let mut resp = Vec::new();
            resp.extend_from_slice(&buf[..2]);
            resp.extend_from_slice(&[0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0]);
            resp.extend_from_slice(&q[..end]);
            resp.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 9]);
            let _ = sock.send_to(&resp, from);
        }
    });
    let out = safe_exec(&e, &["--", "dig", "example.test"]);
    assert!(
        out.status.success(),
        "dig: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("127.0.0.9"));
    let n = answered.load(Ordering::SeqCst);
    assert!(n >= 1);
    let out = safe_exec(&e, &["--", "dig", "+short", "example.test"]);
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(answered.load(Ordering::SeqCst), n);
    drop(t);
}

#[test]
fn forms_are_judged_on_the_whole_string() {
    let e = env();
    for cmd in [
        "curl -I https://example.com && ls",
        "ls; ping -c 1 example.com",
        "tar -tf a.tar > list.txt",
        "echo $(dig example.com)",
        "bash -c 'curl -I https://example.com'",
    ] {
        let v = check(&e, cmd);
        assert_eq!(v["decision"], "deny", "{cmd}: {v}");
    }
    let _ = Path::new("/");
}
