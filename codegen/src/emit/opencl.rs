//! The OpenCL C 1.2 dialect: address-space qualifiers, `get_local_id`,
//! `barrier`, `(float4)(…)` vectors, `image2d_t` with a nearest sampler.

use super::dialect::Dialect;
use crate::vocab::Language;
use hipacc_core::ir::{ScalarType, Type};

pub(crate) struct OpenCl;

impl Dialect for OpenCl {
    fn language(&self) -> Language {
        Language::OpenCl
    }

    // #pragma OPENCL EXTENSION cl_khr_fp64 : enable
    // __constant sampler_t hipacc_sampler = CLK_NORMALIZED_COORDS_FALSE | …;
    fn prelude(&self, fp64: bool) -> String {
        let mut s = String::new();
        if fp64 {
            s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
        }
        s.push_str(
            "__constant sampler_t hipacc_sampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;\n",
        );
        s
    }

    // __kernel void
    fn kernel_decl(&self) -> &'static str {
        "__kernel void"
    }

    // static inline
    fn func_decl(&self) -> &'static str {
        "static inline"
    }

    // __global const float* restrict
    fn global_ptr(&self, cty: &str, read_only: bool) -> String {
        if read_only {
            format!("__global const {cty}* restrict")
        } else {
            format!("__global {cty}*")
        }
    }

    // __local float*
    fn local_ptr(&self, cty: &str) -> String {
        format!("__local {cty}*")
    }

    // __local float name[len];
    fn local_array(&self, cty: &str, name: &str, len: u32) -> String {
        format!("__local {cty} {name}[{len}];")
    }

    // barrier(CLK_LOCAL_MEM_FENCE);
    fn barrier(&self) -> &'static str {
        "barrier(CLK_LOCAL_MEM_FENCE);"
    }

    // get_local_id(0)
    fn local_id(&self, dim: u32) -> &'static str {
        if dim == 0 {
            "(int)get_local_id(0)"
        } else {
            "(int)get_local_id(1)"
        }
    }

    // get_group_id(0)
    fn group_id(&self, dim: u32) -> &'static str {
        if dim == 0 {
            "(int)get_group_id(0)"
        } else {
            "(int)get_group_id(1)"
        }
    }

    // (float4)(a, b, c, d)
    fn make_vec(&self, cty4: &str, l: &[String; 4]) -> String {
        format!("(({cty4})({}, {}, {}, {}))", l[0], l[1], l[2], l[3])
    }

    // ptr[index]
    fn load(&self, ptr: &str, index: &str, _read_only: bool) -> String {
        format!("{ptr}[{index}]")
    }

    // __read_only image2d_t
    fn image_param(&self) -> &'static str {
        "__read_only image2d_t"
    }

    // read_imagef(img, hipacc_sampler, (int2)(x, y)).x
    fn image_read(&self, pixel: Type, img: &str, x: &str, y: &str, _index: &str) -> String {
        let coord = format!("(int2)({x}, {y})");
        let (f, conv) = match pixel.scalar {
            ScalarType::F32 => ("read_imagef", None),
            ScalarType::I32 => ("read_imagei", None),
            ScalarType::U32 => ("read_imageui", None),
            ScalarType::U8 => ("read_imageui", Some("uchar")),
            ScalarType::U16 => ("read_imageui", Some("ushort")),
            ScalarType::Bool | ScalarType::F64 => {
                unreachable!("bug: texture memory validated against the pixel type")
            }
        };
        let call = format!("{f}({img}, hipacc_sampler, {coord})");
        match (pixel.lanes, conv) {
            (4, None) => call,
            (4, Some(t)) => format!("convert_{t}4({call})"),
            (_, None) => format!("{call}.x"),
            (_, Some(t)) => format!("({t}){call}.x"),
        }
    }

    // __constant float name[n] = { … };
    fn const_array(&self, cty: &str, name: &str, values: &[String]) -> String {
        format!(
            "__constant {cty} {name}[{}] = {{ {} }};\n",
            values.len(),
            values.join(", ")
        )
    }

    // __constant float* restrict
    fn mask_param(&self, cty: &str) -> Option<String> {
        Some(format!("__constant {cty}* restrict"))
    }

    fn mask_symbol(&self, _cty: &str, _name: &str, _len: usize) -> String {
        unreachable!("bug: OpenCL passes masks as parameters")
    }

    // as_float(0x7fc00000u)
    fn f32_from_bits(&self, bits: u32) -> String {
        format!("as_float(0x{bits:08x}u)")
    }

    // as_double(0x7ff8000000000000ul)
    fn f64_from_bits(&self, bits: u64) -> String {
        format!("as_double(0x{bits:016x}ul)")
    }

    // atomic_add(ptr, value);
    fn atomic_add_u32(&self, ptr: &str, value: &str) -> Option<String> {
        Some(format!("atomic_add({ptr}, {value});"))
    }
}
