//! Confirmation: an `ask` is put to a person on the controlling terminal at
//! the level the verdict needs (`y`, `yes`, or the program's name). With no
//! terminal, or no answer in time, it is a refusal.

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::Duration;

use crate::policy::{Confirmation, Verdict};

/// The answer to a confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The person confirmed.
    Yes,
    /// The person declined or typed something else.
    No,
    /// No terminal to ask on.
    NoTerminal,
    /// Nobody answered in time.
    Timeout,
}

/// What the person must type for a level.
pub fn expected(level: Confirmation, program: &str) -> String {
    match level {
        Confirmation::Standard => "y".into(),
        Confirmation::Strong => "yes".into(),
        Confirmation::VeryStrong => program.to_string(),
    }
}

/// Asks on `/dev/tty`. `program` is what very strong confirmation requires.
pub fn ask(verdict: &Verdict, command: &str, program: &str, timeout: Duration) -> Answer {
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Answer::NoTerminal;
    };
    let level = verdict.confirmation.unwrap_or(Confirmation::Standard);
    let want = expected(level, program);
    let mut prompt = format!("safe-exec: `{command}` needs confirmation:\n");
    for r in &verdict.reasons {
        prompt.push_str(&format!("  - {}\n", r.line()));
    }
    for w in &verdict.warnings {
        prompt.push_str(&format!("  ! {w}\n"));
    }
    prompt.push_str(&format!(
        "Type `{want}` to run it (anything else refuses, {}s): ",
        timeout.as_secs()
    ));
    if tty.write_all(prompt.as_bytes()).is_err() {
        return Answer::NoTerminal;
    }
    let _ = tty.flush();
    let mut pfd = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
    let ms = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
    let ready = poll(&mut pfd, ms).unwrap_or(0);
    if ready <= 0 {
        let _ = tty.write_all(b"\n");
        return Answer::Timeout;
    }
    let mut buf = [0u8; 256];
    let n = tty.read(&mut buf).unwrap_or(0);
    let line = String::from_utf8_lossy(&buf[..n]).trim().to_string();
    if line == want {
        Answer::Yes
    } else {
        Answer::No
    }
}
