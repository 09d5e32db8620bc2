//! The positions of a local operator's window, in row-major order.

use hipacc_core::ir::{Kernel, Window};

/// Offsets `(dx, dy)` a window visits, row-major: every position of a mask,
/// the enabled positions of a domain.
pub(crate) fn positions(kernel: &Kernel, window: Window) -> Vec<(i32, i32)> {
    let (w, h, enabled): (u32, u32, Option<&[bool]>) = match window {
        Window::Mask(i) => match kernel.masks.get(i) {
            Some(m) => (m.width, m.height, None),
            None => return Vec::new(),
        },
        Window::Domain(i) => match kernel.domains.get(i) {
            Some(d) => (d.width, d.height, Some(&d.enabled)),
            None => return Vec::new(),
        },
    };
    let (hw, hh) = ((w / 2) as i32, (h / 2) as i32);
    let mut out = Vec::new();
    for row in 0..h {
        for col in 0..w {
            let on =
                enabled.is_none_or(|e| e.get((row * w + col) as usize).copied().unwrap_or(false));
            if on {
                out.push((col as i32 - hw, row as i32 - hh));
            }
        }
    }
    out
}
