//! The address-space limit the hook lowers while it decides, and gives back
//! to the programs deciding starts (validators, hooks).

use std::sync::atomic::{AtomicU64, Ordering};

/// The address-space soft limit before the hook lowered it (`u64::MAX`:
/// not lowered).
pub(crate) static SAVED_AS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Gives a program started while deciding (a validator, a hook) the
/// address-space limit safe-exec had before it lowered its own. Called in
/// `pre_exec`: one async-signal-safe system call.
pub fn restore_limits() {
    let saved = SAVED_AS.load(Ordering::Relaxed);
    if saved == u64::MAX {
        return;
    }
    let l = libc::rlimit {
        rlim_cur: saved as libc::rlim_t,
        rlim_max: libc::RLIM_INFINITY,
    };
    let mut cur = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on stack values.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_AS, &mut cur) == 0 {
            let l = libc::rlimit {
                rlim_cur: l.rlim_cur.min(cur.rlim_max),
                rlim_max: cur.rlim_max,
            };
            libc::setrlimit(libc::RLIMIT_AS, &l);
        }
    }
}
