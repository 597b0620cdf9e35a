//! The first mebibyte of the heap: a bump allocator in `.bss` under
//! [`super::Counting`]. A start of `safe-exec check` or `hook` makes about
//! a thousand small allocations and exits; glibc's malloc and free cost
//! ~200k instructions of the ~800k such a start ran. Here an allocation is
//! an atomic add, a free of an arena block nothing (the block is not
//! reused), a growth of the last block in place. Allocations that do not
//! fit (large or very aligned ones, or all of them once the arena is used
//! up) go to the system allocator as before; blocks are told apart by
//! address. The arena is never returned, so it bounds what is not reused
//! to 1 MiB; the live-bytes accounting of [`super::Counting`] is unchanged
//! (it charges before asking here).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes in the arena.
const SIZE: usize = 1 << 20;
/// Larger requests go to the system allocator (a big buffer would use the
/// arena up for everything after it).
const LARGEST: usize = 64 * 1024;
/// Alignment of the arena itself; a request aligned more goes to the system.
const ALIGN: usize = 4096;

#[repr(C, align(4096))]
struct Bytes(UnsafeCell<[u8; SIZE]>);

// SAFETY: the bytes are handed out in disjoint blocks (an atomic bump of
// `NEXT`); each block is used only through the pointer given for it.
unsafe impl Sync for Bytes {}

static BYTES: Bytes = Bytes(UnsafeCell::new([0; SIZE]));
/// Offset of the first byte never handed out.
static NEXT: AtomicUsize = AtomicUsize::new(0);

fn base() -> usize {
    BYTES.0.get() as usize
}

/// Whether `ptr` is an arena block.
fn owns(ptr: *mut u8) -> bool {
    let p = ptr as usize;
    p >= base() && p < base() + SIZE
}

/// A fresh (never handed out, so zeroed) block for `layout`, or `None`.
fn bump(layout: Layout) -> Option<*mut u8> {
    if layout.size() > LARGEST || layout.align() > ALIGN {
        return None;
    }
    let mut cur = NEXT.load(Ordering::Relaxed);
    loop {
        // `base()` is ALIGN-aligned, so aligning the offset aligns the address.
        let start = cur.checked_add(layout.align() - 1)? & !(layout.align() - 1);
        let end = start.checked_add(layout.size())?;
        if end > SIZE {
            return None;
        }
        match NEXT.compare_exchange_weak(cur, end, Ordering::Relaxed, Ordering::Relaxed) {
            // SAFETY: `start + size <= SIZE`: inside the arena.
            Ok(_) => return Some(unsafe { (BYTES.0.get() as *mut u8).add(start) }),
            Err(now) => cur = now,
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
            Some(p) => p,
            // SAFETY: the caller's layout contract.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match bump(layout) {
            // Never handed out before: still the zeroes of `.bss`.
            Some(p) => p,
            // SAFETY: the caller's layout contract.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !owns(ptr) {
            // SAFETY: not an arena block, so `System` gave it.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !owns(ptr) {
            // SAFETY: not an arena block, so `System` gave it.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if new_size <= layout.size() {
            return ptr;
        }
        // The last block grows in place when the arena has the room.
        let offset = ptr as usize - base();
        let end = offset + layout.size();
        if new_size <= LARGEST
            && offset + new_size <= SIZE
            && NEXT
                .compare_exchange(end, offset + new_size, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return ptr;
        }
        // SAFETY: `new_size` is non-zero and, rounded to the alignment, does
        // not overflow (the caller's contract for realloc).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as `alloc`.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks hold at least `layout.size()` bytes and are
            // distinct (the new one was never handed out, or is System's).
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size()) };
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
        // SAFETY: `p` was allocated with `l`.
        let q = unsafe { a.realloc(p as *mut u8, l, 200_000) };
        assert!(!q.is_null());
        // SAFETY: `q` holds 200,000 bytes, the first `size` copied.
        let s = unsafe { std::slice::from_raw_parts(q, size) };
        assert!(s.iter().all(|b| *b == 0xa5));
        // Large requests come from the system and go back there.
        assert!(!owns(q), "200 kB is larger than an arena block");
        // SAFETY: `q` was allocated with this size and alignment.
        unsafe { a.dealloc(q, Layout::from_size_align(200_000, 8).expect("layout")) };
        // Freeing an arena block is allowed and changes nothing.
        let (p, _, l) = blocks[0];
        // SAFETY: `p` was allocated with `l`.
        unsafe { a.dealloc(p as *mut u8, l) };
    }
}
