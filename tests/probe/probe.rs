//! probe: performs ONE named operation and exits with the resulting errno
//! (0 on success), so sandbox tests can assert the exact errno. Usage errors
//! exit 200. Built by the test suite with plain `rustc` (std only; libc
//! functions are declared here), see tests/common/sandbox.rs.
#![allow(non_camel_case_types)]

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

extern "C" {
    fn open(path: *const c_char, flags: c_int, ...) -> c_int;
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn close(fd: c_int) -> c_int;
    fn unlink(path: *const c_char) -> c_int;
    fn rename(a: *const c_char, b: *const c_char) -> c_int;
    fn link(a: *const c_char, b: *const c_char) -> c_int;
    fn symlink(a: *const c_char, b: *const c_char) -> c_int;
    fn truncate(path: *const c_char, len: i64) -> c_int;
    fn chmod(path: *const c_char, mode: c_uint) -> c_int;
    fn mkdir(path: *const c_char, mode: c_uint) -> c_int;
    fn mknod(path: *const c_char, mode: c_uint, dev: u64) -> c_int;
    fn socket(domain: c_int, ty: c_int, proto: c_int) -> c_int;
    fn socketpair(domain: c_int, ty: c_int, proto: c_int, sv: *mut c_int) -> c_int;
    fn connect(fd: c_int, addr: *const c_void, len: u32) -> c_int;
    fn bind(fd: c_int, addr: *const c_void, len: u32) -> c_int;
    fn sendto(fd: c_int, buf: *const c_void, n: usize, fl: c_int, a: *const c_void, l: u32) -> isize;
    fn send(fd: c_int, buf: *const c_void, n: usize, fl: c_int) -> isize;
    fn recv(fd: c_int, buf: *mut c_void, n: usize, fl: c_int) -> isize;
    fn kill(pid: c_int, sig: c_int) -> c_int;
    fn getppid() -> c_int;
    fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
    fn ioctl(fd: c_int, req: c_ulong, ...) -> c_int;
    fn syscall(n: c_long, ...) -> c_long;
    fn prctl(op: c_int, ...) -> c_int;
    fn _exit(code: c_int) -> !;
}

mod kernel_ops;

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const CLONE: i64 = 56;
    pub const BPF: i64 = 321;
    pub const PERF_EVENT_OPEN: i64 = 298;
    pub const KEYCTL: i64 = 250;
    pub const GETPID: i64 = 39;
    pub const UNSHARE: i64 = 272;
    pub const PTRACE: i64 = 101;
    pub const PROCESS_VM_READV: i64 = 310;
    pub const MOUNT: i64 = 165;
    pub const SETNS: i64 = 308;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const CLONE: i64 = 220;
    pub const BPF: i64 = 280;
    pub const PERF_EVENT_OPEN: i64 = 241;
    pub const KEYCTL: i64 = 219;
    pub const GETPID: i64 = 172;
    pub const UNSHARE: i64 = 97;
    pub const PTRACE: i64 = 117;
    pub const PROCESS_VM_READV: i64 = 270;
    pub const MOUNT: i64 = 40;
    pub const SETNS: i64 = 268;
}
const CLONE3: i64 = 435;
const IO_URING_SETUP: i64 = 425;

const O_RDONLY: c_int = 0;
const O_WRONLY: c_int = 1;
const O_CREAT: c_int = 0o100;
const O_EXCL: c_int = 0o200;
const SIGCHLD: c_int = 17;
const CLONE_NEWUSER: u64 = 0x1000_0000;

#[repr(C)]
struct sockaddr_in {
    family: u16,
    port: u16,
    addr: [u8; 4],
    zero: [u8; 8],
}

#[repr(C)]
struct sockaddr_un {
    family: u16,
    path: [u8; 108],
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(255)
}

fn done(rc: i64) -> ! {
    let code = if rc < 0 { errno() } else { 0 };
    std::process::exit(code)
}

fn usage(msg: &str) -> ! {
    eprintln!("probe: {msg}");
    std::process::exit(200)
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| usage("NUL in argument"))
}

fn num(s: &str) -> i64 {
    let r = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).map(|v| v as i64)
    } else {
        s.parse::<i64>().map_err(|_| u64::from_str_radix("x", 16).unwrap_err())
    };
    r.unwrap_or_else(|_| usage("bad number"))
}

fn family(s: &str) -> c_int {
    match s {
        "unix" => 1,
        "inet" => 2,
        "inet6" => 10,
        "netlink" => 16,
        "packet" => 17,
        "key" => 15,
        "alg" => 38,
        "vsock" => 40,
        other => num(other) as c_int,
    }
}

fn sock_type(s: &str) -> c_int {
    match s {
        "stream" => 1,
        "dgram" => 2,
        "raw" => 3,
        "seqpacket" => 5,
        other => num(other) as c_int,
    }
}

fn inet(host: &str, port: &str) -> sockaddr_in {
    let mut addr = [0u8; 4];
    for (i, p) in host.split('.').enumerate().take(4) {
        addr[i] = p.parse().unwrap_or_else(|_| usage("bad IPv4 address"));
    }
    sockaddr_in {
        family: 2,
        port: (num(port) as u16).to_be(),
        addr,
        zero: [0; 8],
    }
}

fn unix_addr(path: &[u8]) -> (sockaddr_un, u32) {
    let mut a = sockaddr_un {
        family: 1,
        path: [0; 108],
    };
    if path.len() >= 108 {
        usage("unix socket path too long");
    }
    a.path[..path.len()].copy_from_slice(path);
    (a, (2 + path.len()) as u32 + 1)
}

/// `hex:2f746d70` -> `/tmp`: lets a test hand the probe a path that the
/// policy layer cannot read, so that the kernel is what answers.
fn unhex(s: String) -> String {
    let Some(h) = s.strip_prefix("hex:") else { return s };
    let bytes: Vec<u8> = (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2).unwrap_or("zz"), 16).unwrap_or_else(|_| usage("bad hex")))
        .collect();
    String::from_utf8(bytes).unwrap_or_else(|_| usage("hex is not UTF-8"))
}

#[repr(C)]
struct sock_filter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct sock_fprog {
    len: u16,
    filter: *const sock_filter,
}

/// Installs a seccomp filter that makes the three Landlock syscalls fail
/// with ENOSYS (a kernel without Landlock, as far as the program can tell).
unsafe fn hide_landlock() {
    const LD_W_ABS: u16 = 0x20;
    const JGE_K: u16 = 0x35;
    const RET_K: u16 = 0x06;
    const ALLOW: u32 = 0x7fff_0000;
    const ERRNO_ENOSYS: u32 = 0x0005_0000 | 38;
    let f = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    // landlock_create_ruleset = 444, add_rule = 445, restrict_self = 446 on
    // every architecture (unified numbering).
    let prog = [
        f(LD_W_ABS, 0, 0, 0),
        f(JGE_K, 0, 2, 444),
        f(JGE_K, 1, 0, 447),
        f(RET_K, 0, 0, ERRNO_ENOSYS),
        f(RET_K, 0, 0, ALLOW),
    ];
    let fprog = sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() };
    if prctl(38, 1u64, 0u64, 0u64, 0u64) != 0 || prctl(22, 2u64, &fprog as *const sock_fprog) != 0 {
        std::process::exit(errno())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).map(unhex).collect();
    let a = |i: usize| -> &str { args.get(i).map(String::as_str).unwrap_or_else(|| usage("missing argument")) };
    let op = a(0).to_string();
    unsafe {
        match op.as_str() {
            "open-read" => {
                let fd = open(c(a(1)).as_ptr(), O_RDONLY);
                if fd < 0 {
                    done(-1)
                }
                let mut b = [0u8; 64];
                done(read(fd, b.as_mut_ptr().cast(), b.len()) as i64)
            }
            "read-print" => {
                let data = std::fs::read(a(1)).unwrap_or_else(|e| std::process::exit(e.raw_os_error().unwrap_or(255)));
                println!("{}", String::from_utf8_lossy(&data));
                done(0)
            }
            "open-write" => {
                let fd = open(c(a(1)).as_ptr(), O_WRONLY);
                if fd < 0 {
                    done(-1)
                }
                done(write(fd, b"x".as_ptr().cast(), 1) as i64)
            }
            "create" => done(open(c(a(1)).as_ptr(), O_WRONLY | O_CREAT | O_EXCL, 0o644) as i64),
            "unlink" => done(unlink(c(a(1)).as_ptr()) as i64),
            "rename" => done(rename(c(a(1)).as_ptr(), c(a(2)).as_ptr()) as i64),
            "link" => done(link(c(a(1)).as_ptr(), c(a(2)).as_ptr()) as i64),
            "symlink" => done(symlink(c(a(1)).as_ptr(), c(a(2)).as_ptr()) as i64),
            "symlink-write" => {
                // symlink-write LINK TARGET: make LINK -> TARGET, write through it.
                if symlink(c(a(2)).as_ptr(), c(a(1)).as_ptr()) < 0 {
                    done(-1)
                }
                let fd = open(c(a(1)).as_ptr(), O_WRONLY | O_CREAT, 0o644);
                if fd < 0 {
                    done(-1)
                }
                done(write(fd, b"x".as_ptr().cast(), 1) as i64)
            }
            "truncate" => done(truncate(c(a(1)).as_ptr(), 0) as i64),
            "chmod" => done(chmod(c(a(1)).as_ptr(), num(a(2)) as c_uint) as i64),
            "mkdir" => done(mkdir(c(a(1)).as_ptr(), 0o755) as i64),
            "mkfifo" => done(mknod(c(a(1)).as_ptr(), 0o010644, 0) as i64),
            "mknod-char" => done(mknod(c(a(1)).as_ptr(), 0o020644, (1 << 8) | 3) as i64),
            "socket" => {
                let proto = args.get(3).map(|p| num(p) as c_int).unwrap_or(0);
                done(socket(family(a(1)), sock_type(a(2)), proto) as i64)
            }
            "socketpair" => {
                let mut sv = [0; 2];
                if socketpair(1, 1, 0, sv.as_mut_ptr()) < 0 {
                    done(-1)
                }
                // round trip a byte, as an asyncio wakeup would
                if send(sv[0], b"x".as_ptr().cast(), 1, 0) != 1 {
                    done(-1)
                }
                let mut b = [0u8; 1];
                done(recv(sv[1], b.as_mut_ptr().cast(), 1, 0) as i64)
            }
            "socketpair-inet" => {
                let mut sv = [0; 2];
                done(socketpair(2, 1, 0, sv.as_mut_ptr()) as i64)
            }
            "connect-unix" | "connect-abstract" => {
                let fd = socket(1, 1, 0);
                if fd < 0 {
                    done(-1)
                }
                let mut path = a(1).as_bytes().to_vec();
                if op == "connect-abstract" {
                    path.insert(0, 0);
                }
                let (addr, mut len) = unix_addr(&path);
                if op == "connect-abstract" {
                    len -= 1; // abstract names are not NUL-terminated
                }
                done(connect(fd, (&addr as *const sockaddr_un).cast(), len) as i64)
            }
            "connect-tcp" | "connect-mptcp" => {
                let proto = if op == "connect-mptcp" { 262 } else { 0 };
                let fd = socket(2, 1, proto);
                if fd < 0 {
                    done(-1)
                }
                let addr = inet(a(1), a(2));
                done(connect(fd, (&addr as *const sockaddr_in).cast(), 16) as i64)
            }
            "udp-send" => {
                let fd = socket(2, 2, 0);
                if fd < 0 {
                    done(-1)
                }
                let addr = inet(a(1), a(2));
                done(sendto(fd, b"exfil".as_ptr().cast(), 5, 0, (&addr as *const sockaddr_in).cast(), 16) as i64)
            }
            "bind-tcp" => {
                let fd = socket(2, 1, 0);
                if fd < 0 {
                    done(-1)
                }
                let addr = inet("127.0.0.1", a(1));
                done(bind(fd, (&addr as *const sockaddr_in).cast(), 16) as i64)
            }
            "inherited-fd" => {
                let fd = num(a(1)) as c_int;
                done(write(fd, b"x".as_ptr().cast(), 1) as i64)
            }
            "ptrace" => {
                // PTRACE_ATTACH, then detach if it worked
                let pid = num(a(1));
                let rc = syscall(nr::PTRACE, 16i64, pid, 0i64, 0i64);
                if rc == 0 {
                    waitpid(pid as c_int, std::ptr::null_mut(), 0x4000_0000);
                    syscall(nr::PTRACE, 17i64, pid, 0i64, 0i64);
                }
                done(rc)
            }
            "process_vm_readv" => {
                let mut buf = [0u8; 8];
                let local = [buf.as_mut_ptr() as usize, 8usize];
                // Read 8 bytes at a known-mapped address of the target: use
                // the address given, or our own buffer's (same binary layout).
                let addr = args.get(2).map(|s| num(s) as usize).unwrap_or(local[0]);
                let remote = [addr, 8usize];
                let pid = if a(1) == "self" { syscall(nr::GETPID) } else { num(a(1)) };
                done(syscall(nr::PROCESS_VM_READV, pid, local.as_ptr(), 1i64, remote.as_ptr(), 1i64, 0i64))
            }
            "kill" => {
                let sig = args.get(2).map(|s| num(s) as c_int).unwrap_or(15);
                done(kill(num(a(1)) as c_int, sig) as i64)
            }
            "unshare" => done(syscall(nr::UNSHARE, num(a(1)))),
            "setns" => done(syscall(nr::SETNS, -1i64, 0i64)),
            "clone-newuser" | "clone-plain" => {
                let flags = if op == "clone-newuser" { CLONE_NEWUSER } else { 0 } | SIGCHLD as u64;
                let rc = syscall(nr::CLONE, flags as i64, 0i64, 0i64, 0i64, 0i64);
                if rc == 0 {
                    _exit(0)
                }
                if rc > 0 {
                    waitpid(rc as c_int, std::ptr::null_mut(), 0);
                }
                done(rc)
            }
            "clone3" => {
                let mut args3 = [0u64; 11];
                args3[4] = SIGCHLD as u64; // exit_signal
                let rc = syscall(CLONE3, args3.as_ptr(), 88usize);
                if rc == 0 {
                    _exit(0)
                }
                if rc > 0 {
                    waitpid(rc as c_int, std::ptr::null_mut(), 0);
                }
                done(rc)
            }
            "fork" => {
                // libc fork (uses clone, or clone3 on newer glibc): must work
                let rc = syscall(nr::CLONE, SIGCHLD as i64, 0i64, 0i64, 0i64, 0i64);
                if rc == 0 {
                    _exit(0)
                }
                done(rc)
            }
            "bpf" => done(syscall(nr::BPF, 0i64, 0i64, 0i64)),
            "perf_event_open" => {
                let attr = [0u8; 128];
                done(syscall(nr::PERF_EVENT_OPEN, attr.as_ptr(), 0i64, -1i64, -1i64, 0i64))
            }
            "io_uring_setup" => {
                let params = [0u8; 120];
                done(syscall(IO_URING_SETUP, 1i64, params.as_ptr()))
            }
            "keyctl" => done(syscall(nr::KEYCTL, 0i64, -3i64, 0i64)),
            "ioctl" => {
                // ioctl FD CMD: e.g. 0x5412 (TIOCSTI), 0xffffffff00005412
                let ch = b'x';
                done(ioctl(num(a(1)) as c_int, num(a(2)) as c_ulong, &ch as *const u8) as i64)
            }
            #[cfg(target_arch = "x86_64")]
            "int80-getpid" => {
                // i386 getpid (20) through the 32-bit entry point.
                let mut ret: i64 = 20;
                std::arch::asm!("int 0x80", inout("rax") ret);
                done(if ret < 0 { -1 } else { 0 })
            }
            "x32-getpid" => done(syscall(nr::GETPID | 0x4000_0000)),
            "mount" => done(syscall(nr::MOUNT, c("none").as_ptr(), c(a(1)).as_ptr(), c("tmpfs").as_ptr(), 0i64, 0i64)),
            "getppid-environ" => {
                let p = format!("/proc/{}/environ", getppid());
                let fd = open(c(&p).as_ptr(), O_RDONLY);
                if fd < 0 {
                    done(-1)
                }
                let mut b = [0u8; 64];
                done(read(fd, b.as_mut_ptr().cast(), b.len()) as i64)
            }
            "no-landlock-exec" => {
                // no-landlock-exec PROGRAM ARG...: exec PROGRAM with Landlock hidden.
                hide_landlock();
                let err = std::os::unix::process::CommandExt::exec(std::process::Command::new(a(1)).args(&args[2..]));
                std::process::exit(err.raw_os_error().unwrap_or(255))
            }
            "print-nnp" => {
                println!("{}", prctl(39, 0u64, 0u64, 0u64, 0u64));
                done(0)
            }
            "print-env" => {
                for (k, v) in std::env::vars() {
                    println!("{k}={v}");
                }
                done(0)
            }
            "print-fds" => {
                let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
                    .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                    .unwrap_or_default();
                fds.sort();
                println!("{}", fds.join(" "));
                done(0)
            }
            "exec" => {
                let p = c(a(1));
                let argv = [p.as_ptr(), std::ptr::null()];
                extern "C" {
                    fn execv(p: *const c_char, argv: *const *const c_char) -> c_int;
                }
                done(execv(p.as_ptr(), argv.as_ptr()) as i64)
            }
            _ => {
                if let Some(rc) = kernel_ops::run(&op, &args[1..]) {
                    std::process::exit(rc)
                }
                let _ = close(-1);
                usage(&format!("unknown operation {op}"))
            }
        }
    }
}
