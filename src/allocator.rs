//! The binary's global allocator: mimalloc for every block under
//! [`LARGE`], the kernel's own pages for the larger ones (on Linux).
//!
//! A large block is mapped when allocated and unmapped when freed, so its
//! memory goes back to the system at once rather than when mimalloc next
//! purges, and a page is resident only once written: a zeroed buffer of
//! the largest possible output costs only what is written into it. A
//! growing large `Vec` is moved by remapping its pages (`mremap`), never
//! held in two copies. mimalloc keeps every smaller block, where a replay
//! spends its allocations (BENCHMARKS.md, "Import, preflight and replay").
//!
//! Which of the two holds a block is decided by its layout alone, so
//! `dealloc` and `realloc` always find it where `alloc` put it.

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc;

/// The size from which a block is mapped on its own (1 MiB).
pub const LARGE: usize = 1 << 20;

/// The alignment every mapping has at least (the smallest page size).
const PAGE: usize = 4096;

/// mimalloc for blocks under [`LARGE`], mappings of their own for the
/// rest (Linux; elsewhere mimalloc for every block).
pub struct Hybrid;

/// Whether a block of this layout is mapped on its own.
#[inline]
fn mapped(size: usize, align: usize) -> bool {
    cfg!(target_os = "linux") && size >= LARGE && align <= PAGE
}

// SAFETY: every block is allocated, freed and resized by the allocator its
// layout selects (`mapped`), the same for a block's whole life: `realloc`
// moves a block whose new size selects the other one by allocating there,
// copying and freeing the old block. Mappings are page-aligned, which
// covers every alignment `mapped` accepts, and anonymous mappings are
// zeroed by the kernel.
unsafe impl GlobalAlloc for Hybrid {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout.size(), layout.align()) {
            os::map(layout.size())
        } else {
            // SAFETY: the caller's layout contract, passed on.
            unsafe { MiMalloc.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout.size(), layout.align()) {
            // A new anonymous mapping reads as zeros: nothing to write.
            os::map(layout.size())
        } else {
            // SAFETY: as in `alloc`.
            unsafe { MiMalloc.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(layout.size(), layout.align()) {
            // SAFETY: `ptr` was mapped by `alloc` (or `realloc`) with this size.
            unsafe { os::unmap(ptr, layout.size()) }
        } else {
            // SAFETY: `ptr` came from mimalloc with this layout.
            unsafe { MiMalloc.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let was = mapped(layout.size(), layout.align());
        let will = mapped(new_size, layout.align());
        match (was, will) {
            // SAFETY: `ptr` came from mimalloc with `layout`.
            (false, false) => unsafe { MiMalloc.realloc(ptr, layout, new_size) },
            // SAFETY: `ptr` is a mapping of `layout.size()` bytes.
            (true, true) => unsafe { os::remap(ptr, layout.size(), new_size) },
            _ => {
                // SAFETY: the caller guarantees `new_size`, rounded up to
                // the alignment, does not overflow `isize`.
                let new_layout =
                    unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                // SAFETY: a non-zero size (one of the two is at least LARGE
                // and the caller's `new_size` is non-zero).
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks hold at least the smaller size and
                    // do not overlap (`new` is a live block of its own).
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod os {
    use std::ptr::null_mut;

    /// A new private anonymous mapping of `size` bytes (zeros, resident
    /// only once written), or null when the system refuses.
    #[inline]
    pub(super) fn map(size: usize) -> *mut u8 {
        // SAFETY: no address is passed in; the kernel picks a fresh range.
        let p = unsafe {
            libc::mmap(
                null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            null_mut()
        } else {
            p.cast()
        }
    }

    /// Unmap a mapping `map` or `remap` made of `size` bytes.
    ///
    /// # Safety
    /// `ptr` is such a mapping, and nothing uses it afterwards.
    #[inline]
    pub(super) unsafe fn unmap(ptr: *mut u8, size: usize) {
        // SAFETY: the caller's contract; the kernel rounds `size` up to
        // whole pages as `mmap` did. It fails only for a range that is not
        // a mapping, which the contract excludes.
        unsafe { libc::munmap(ptr.cast(), size) };
    }

    /// Resize a mapping of `old` bytes to `new`, moving its pages (not
    /// their bytes) when it cannot grow in place; null, the mapping left
    /// as it was, when the system refuses.
    ///
    /// # Safety
    /// `ptr` is a mapping `map` or `remap` made of `old` bytes.
    #[inline]
    pub(super) unsafe fn remap(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
        // SAFETY: the caller's contract; MREMAP_MAYMOVE lets the kernel
        // pick the new range, so no other mapping is touched.
        let p = unsafe { libc::mremap(ptr.cast(), old, new, libc::MREMAP_MAYMOVE) };
        if p == libc::MAP_FAILED {
            null_mut()
        } else {
            p.cast()
        }
    }
}

/// Elsewhere no block is mapped (`mapped` is false): never called.
#[cfg(not(target_os = "linux"))]
mod os {
    pub(super) fn map(_size: usize) -> *mut u8 {
        std::ptr::null_mut()
    }

    pub(super) unsafe fn unmap(_ptr: *mut u8, _size: usize) {}

    pub(super) unsafe fn remap(_ptr: *mut u8, _old: usize, _new: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fill `n` bytes at `p` with a pattern that depends on each offset.
    fn fill(p: *mut u8, n: usize) {
        for i in 0..n {
            // SAFETY: the caller's block holds `n` bytes.
            unsafe { *p.add(i) = (i % 251) as u8 };
        }
    }

    /// Whether the first `n` bytes at `p` are the pattern `fill` wrote.
    fn holds(p: *const u8, n: usize) -> bool {
        // SAFETY: the caller's block holds at least `n` bytes.
        (0..n).all(|i| unsafe { *p.add(i) } == (i % 251) as u8)
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn small_and_large_blocks_are_routed_by_their_layout() {
        assert!(!mapped(LARGE - 1, 8));
        assert!(!mapped(LARGE, PAGE * 2));
        assert_eq!(mapped(LARGE, 8), cfg!(target_os = "linux"));
        assert_eq!(mapped(LARGE, PAGE), cfg!(target_os = "linux"));
    }

    /// A block keeps its bytes and alignment through every resize: within
    /// mimalloc, within a mapping, and across the threshold both ways.
    #[test]
    fn a_block_keeps_its_bytes_as_it_grows_and_shrinks_across_the_threshold() {
        for align in [1, 8, 64, PAGE, PAGE * 4] {
            let sizes = [
                100,
                LARGE - 1,
                LARGE,
                3 * LARGE + 5,
                40 * LARGE,
                LARGE,
                700,
                64,
            ];
            let mut size = sizes[0];
            // SAFETY: a non-zero size and a power-of-two alignment.
            let mut p = unsafe { Hybrid.alloc(layout(size, align)) };
            assert!(!p.is_null());
            fill(p, size);
            for &next in &sizes[1..] {
                // SAFETY: `p` is live with this layout; `next` is non-zero.
                p = unsafe { Hybrid.realloc(p, layout(size, align), next) };
                assert!(!p.is_null(), "{size} -> {next}, align {align}");
                assert_eq!(p as usize % align, 0, "{size} -> {next}, align {align}");
                assert!(holds(p, size.min(next)), "{size} -> {next}, align {align}");
                fill(p, next);
                size = next;
            }
            // SAFETY: `p` is live with this layout.
            unsafe { Hybrid.dealloc(p, layout(size, align)) };
        }
    }

    /// A zeroed block reads as zeros whether mapped or not, even where a
    /// block of the same size was written and freed just before.
    #[test]
    fn a_zeroed_block_is_zeros_on_either_side_of_the_threshold() {
        for size in [64, LARGE - 1, LARGE, 5 * LARGE + 3] {
            for align in [8, 32, PAGE] {
                let l = layout(size, align);
                // SAFETY: a non-zero size; each block is freed with its layout.
                unsafe {
                    let dirty = Hybrid.alloc(l);
                    assert!(!dirty.is_null());
                    fill(dirty, size);
                    Hybrid.dealloc(dirty, l);
                    let p = Hybrid.alloc_zeroed(l);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0);
                    assert!(
                        (0..size).all(|i| *p.add(i) == 0),
                        "size {size}, align {align}"
                    );
                    Hybrid.dealloc(p, l);
                }
            }
        }
    }

    /// As the global allocator does it: a `Vec` grown past the threshold
    /// one push at a time, then shrunk to fit, keeps every element.
    #[test]
    fn a_vec_grown_and_shrunk_through_the_allocator_keeps_its_elements() {
        let n = 3 * LARGE / 8;
        let mut v: Vec<u64> = Vec::new();
        let mut p = std::ptr::null_mut::<u8>();
        let mut cap = 0usize;
        for i in 0..n as u64 {
            if v.len() == cap {
                let new_cap = (cap * 2).max(4);
                // SAFETY: the block is live with the old layout (or none yet);
                // the new size is non-zero.
                p = unsafe {
                    if cap == 0 {
                        Hybrid.alloc(layout(new_cap * 8, 8))
                    } else {
                        Hybrid.realloc(p, layout(cap * 8, 8), new_cap * 8)
                    }
                };
                assert!(!p.is_null());
                cap = new_cap;
            }
            // SAFETY: `p` holds `cap` u64s and `v.len() < cap`.
            unsafe { p.cast::<u64>().add(v.len()).write(i) };
            v.push(i);
        }
        // SAFETY: `p` is live with this layout.
        p = unsafe { Hybrid.realloc(p, layout(cap * 8, 8), n * 8) };
        // SAFETY: `p` holds `n` u64s.
        let got = unsafe { std::slice::from_raw_parts(p.cast::<u64>(), n) };
        assert_eq!(got, &v[..]);
        // SAFETY: `p` is live with this layout.
        unsafe { Hybrid.dealloc(p, layout(n * 8, 8)) };
    }
}
