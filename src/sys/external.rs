//! Runs one external program of the layers (a validator or a hook): JSON on
//! its standard input, a time limit, and a cap on what it may print. Every
//! way it can go wrong is a distinct [`Failure`], so that callers can fail
//! closed (validator, blocking hooks) or open (notifications) and name the
//! program in the message.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::os as sys;

/// Largest answer a hook or validator may print (stdout and stderr each).
pub const OUTPUT_CAP: usize = 64 * 1024;

/// What the program printed and how it ended, when it ended by itself.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Exit code (0..=255).
    pub code: i32,
    /// Standard output (at most the cap).
    pub stdout: String,
    /// Standard error (at most the cap), used as a reason on exit 2.
    pub stderr: String,
}

/// Why an external program gave no usable answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Failure {
    /// The argv is empty.
    #[error("no command configured (give `command = [\"/path/to/program\", ...]`)")]
    NoCommand,
    /// It could not be started.
    #[error("could not start `{program}`: {err} (check the path and that it is executable)")]
    Spawn {
        /// argv[0]
        program: String,
        /// OS error text.
        err: String,
    },
    /// It was killed by a signal (a crash).
    #[error("`{program}` crashed (killed by signal {signal})")]
    Signal {
        /// argv[0]
        program: String,
        /// Signal number.
        signal: i32,
    },
    /// It ran past its time limit and was killed.
    #[error(
        "`{program}` did not answer within {ms} ms and was killed (raise `timeout_ms` or make it faster)"
    )]
    Timeout {
        /// argv[0]
        program: String,
        /// The limit.
        ms: u64,
    },
    /// It printed more than the cap and was killed.
    #[error(
        "`{program}` printed more than {cap} bytes and was killed (answers must be small JSON objects)"
    )]
    TooMuchOutput {
        /// argv[0]
        program: String,
        /// The cap.
        cap: usize,
    },
}

/// Runs `argv` with `input` on stdin, waiting at most `timeout`; output
/// beyond `cap` bytes (stdout or stderr) kills it. The program runs in its
/// own process group, which is killed as a whole on timeout or overflow.
pub fn run(
    argv: &[String],
    input: &[u8],
    timeout: Duration,
    cap: usize,
) -> Result<Finished, Failure> {
    let program = argv.first().ok_or(Failure::NoCommand)?.clone();
    let mut cmd = Command::new(&program);
    cmd.args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the closure makes only async-signal-safe system calls
    // (setrlimit, prctl) between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            super::rlimit::restore_limits();
            // If safe-exec dies (the hook's deciding process killed by its
            // timer), the program dies with it instead of lingering.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| Failure::Spawn {
        program: program.clone(),
        err: e.to_string(),
    })?;
    let overflow = Arc::new(AtomicBool::new(false));
    let out = child
        .stdout
        .take()
        .map(|s| reader(s, cap, overflow.clone()));
    let err = child
        .stderr
        .take()
        .map(|s| reader(s, cap, overflow.clone()));
    if let Some(mut stdin) = child.stdin.take() {
        let data = input.to_vec();
        // A program that does not read its input must not block us: write
        // from a thread and ignore EPIPE.
        thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
    }
    let deadline = Instant::now() + timeout;
    let pgid = child.id();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => {}
            Err(e) => {
                sys::kill_group(pgid);
                let _ = child.wait();
                return Err(Failure::Spawn {
                    program,
                    err: e.to_string(),
                });
            }
        }
        if overflow.load(Ordering::Relaxed) {
            sys::kill_group(pgid);
            let _ = child.wait();
            return Err(Failure::TooMuchOutput { program, cap });
        }
        if Instant::now() >= deadline {
            sys::kill_group(pgid);
            let _ = child.wait();
            return Err(Failure::Timeout {
                program,
                ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            });
        }
        thread::sleep(Duration::from_millis(2));
    };
    // The program is gone; whatever it left in its group goes too, so the
    // pipes reach end-of-file and the readers finish.
    sys::kill_group(pgid);
    let collect = |h: Option<thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let stdout = collect(out);
    let stderr = collect(err);
    if overflow.load(Ordering::Relaxed) {
        return Err(Failure::TooMuchOutput { program, cap });
    }
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Ok(Finished {
            code,
            stdout,
            stderr,
        }),
        (None, Some(signal)) => Err(Failure::Signal { program, signal }),
        (None, None) => Err(Failure::Signal { program, signal: 0 }),
    }
}

/// Reads a pipe to its end, keeping at most `cap` bytes; sets `overflow`
/// when there is more.
fn reader<R: Read + Send + 'static>(
    mut r: R,
    cap: usize,
    overflow: Arc<AtomicBool>,
) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    if buf.len() + n > cap {
                        overflow.store(true, Ordering::Relaxed);
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        buf
    })
}
