//! Small operating-system and text helpers that several stages share: a
//! leaf, using nothing else of the crate, so any layer may call it.

pub mod ancestry;
pub mod external;
pub mod hookspath;
mod mem;
pub mod os;
pub mod path;
pub mod redact;
pub mod rlimit;
pub mod start;
pub mod time;

/// Helpers shared by the unit tests.
#[cfg(test)]
pub(crate) mod testing {
    /// A xorshift64 generator from `seed` (not zero): the same sequence on
    /// every run, for tests that compare a fast path with its reference
    /// over generated inputs.
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// [`xorshift`] reduced to `0..n`.
    pub(crate) fn xorshift_below(seed: u64) -> impl FnMut(usize) -> usize {
        let mut next = xorshift(seed);
        move |n| (next() % n as u64) as usize
    }
}
