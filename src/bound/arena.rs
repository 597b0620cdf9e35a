//! The first mebibyte of the heap: a bump allocator in `.bss` under
//! [`super::Counting`]. A start of `safe-exec check` or `hook` makes about
//! a thousand small allocations and exits; glibc's malloc and free cost
//! ~200k instructions of the ~800k such a start ran. Here an allocation is
//! an atomic add, a growth of the last block in place, and a free gives
//! the block back only when it is the last one handed out (a temporary
//! string or buffer dropped before the next allocation, the common case);
//! other freed blocks are not reused. Allocations that do not fit (large
//! or very aligned ones, or all of them once the arena is used up) go to
//! the system allocator as before; blocks are told apart by address. The
//! arena is never returned, so it bounds what is not reused to 1 MiB; the
//! live-bytes accounting of [`super::Counting`] is unchanged (it charges
//! before asking here).
//!
//! Each page of `.bss` costs a page fault the first time it is written
//! (~0.95 µs in this VM, the kernel's zeroing included); a run touches
//! ~100 of them. The arena asks the kernel for its pages 64 KiB ahead of
//! the bump instead (`MADV_POPULATE_WRITE`, Linux 5.14; ~0.44 µs a page, one
//! system call per 16 pages), and does nothing more where that fails.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Bytes in the arena.
const SIZE: usize = 1 << 20;
/// Larger requests go to the system allocator (a big buffer would use the
/// arena up for everything after it).
const LARGEST: usize = 64 * 1024;
/// Alignment of the arena itself; a request aligned more goes to the system.
const ALIGN: usize = 4096;
/// Pages are populated this far ahead of the bump (a multiple of `ALIGN`).
const CHUNK: usize = 64 * 1024;

#[repr(C, align(4096))]
struct Bytes(UnsafeCell<[u8; SIZE]>);

// SAFETY: the bytes are handed out in disjoint blocks (an atomic bump of
// `STATE`); each block is used only through the pointer given for it.
unsafe impl Sync for Bytes {}

static BYTES: Bytes = Bytes(UnsafeCell::new([0; SIZE]));
/// The bump's state, one word so that handing out a block is one atomic
/// operation (two `lock cmpxchg` per allocation were most of its cost):
/// the low half is the offset of the first byte not handed out (a block
/// given back moves it down), the high half the highest offset ever handed
/// out (a block below it may hold old bytes). Both are at most `SIZE`.
static STATE: AtomicU64 = AtomicU64::new(0);

/// The offset of the first byte not handed out, and the highest offset
/// ever handed out, of a [`STATE`] word.
fn unpack(state: u64) -> (usize, usize) {
    ((state & 0xffff_ffff) as usize, (state >> 32) as usize)
}

/// The [`STATE`] word of `next` and `high` (both at most `SIZE`).
fn pack(next: usize, high: usize) -> u64 {
    ((high as u64) << 32) | next as u64
}
/// Offset up to which the pages were asked for (`populate`); `usize::MAX`
/// once the kernel refused (too old), so that it is not asked again.
static POPULATED: AtomicUsize = AtomicUsize::new(0);

fn base() -> usize {
    BYTES.0.get() as usize
}

/// Whether `ptr` is an arena block.
fn owns(ptr: *mut u8) -> bool {
    let p = ptr as usize;
    p >= base() && p < base() + SIZE
}

/// A block for `layout`, or `None`, and how many of its first bytes may
/// hold old contents (a block given back and handed out again); the rest
/// was never handed out, so it is still the zeroes of `.bss`.
fn bump(layout: Layout) -> Option<(*mut u8, usize)> {
    if layout.size() > LARGEST || layout.align() > ALIGN {
        return None;
    }
    let mut state = STATE.load(Ordering::Relaxed);
    loop {
        let (cur, high) = unpack(state);
        // `base()` is ALIGN-aligned, so aligning the offset aligns the address.
        let start = cur.checked_add(layout.align() - 1)? & !(layout.align() - 1);
        let end = start.checked_add(layout.size())?;
        if end > SIZE {
            return None;
        }
        // Acquire: a block given back by another thread (its `Release`
        // below) is handed out here only after that thread's writes to it.
        match STATE.compare_exchange_weak(
            state,
            pack(end, high.max(end)),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => {
                if end > POPULATED.load(Ordering::Relaxed) {
                    populate(end);
                }
                let dirty = high.saturating_sub(start).min(layout.size());
                // SAFETY: `start + size <= SIZE`: inside the arena.
                return Some((unsafe { (BYTES.0.get() as *mut u8).add(start) }, dirty));
            }
            Err(now) => state = now,
        }
    }
}

/// Asks the kernel for the arena's pages up to the `CHUNK` boundary after
/// `end` (one thread asks for each range; a thread that writes a page
/// before it is populated only takes the page fault it would have taken).
fn populate(end: usize) {
    let mut cur = POPULATED.load(Ordering::Relaxed);
    while end > cur {
        let target = end.div_ceil(CHUNK).saturating_mul(CHUNK).min(SIZE);
        match POPULATED.compare_exchange(cur, target, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => {
                let r = match std::ptr::NonNull::new(
                    // SAFETY: `cur <= SIZE`: inside the arena or one past it.
                    unsafe { (BYTES.0.get() as *mut u8).add(cur) }.cast(),
                ) {
                    // SAFETY: `[cur, target)` is inside the arena (`target
                    // <= SIZE`) and `cur` is a multiple of `CHUNK`, so
                    // page-aligned (the arena is `ALIGN`-aligned).
                    // Populating changes no byte: the pages are the zeroes
                    // they would be at first touch, and a page already
                    // written is left as it is.
                    Some(at) => unsafe {
                        nix::sys::mman::madvise(
                            at,
                            target - cur,
                            nix::sys::mman::MmapAdvise::MADV_POPULATE_WRITE,
                        )
                    },
                    None => Err(nix::errno::Errno::EINVAL),
                };
                if r.is_err() {
                    // Linux before 5.14, or no memory to populate with:
                    // the pages fault in as they are written.
                    POPULATED.store(usize::MAX, Ordering::Relaxed);
                }
                return;
            }
            Err(now) => cur = now,
        }
    }
}

/// Gives the block at `offset` of `size` bytes back when it is the last
/// one handed out.
fn give_back(offset: usize, size: usize) {
    // Release: see `bump`.
    let mut state = STATE.load(Ordering::Relaxed);
    loop {
        let (next, high) = unpack(state);
        if next != offset + size {
            return;
        }
        match STATE.compare_exchange_weak(
            state,
            pack(offset, high),
            Ordering::Release,
            Ordering::Relaxed,
        ) {
            Ok(_) => return,
            Err(now) => state = now,
        }
    }
}

/// Moves the bump from `end` to `new_end` (the last block grows in place),
/// when the last block handed out still ends at `end`.
fn grow_last(end: usize, new_end: usize) -> bool {
    let mut state = STATE.load(Ordering::Relaxed);
    loop {
        let (next, high) = unpack(state);
        if next != end {
            return false;
        }
        match STATE.compare_exchange_weak(
            state,
            pack(new_end, high.max(new_end)),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(now) => state = now,
        }
    }
}

/// The system allocator with the arena in front.
pub struct Arena;

// SAFETY: arena blocks are disjoint, in bounds and aligned as asked (see
// `bump`); every other pointer comes from and goes back to `System`.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match bump(layout) {
            Some((p, _)) => p,
            // SAFETY: the caller's layout contract.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match bump(layout) {
            Some((p, dirty)) => {
                // SAFETY: `p` holds `layout.size() >= dirty` bytes. The rest
                // was never handed out: still the zeroes of `.bss`.
                unsafe { std::ptr::write_bytes(p, 0, dirty) };
                p
            }
            // SAFETY: the caller's layout contract.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if owns(ptr) {
            give_back(ptr as usize - base(), layout.size());
        } else {
            // SAFETY: not an arena block, so `System` gave it.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !owns(ptr) {
            // SAFETY: not an arena block, so `System` gave it.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        let offset = ptr as usize - base();
        let end = offset + layout.size();
        if new_size <= layout.size() {
            // The last block's tail is given back.
            give_back(offset + new_size, layout.size() - new_size);
            return ptr;
        }
        // The last block grows in place when the arena has the room.
        if new_size <= LARGEST && offset + new_size <= SIZE && grow_last(end, offset + new_size) {
            if offset + new_size > POPULATED.load(Ordering::Relaxed) {
                populate(offset + new_size);
            }
            return ptr;
        }
        // SAFETY: `new_size` is non-zero and, rounded to the alignment, does
        // not overflow (the caller's contract for realloc).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as `alloc`.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks hold at least `layout.size()` bytes and are
            // distinct: the new one is System's, or an arena block from
            // the bump on, which is past the live block `ptr`.
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size()) };
            if !owns(new) {
                // Moved to the system allocator (past `LARGEST`): the old
                // block is given back if it is still the last one.
                give_back(offset, layout.size());
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_disjoint_zeroed_and_grow() {
        let a = Arena;
        let mut blocks = Vec::new();
        for (size, align) in [
            (1, 1),
            (3, 2),
            (24, 8),
            (100, 16),
            (7, 64),
            (4096, 4096),
            (5, 8),
        ] {
            let l = Layout::from_size_align(size, align).expect("layout");
            // SAFETY: a non-zero layout.
            let p = unsafe { a.alloc_zeroed(l) };
            assert!(!p.is_null());
            assert_eq!(p as usize % align, 0, "{size}/{align}");
            // SAFETY: `p` holds `size` bytes.
            let s = unsafe { std::slice::from_raw_parts_mut(p, size) };
            assert!(s.iter().all(|b| *b == 0));
            s.fill(0xa5);
            blocks.push((p as usize, size, l));
        }
        let mut sorted = blocks.clone();
        sorted.sort_by_key(|b| b.0);
        for w in sorted.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlap: {w:?}");
        }
        // Growing keeps the contents, in place or moved.
        let (p, size, l) = blocks[2];
        let next_before = unpack(STATE.load(Ordering::Relaxed)).0;
        // SAFETY: `p` was allocated with `l`.
        let q = unsafe { a.realloc(p as *mut u8, l, 200_000) };
        assert!(!q.is_null());
        // SAFETY: `q` holds 200,000 bytes, the first `size` copied.
        let s = unsafe { std::slice::from_raw_parts(q, size) };
        assert!(s.iter().all(|b| *b == 0xa5));
        // Large requests come from the system and go back there; the old
        // block, not the last one, stays where it is.
        assert!(!owns(q), "200 kB is larger than an arena block");
        assert_eq!(unpack(STATE.load(Ordering::Relaxed)).0, next_before);
        // SAFETY: `q` was allocated with this size and alignment.
        unsafe { a.dealloc(q, Layout::from_size_align(200_000, 8).expect("layout")) };
        // Freeing an arena block that is not the last one changes nothing.
        let (p, _, l) = blocks[0];
        // SAFETY: `p` was allocated with `l`.
        unsafe { a.dealloc(p as *mut u8, l) };
        let next = unpack(STATE.load(Ordering::Relaxed)).0;

        // The last block given back is handed out again; zeroed when asked.
        // (One test: the other tests of this binary do not use the arena.)
        let l = Layout::from_size_align(300, 8).expect("layout");
        // SAFETY: a non-zero layout.
        let p = unsafe { a.alloc(l) };
        assert!(owns(p));
        // SAFETY: `p` holds 300 bytes.
        unsafe { std::ptr::write_bytes(p, 0x5a, 300) };
        // SAFETY: `p` was allocated with `l`.
        unsafe { a.dealloc(p, l) };
        assert_eq!(
            unpack(STATE.load(Ordering::Relaxed)).0,
            next.next_multiple_of(8)
        );
        // SAFETY: a non-zero layout.
        let q = unsafe { a.alloc_zeroed(Layout::from_size_align(200, 8).expect("layout")) };
        assert_eq!(q, p, "the block given back is reused");
        // SAFETY: `q` holds 200 bytes.
        let qs = unsafe { std::slice::from_raw_parts(q, 200) };
        assert!(qs.iter().all(|b| *b == 0));
        // A bigger zeroed block over the old bytes and fresh ones: all zero.
        // SAFETY: `q` was allocated with this layout.
        unsafe { a.dealloc(q, Layout::from_size_align(200, 8).expect("layout")) };
        let l2 = Layout::from_size_align(5000, 8).expect("layout");
        // SAFETY: a non-zero layout.
        let r = unsafe { a.alloc_zeroed(l2) };
        assert_eq!(r, p);
        // SAFETY: `r` holds 5,000 bytes.
        let rs = unsafe { std::slice::from_raw_parts_mut(r, 5000) };
        assert!(rs.iter().all(|b| *b == 0));
        // Shrinking the last block gives its tail back; growing it again
        // stays in place.
        rs.fill(7);
        // SAFETY: `r` was allocated with `l2`; 100 is non-zero.
        let s = unsafe { a.realloc(r, l2, 100) };
        assert_eq!(s, r);
        assert_eq!(
            unpack(STATE.load(Ordering::Relaxed)).0,
            r as usize - base() + 100
        );
        // SAFETY: `s` holds 100 bytes, allocated with this layout.
        let t = unsafe { a.realloc(s, Layout::from_size_align(100, 8).expect("layout"), 9000) };
        assert_eq!(t, s);
        // SAFETY: `t` holds 9,000 bytes, the first 100 kept.
        let ts = unsafe { std::slice::from_raw_parts(t, 100) };
        assert!(ts.iter().all(|b| *b == 7));
        // The last block moved to the system allocator is given back.
        // SAFETY: `t` holds 9,000 bytes, allocated with this layout.
        let u = unsafe {
            a.realloc(
                t,
                Layout::from_size_align(9000, 8).expect("layout"),
                100_000,
            )
        };
        assert!(!owns(u));
        assert_eq!(unpack(STATE.load(Ordering::Relaxed)).0, t as usize - base());
        // SAFETY: `u` holds 100,000 bytes, the first 100 kept.
        let us = unsafe { std::slice::from_raw_parts(u, 100) };
        assert!(us.iter().all(|b| *b == 7));
        // SAFETY: `u` was allocated with this layout.
        unsafe { a.dealloc(u, Layout::from_size_align(100_000, 8).expect("layout")) };
        // Every page handed out so far was asked for ahead of the bump
        // (unless the kernel refused).
        let populated = POPULATED.load(Ordering::Relaxed);
        assert!(populated == usize::MAX || populated >= unpack(STATE.load(Ordering::Relaxed)).1);
        assert!(populated == usize::MAX || populated.is_multiple_of(CHUNK) || populated == SIZE);
    }
}
