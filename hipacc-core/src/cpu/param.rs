//! Scalar parameters are the only kernel fields a body uses as values.
//!
//! `self.gain` in a body is the parameter's value; an accessor, mask or
//! domain field is not a value (its pixels are read with `self.f()` /
//! `self.f.at(dx, dy)`). The macro cannot see field types, so the compiled
//! body reads a field as a value through [`param_value`], whose bound says
//! that at the user's field instead of naming the CPU view types.

/// A kernel field type a body may use as a value: the scalar parameters.
#[diagnostic::on_unimplemented(
    message = "only scalar parameters are values in a kernel body",
    label = "an accessor, mask or domain field, not a scalar parameter",
    note = "read an accessor's or mask's pixels with `self.field()` or \
            `self.field.at(dx, dy)`; a `Domain` only selects the positions of \
            `reduce` and `iterate`"
)]
pub trait ParamValue: Copy {}

impl ParamValue for u8 {}
impl ParamValue for u16 {}
impl ParamValue for i32 {}
impl ParamValue for u32 {}
impl ParamValue for f32 {}
impl ParamValue for f64 {}

/// The value of a scalar parameter `self.name`.
///
/// ```
/// use hipacc_core::cpu::param_value;
/// assert_eq!(param_value(&0.5_f32), 0.5);
/// ```
#[inline(always)]
pub fn param_value<T: ParamValue>(field: &T) -> T {
    *field
}
