//! Offsets of accessor and mask reads are whole pixels: `i32`.
//!
//! `#[kernel_body]` rejects offsets whose type it can see (a float literal,
//! a cast to `f32`), but the type of a kernel field or of an expression
//! built from one is known only to rustc. The compiled body therefore
//! passes every offset through [`pixel_offset`], whose bound names the rule
//! and the fix at the user's offset instead of failing inside generated
//! code.

/// A value that can be a read offset. Only `i32` is one: offsets are whole
/// pixels.
#[diagnostic::on_unimplemented(
    message = "offsets are whole pixels (`i32`), not `{Self}`",
    label = "this offset has type `{Self}`",
    note = "use an interpolating accessor to read between pixels: \
            `Accessor::new(&image).with_interpolation(Interpolation::Linear)`",
    note = "a whole-pixel offset of another type is converted with `as i32`"
)]
pub trait PixelOffset {
    /// The offset in pixels.
    fn pixels(self) -> i32;
}

impl PixelOffset for i32 {
    fn pixels(self) -> i32 {
        self
    }
}

/// The offset `offset` in pixels; only `i32` offsets compile.
///
/// ```
/// use hipacc_core::cpu::pixel_offset;
/// assert_eq!(pixel_offset(-2), -2);
/// ```
///
/// ```compile_fail
/// use hipacc_core::cpu::pixel_offset;
/// pixel_offset(0.5_f32); // offsets are whole pixels
/// ```
#[inline(always)]
pub fn pixel_offset(offset: impl PixelOffset) -> i32 {
    offset.pixels()
}
