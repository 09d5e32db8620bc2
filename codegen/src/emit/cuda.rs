//! The CUDA C++ dialect (NVRTC): `extern "C" __global__`, `threadIdx`,
//! `__syncthreads`, `make_float4`, `__ldg`, texture objects read with
//! `tex1Dfetch`, masks as `__constant__` symbols.

use super::dialect::Dialect;
use crate::vocab::Language;
use hipacc_core::ir::Type;

pub(crate) struct Cuda;

impl Dialect for Cuda {
    fn language(&self) -> Language {
        Language::Cuda
    }

    // typedef unsigned char uchar; … (the OpenCL names, so the printer is shared)
    fn prelude(&self, _fp64: bool) -> String {
        "typedef unsigned char uchar;\ntypedef unsigned short ushort;\ntypedef unsigned int uint;\n"
            .to_string()
    }

    // extern "C" __global__ void
    fn kernel_decl(&self) -> &'static str {
        "extern \"C\" __global__ void"
    }

    // static __device__ __forceinline__
    fn func_decl(&self) -> &'static str {
        "static __device__ __forceinline__"
    }

    // const float* __restrict__
    fn global_ptr(&self, cty: &str, read_only: bool) -> String {
        if read_only {
            format!("const {cty}* __restrict__")
        } else {
            format!("{cty}*")
        }
    }

    // float*
    fn local_ptr(&self, cty: &str) -> String {
        format!("{cty}*")
    }

    // __shared__ float name[len];
    fn local_array(&self, cty: &str, name: &str, len: u32) -> String {
        format!("__shared__ {cty} {name}[{len}];")
    }

    // __syncthreads();
    fn barrier(&self) -> &'static str {
        "__syncthreads();"
    }

    // (int)threadIdx.x
    fn local_id(&self, dim: u32) -> &'static str {
        if dim == 0 {
            "(int)threadIdx.x"
        } else {
            "(int)threadIdx.y"
        }
    }

    // (int)blockIdx.x
    fn group_id(&self, dim: u32) -> &'static str {
        if dim == 0 {
            "(int)blockIdx.x"
        } else {
            "(int)blockIdx.y"
        }
    }

    // make_float4(a, b, c, d)
    fn make_vec(&self, cty4: &str, l: &[String; 4]) -> String {
        format!("make_{cty4}({}, {}, {}, {})", l[0], l[1], l[2], l[3])
    }

    // __ldg(&ptr[index])
    fn load(&self, ptr: &str, index: &str, read_only: bool) -> String {
        if read_only {
            format!("__ldg(&{ptr}[{index}])")
        } else {
            format!("{ptr}[{index}]")
        }
    }

    // cudaTextureObject_t
    fn image_param(&self) -> &'static str {
        "cudaTextureObject_t"
    }

    // tex1Dfetch<float>(tex, index)
    fn image_read(&self, pixel: Type, img: &str, _x: &str, _y: &str, index: &str) -> String {
        let t = super::c_types::c_type(pixel);
        format!("tex1Dfetch<{t}>({img}, {index})")
    }

    // __constant__ float name[n] = { … };
    fn const_array(&self, cty: &str, name: &str, values: &[String]) -> String {
        format!(
            "__constant__ {cty} {name}[{}] = {{ {} }};\n",
            values.len(),
            values.join(", ")
        )
    }

    fn mask_param(&self, _cty: &str) -> Option<String> {
        None
    }

    // __constant__ float name[n];
    fn mask_symbol(&self, cty: &str, name: &str, len: usize) -> String {
        format!("__constant__ {cty} {name}[{len}];\n")
    }

    // __int_as_float(0x7fc00000)
    fn f32_from_bits(&self, bits: u32) -> String {
        format!("__int_as_float(0x{bits:08x})")
    }

    // __longlong_as_double(0x7ff8000000000000ll)
    fn f64_from_bits(&self, bits: u64) -> String {
        format!("__longlong_as_double(0x{bits:016x}ll)")
    }

    // atomicAdd(ptr, value);
    fn atomic_add_u32(&self, ptr: &str, value: &str) -> Option<String> {
        Some(format!("atomicAdd({ptr}, {value});"))
    }
}
