//! Probe operations for the kernel-escape tests (tests/sandbox_kernel_escapes.rs):
//! calls that reach processes, terminals and global kernel objects. Each
//! returns the errno (0 on success). Payloads are harmless: limits set to
//! the value they already have, a read-only clock query, a segment or
//! terminal the test created.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_long, c_ulong, c_void};

extern "C" {
    fn syscall(n: c_long, ...) -> c_long;
    fn open(path: *const c_char, flags: c_int, ...) -> c_int;
    fn ioctl(fd: c_int, req: c_ulong, ...) -> c_int;
    fn setsid() -> c_int;
    fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    fn getppid() -> c_int;
    fn getpgrp() -> c_int;
    fn signal(sig: c_int, handler: usize) -> usize;
    fn shmget(key: c_int, size: usize, flags: c_int) -> c_int;
    fn shmat(id: c_int, addr: *const c_void, flags: c_int) -> *mut c_void;
    fn gethostname(name: *mut c_char, len: usize) -> c_int;
    fn sethostname(name: *const c_char, len: usize) -> c_int;
}

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const PRLIMIT64: i64 = 302;
    pub const SETPRIORITY: i64 = 141;
    pub const SCHED_SETAFFINITY: i64 = 203;
    pub const SCHED_SETSCHEDULER: i64 = 144;
    pub const IOPRIO_SET: i64 = 251;
    pub const FANOTIFY_INIT: i64 = 300;
    pub const SETTIMEOFDAY: i64 = 164;
    pub const ADJTIMEX: i64 = 159;
    pub const SYSLOG: i64 = 103;
    pub const CHROOT: i64 = 161;
    pub const ACCT: i64 = 163;
    pub const MQ_OPEN: i64 = 240;
    pub const VHANGUP: i64 = 153;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const PRLIMIT64: i64 = 261;
    pub const SETPRIORITY: i64 = 140;
    pub const SCHED_SETAFFINITY: i64 = 122;
    pub const SCHED_SETSCHEDULER: i64 = 119;
    pub const IOPRIO_SET: i64 = 30;
    pub const FANOTIFY_INIT: i64 = 262;
    pub const SETTIMEOFDAY: i64 = 170;
    pub const ADJTIMEX: i64 = 171;
    pub const SYSLOG: i64 = 116;
    pub const CHROOT: i64 = 51;
    pub const ACCT: i64 = 89;
    pub const MQ_OPEN: i64 = 180;
    pub const VHANGUP: i64 = 58;
}

const RLIMIT_NOFILE: i64 = 7;
const TIOCSCTTY: c_ulong = 0x540E;
const O_RDWR: c_int = 2;
const O_NOCTTY: c_int = 0o400;
const O_CREAT: c_int = 0o100;
const O_CLOEXEC: c_int = 0o2000000;
const TIOCSPTLCK: c_ulong = 0x4004_5431;
const TIOCGPTN: c_ulong = 0x8004_5430;
const TIOCGPTPEER: c_ulong = 0x5441;
const F_GETFD: c_int = 1;
const FD_CLOEXEC: c_int = 1;

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(255)
}

fn rc(r: i64) -> i32 {
    if r < 0 { errno() } else { 0 }
}

fn num(s: Option<&String>) -> i64 {
    let s = s.map(String::as_str).unwrap_or("0");
    if let Some(h) = s.strip_prefix("0x") {
        i64::from_str_radix(h, 16).unwrap_or(0)
    } else {
        s.parse().unwrap_or(0)
    }
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

/// Runs `op` if it is one of ours; `None` otherwise.
pub fn run(op: &str, a: &[String]) -> Option<i32> {
    let arg = |i: usize| num(a.get(i));
    // SAFETY (all below): plain syscalls on arguments we own.
    unsafe {
        Some(match op {
            // prlimit-nofile PID N: RLIMIT_NOFILE soft = hard = N on PID.
            "prlimit-nofile" => {
                let lim = [arg(1) as u64, arg(1) as u64];
                rc(syscall(
                    nr::PRLIMIT64,
                    arg(0),
                    RLIMIT_NOFILE,
                    lim.as_ptr(),
                    0usize,
                ))
            }
            // prlimit-read PID: read RLIMIT_NOFILE of PID (no new limit).
            "prlimit-read" => {
                let mut lim = [0u64; 2];
                rc(syscall(
                    nr::PRLIMIT64,
                    arg(0),
                    RLIMIT_NOFILE,
                    0usize,
                    lim.as_mut_ptr(),
                ))
            }
            "setpriority" => rc(syscall(nr::SETPRIORITY, arg(0), arg(1), arg(2))),
            // sched_setaffinity PID: pin PID to CPU 0.
            "sched_setaffinity" => {
                let mask = [1u64; 1];
                rc(syscall(
                    nr::SCHED_SETAFFINITY,
                    arg(0),
                    8usize,
                    mask.as_ptr(),
                ))
            }
            // sched_setscheduler PID: SCHED_BATCH (3), priority 0.
            "sched_setscheduler" => {
                let param = [0i32];
                rc(syscall(
                    nr::SCHED_SETSCHEDULER,
                    arg(0),
                    3i64,
                    param.as_ptr(),
                ))
            }
            // ioprio_set WHICH WHO: best-effort class (2), level 4.
            "ioprio_set" => rc(syscall(nr::IOPRIO_SET, arg(0), arg(1), (2i64 << 13) | 4)),
            // shm-write KEY TEXT: attach the segment of KEY and write TEXT.
            "shm-write" => {
                let id = shmget(arg(0) as c_int, 0, 0);
                if id < 0 {
                    return Some(errno());
                }
                let p = shmat(id, std::ptr::null(), 0);
                if p as isize == -1 {
                    return Some(errno());
                }
                let text = a.get(1).map(String::as_bytes).unwrap_or(b"owned");
                std::ptr::copy_nonoverlapping(text.as_ptr(), p.cast::<u8>(), text.len());
                0
            }
            // shm-make KEY: create a 0600 segment for KEY holding "original".
            "shm-make" => {
                let id = shmget(arg(0) as c_int, 4096, 0o600 | 0o1000);
                if id < 0 {
                    return Some(errno());
                }
                let p = shmat(id, std::ptr::null(), 0);
                if p as isize == -1 {
                    return Some(errno());
                }
                std::ptr::copy_nonoverlapping(b"original".as_ptr(), p.cast::<u8>(), 8);
                0
            }
            // mq-open NAME: create (or open) a POSIX message queue.
            "mq-open" => {
                let name = c(a.first().map(String::as_str).unwrap_or("/probe"));
                let fd = syscall(
                    nr::MQ_OPEN,
                    name.as_ptr().add(1),
                    O_RDWR | O_CREAT,
                    0o600,
                    0usize,
                );
                rc(fd)
            }
            // fanotify_init(FAN_CLASS_NOTIF, O_RDONLY).
            "fanotify_init" => rc(syscall(nr::FANOTIFY_INIT, 0i64, 0i64)),
            // settimeofday(NULL, NULL): a permission check and nothing else.
            "settimeofday-null" => rc(syscall(nr::SETTIMEOFDAY, 0usize, 0usize)),
            // adjtimex with modes = 0: a read-only clock query.
            "adjtimex-read" => {
                let mut tx = [0u8; 208];
                rc(syscall(nr::ADJTIMEX, tx.as_mut_ptr()))
            }
            // syslog(SYSLOG_ACTION_SIZE_BUFFER): size of the kernel log.
            "syslog-size" => rc(syscall(nr::SYSLOG, 10i64, 0usize, 0i64)),
            // chroot("."): only affects the probe itself.
            "chroot-dot" => rc(syscall(nr::CHROOT, c(".").as_ptr())),
            // acct(NULL): switch accounting off (a no-op when it is off).
            "acct-null" => rc(syscall(nr::ACCT, 0usize)),
            // sethostname to the current name: no change if allowed.
            "sethostname-same" => {
                let mut buf = [0 as c_char; 256];
                if gethostname(buf.as_mut_ptr(), buf.len()) != 0 {
                    return Some(errno());
                }
                let len = buf.iter().position(|&b| b == 0).unwrap_or(0);
                rc(sethostname(buf.as_ptr(), len) as i64)
            }
            "vhangup" => rc(syscall(nr::VHANGUP)),
            // open-tty PATH: open a terminal read/write (no controlling tty).
            "open-tty" => rc(open(
                c(a.first().map(String::as_str).unwrap_or("")).as_ptr(),
                O_RDWR | O_NOCTTY,
            ) as i64),
            // ioctl-path PATH CMD ARG: open PATH and ioctl with an int argument.
            "ioctl-path" => {
                let fd = open(
                    c(a.first().map(String::as_str).unwrap_or("")).as_ptr(),
                    O_RDWR | O_NOCTTY,
                );
                if fd < 0 {
                    return Some(errno());
                }
                let v: c_int = arg(2) as c_int;
                rc(ioctl(fd, arg(1) as c_ulong, &v as *const c_int) as i64)
            }
            // own-pty [cloexec|plain] [hi]: a new pty the way glibc's openpty does it
            // (/dev/ptmx, unlock, TIOCGPTPEER); the peer must be a terminal
            // connected to the master (a byte written to the master is read
            // on the peer) and close-on-exec exactly when asked (99 if not).
            "own-pty" => {
                let m = open(c("/dev/ptmx").as_ptr(), O_RDWR | O_NOCTTY);
                if m < 0 {
                    return Some(errno());
                }
                let unlock: c_int = 0;
                if ioctl(m, TIOCSPTLCK, &unlock as *const c_int) < 0 {
                    return Some(errno());
                }
                let cloexec = a.first().map(String::as_str) == Some("cloexec");
                let flags = O_RDWR | O_NOCTTY | if cloexec { O_CLOEXEC } else { 0 };
                // "hi": the request with its high 32 bits set (the kernel
                // only looks at the low 32 bits).
                let req = if a.get(1).map(String::as_str) == Some("hi") {
                    TIOCGPTPEER | 0xFFFF_FFFF_0000_0000
                } else {
                    TIOCGPTPEER
                };
                let s = ioctl(m, req, flags as c_ulong);
                if s < 0 {
                    return Some(errno());
                }
                let fdflags = fcntl(s, F_GETFD);
                if (fdflags & FD_CLOEXEC != 0) != cloexec {
                    return Some(99);
                }
                if write(m, b"k\n".as_ptr().cast(), 2) != 2 {
                    return Some(errno());
                }
                let mut buf = [0u8; 8];
                if read(s, buf.as_mut_ptr().cast(), buf.len()) < 1 || buf[0] != b'k' {
                    return Some(98);
                }
                0
            }
            // own-pty-by-name: a new pty, its slave opened by name
            // (posix_openpt + unlockpt + ptsname + open, no TIOCGPTPEER).
            "own-pty-by-name" => {
                let m = open(c("/dev/ptmx").as_ptr(), O_RDWR | O_NOCTTY);
                if m < 0 {
                    return Some(errno());
                }
                let unlock: c_int = 0;
                if ioctl(m, TIOCSPTLCK, &unlock as *const c_int) < 0 {
                    return Some(errno());
                }
                let mut n: c_int = -1;
                if ioctl(m, TIOCGPTN, &mut n as *mut c_int) < 0 {
                    return Some(errno());
                }
                rc(open(c(&format!("/dev/pts/{n}")).as_ptr(), O_RDWR | O_NOCTTY) as i64)
            }
            // take-fg PATH|FD: ignore SIGTTOU, then make this process's group
            // the foreground of the terminal (`tcsetpgrp`): of descriptor FD
            // when the argument is a number, else of PATH opened read/write
            // (`/dev/tty`: the controlling terminal, as the red team's reader
            // did). Nothing is read. Errno of the open, else of TIOCSPGRP.
            "take-fg" => {
                let what = a.first().map(String::as_str).unwrap_or("");
                let fd = match what.parse::<c_int>() {
                    Ok(n) => n,
                    Err(_) => open(c(what).as_ptr(), O_RDWR),
                };
                if fd < 0 {
                    return Some(errno());
                }
                signal(22, 1); // SIGTTOU, SIG_IGN
                let g: c_int = getpgrp();
                rc(ioctl(fd, 0x5410, &g as *const c_int) as i64)
            }
            // steal-tty FD: new session, then TIOCSCTTY(1) on descriptor FD.
            "steal-tty" => {
                setsid();
                rc(ioctl(arg(0) as c_int, TIOCSCTTY, 1 as c_int) as i64)
            }
            // ppid-file NAME: read /proc/<ppid>/NAME.
            "ppid-file" => {
                let p = format!(
                    "/proc/{}/{}",
                    getppid(),
                    a.first().map(String::as_str).unwrap_or("environ")
                );
                match std::fs::read(&p) {
                    Ok(_) => 0,
                    Err(e) => e.raw_os_error().unwrap_or(255),
                }
            }
            // ppid-fd-list / ppid-fd-link: list /proc/<ppid>/fd, read fd/0.
            "ppid-fd-list" => match std::fs::read_dir(format!("/proc/{}/fd", getppid())) {
                Ok(_) => 0,
                Err(e) => e.raw_os_error().unwrap_or(255),
            },
            "ppid-fd-link" => match std::fs::read_link(format!("/proc/{}/fd/0", getppid())) {
                Ok(_) => 0,
                Err(e) => e.raw_os_error().unwrap_or(255),
            },
            // pid-file PID NAME: read /proc/PID/NAME.
            "pid-file" => match std::fs::read(format!(
                "/proc/{}/{}",
                arg(0),
                a.get(1).map(String::as_str).unwrap_or("environ")
            )) {
                Ok(_) => 0,
                Err(e) => e.raw_os_error().unwrap_or(255),
            },
            "print-caps" => {
                let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
                for l in s.lines().filter(|l| l.starts_with("Cap")) {
                    println!("{l}");
                }
                0
            }
            _ => return None,
        })
    }
}
