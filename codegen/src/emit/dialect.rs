//! The differences between OpenCL C and CUDA C, as one small trait. The
//! shared printer (`c_common`, `kernel`, `reads`) asks the dialect for
//! qualifiers, built-ins and the spelling of vector constructors, loads and
//! image reads; everything else is common C.

use crate::vocab::Language;
use hipacc_core::ir::Type;

/// One C dialect.
pub(crate) trait Dialect: Sync {
    /// Which language this is.
    fn language(&self) -> Language;
    /// Text placed once at the top of a program (typedefs, pragmas, sampler).
    fn prelude(&self, fp64: bool) -> String;
    /// The qualifiers and return type of a kernel entry point.
    fn kernel_decl(&self) -> &'static str;
    /// The qualifiers of a device helper function.
    fn func_decl(&self) -> &'static str;
    /// A pointer to global memory, `const` (and read-only path) if `read_only`.
    fn global_ptr(&self, cty: &str, read_only: bool) -> String;
    /// A pointer into shared (local) memory.
    fn local_ptr(&self, cty: &str) -> String;
    /// A shared (local) array declared in the kernel.
    fn local_array(&self, cty: &str, name: &str, len: u32) -> String;
    /// A block-wide barrier statement.
    fn barrier(&self) -> &'static str;
    /// Thread index in the block along `dim` (0 = x, 1 = y).
    fn local_id(&self, dim: u32) -> &'static str;
    /// Block index along `dim`.
    fn group_id(&self, dim: u32) -> &'static str;
    /// A 4-lane vector from four lane expressions.
    fn make_vec(&self, cty4: &str, lanes: &[String; 4]) -> String;
    /// A load `ptr[index]`, through the read-only cache if `read_only`.
    fn load(&self, ptr: &str, index: &str, read_only: bool) -> String;
    /// The parameter type of an accessor bound as an image / texture.
    fn image_param(&self) -> &'static str;
    /// Reading pixel `(x, y)` (or linear `index`) of an image / texture.
    fn image_read(&self, pixel: Type, img: &str, x: &str, y: &str, index: &str) -> String;
    /// A file-scope constant array with an initialiser.
    fn const_array(&self, cty: &str, name: &str, values: &[String]) -> String;
    /// The parameter type of a mask in constant memory (OpenCL), or `None`
    /// when masks in constant memory are module symbols (CUDA).
    fn mask_param(&self, cty: &str) -> Option<String>;
    /// The declaration of a mask symbol in constant memory (CUDA).
    fn mask_symbol(&self, cty: &str, name: &str, len: usize) -> String;
    /// An `f32` from its bit pattern (for NaN and infinities).
    fn f32_from_bits(&self, bits: u32) -> String;
    /// An `f64` from its bit pattern.
    fn f64_from_bits(&self, bits: u64) -> String;
    /// An atomic `*ptr += value` on a 32-bit unsigned integer in global or
    /// local memory, as a statement; `None` when the dialect has no such
    /// atomic (global operators then run on the host).
    fn atomic_add_u32(&self, _ptr: &str, _value: &str) -> Option<String> {
        None
    }
}
